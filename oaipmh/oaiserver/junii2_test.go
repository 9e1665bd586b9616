package oaiserver

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// TestJunii2Records: every junii2 record is well-formed, in the junii2
// namespace, names its NIItype and URI, and carries the planted faults at
// the rates junii2.go documents, and only those; organisations as first
// creator in every sixth.
func TestJunii2Records(t *testing.T) {
	s := New(Options{Records: 200, Prefixes: []string{"junii2"}})
	faults := map[string]int{}
	for i := range 200 {
		it, ok := s.Item(i, "junii2")
		if !ok || it.Deleted {
			t.Fatalf("item %d: not served", i)
		}
		var rec struct {
			XMLName xml.Name
			Title   []string `xml:"title"`
			NIItype string   `xml:"NIItype"`
			URI     string   `xml:"URI"`
			ISSN    []string `xml:"issn"`
			Creator []string `xml:"creator"`
		}
		if err := xml.NewDecoder(bytes.NewReader(it.Metadata)).Decode(&rec); err != nil {
			t.Fatalf("item %d: %v\n%s", i, err, it.Metadata)
		}
		if rec.XMLName.Space != nsJunii2 || rec.XMLName.Local != "junii2" || rec.URI == "" || rec.NIItype == "" {
			t.Errorf("item %d: root %v, URI %q, NIItype %q", i, rec.XMLName, rec.URI, rec.NIItype)
		}
		got := ""
		switch {
		case len(rec.Title) == 0:
			got = "title"
		case !strings.Contains(" Departmental Bulletin Paper Journal Article Thesis or Dissertation Data or Dataset ", " "+rec.NIItype+" "):
			got = "NIItype"
		case len(rec.ISSN) > 0 && rec.ISSN[0] != "0287-0983":
			got = "issn"
		}
		if org := !strings.Contains(rec.Creator[0], ", "); org != (i%6 == 4) {
			t.Errorf("item %d: first creator %q", i, rec.Creator[0])
		}
		if got != Junii2Fault(i) {
			t.Errorf("item %d: fault %q, want %q", i, got, Junii2Fault(i))
		}
		faults[got]++
	}
	if faults["title"] != 4 || faults["NIItype"] != 4 || faults["issn"] != 2 {
		t.Errorf("faults in 200 records: %v", faults)
	}
}
