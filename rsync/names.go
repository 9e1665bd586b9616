package rsync

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Hashes reads a hash attribute ("md5:… sha-256:…", any order, other
// algorithms ignored) into lower-case hex digests.
func Hashes(attr string) (md5hex, sha256hex string) {
	for _, f := range strings.Fields(attr) {
		alg, v, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(alg) {
		case "md5":
			md5hex = strings.ToLower(v)
		case "sha-256":
			sha256hex = strings.ToLower(v)
		}
	}
	return md5hex, sha256hex
}

// SafeName turns any string into a file name that is safe on every file
// system and distinct for distinct strings: every byte outside
// [A-Za-z0-9._-] percent-encoded, and a "." also when it would start the
// name, end it or follow another "." (so no "/", no "..", nothing hidden;
// percent-decoding gives the string back). A name longer than max keeps
// its first part and ends with "~" and 32 hex digits of the string's
// SHA-256 ("~" never comes out of the escaping, so a cut name cannot equal
// an uncut one).
func SafeName(s string, max int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		dot := c == '.' && i > 0 && i < len(s)-1 && s[i-1] != '.'
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || dot || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	name := b.String()
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(s))
	cut := max - 33
	for cut > 0 && name[cut-1] == '%' || cut > 1 && name[cut-2] == '%' { // never split an escape
		cut--
	}
	return name[:cut] + "~" + hex.EncodeToString(sum[:16])
}
