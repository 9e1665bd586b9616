package ore

import (
	"encoding/hex"
	"strings"
	"testing"
)

func TestUUID5(t *testing.T) {
	nsDNS := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	nsURL := nsDNS
	nsURL[3] = 0x11
	// RFC 9562 Appendix A.4.
	if got := UUID5(nsDNS, "www.example.com"); got != "urn:uuid:2ed6657d-e927-568b-95e1-2665a8aea6a2" {
		t.Errorf("RFC 9562 vector: %s", got)
	}
	if got := UUID5(nsURL, "https://github.com/rsbridge/rsbridge/bridge/ore"); got != "urn:uuid:"+NamespaceUUID {
		t.Errorf("NamespaceUUID is not UUIDv5(URL, package URL): %s", got)
	}
	ns := Namespace()
	if hex.EncodeToString(ns[:]) != strings.ReplaceAll(NamespaceUUID, "-", "") {
		t.Errorf("Namespace() %x does not match NamespaceUUID", ns)
	}
	// GW-ORE-02, checked against Python's uuid.uuid5.
	if got := MapID("ir-a", "oai:ir-a.example.ac.jp:00000123"); got != "urn:uuid:9c7d8a2e-efb4-5f3f-ae23-d512f7feba2a" {
		t.Errorf("MapID: %s", got)
	}
	if got := UUID5(ns, "日本語\n"); got != "urn:uuid:c1a4f144-63c3-5127-bf67-f5d991da6d25" {
		t.Errorf("UTF-8 name: %s", got)
	}
	a, b := EntryID("oai:x:1", "https://x/1"), EntryID("oai:x:1", "https://x/2")
	if a == b || a != EntryID("oai:x:1", "https://x/1") || a == Entry10ID(a) {
		t.Error("ids not deterministic and distinct")
	}
}
