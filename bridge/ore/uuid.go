package ore

import (
	"crypto/sha1"
	"encoding/hex"
)

// NamespaceUUID is the package's fixed UUID namespace for its name-based Atom
// ids. It is itself UUIDv5(NameSpace_URL,
// "https://github.com/rsbridge/rsbridge/bridge/ore"); changing it changes every
// published atom:id.
const NamespaceUUID = "8d8566d8-3898-573d-9a7a-7097622ddb16"

// Namespace returns NamespaceUUID as bytes, for UUID5.
func Namespace() [16]byte {
	return [16]byte{0x8d, 0x85, 0x66, 0xd8, 0x38, 0x98, 0x57, 0x3d, 0x9a, 0x7a, 0x70, 0x97, 0x62, 0x2d, 0xdb, 0x16}
}

// UUID5 returns "urn:uuid:" and the RFC 9562 version 5 (SHA-1, name-based) UUID
// of name in namespace, in lower case.
func UUID5(namespace [16]byte, name string) string {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // variant 10
	var b [45]byte
	copy(b[:], "urn:uuid:")
	hex.Encode(b[9:17], u[0:4])
	b[17] = '-'
	hex.Encode(b[18:22], u[4:6])
	b[22] = '-'
	hex.Encode(b[23:27], u[6:8])
	b[27] = '-'
	hex.Encode(b[28:32], u[8:10])
	b[32] = '-'
	hex.Encode(b[33:45], u[10:16])
	return string(b[:])
}

// MapID is the atom:id of an item's Resource Map (the 0.2 feed): UUID5 of
// repo + "\n" + oaiIdentifier in the package namespace.
func MapID(repo, oaiIdentifier string) string {
	return UUID5(Namespace(), repo+"\n"+oaiIdentifier)
}

// EntryID is the atom:id of the 0.2 entry for aggregated resource uri of an
// item: UUID5 of oaiIdentifier + "\n" + uri, so never uri itself.
func EntryID(oaiIdentifier, uri string) string {
	return UUID5(Namespace(), oaiIdentifier+"\n"+uri)
}
