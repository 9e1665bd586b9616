package ore

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExtract: Extract never panics; everything it returns is clean; and the
// Resource Map built from it serialises to well-formed XML both ways.
// (FuzzLanding checks that Landing agrees with it.)
func FuzzExtract(f *testing.F) {
	seeds := []string{
		dcOpen + `<dc:title>t</dc:title><dc:identifier>https://r/1</dc:identifier><dc:identifier>doi:10.1/x</dc:identifier><dc:identifier>https://r/f.pdf</dc:identifier></oai_dc:dc>`,
		jpcoarOpen + `<dc:title xml:lang="ja">t</dc:title><dc:type rdf:resource="http://t/1"/><jpcoar:identifier identifierType="URI">https://h/1</jpcoar:identifier><jpcoar:identifier identifierType="HDL">hdl:1/2</jpcoar:identifier><jpcoar:file><jpcoar:URI objectType="fulltext">https://h/f.pdf</jpcoar:URI><jpcoar:mimeType>a/b</jpcoar:mimeType><jpcoar:extent>1 KB</jpcoar:extent></jpcoar:file><jpcoar:creator><jpcoar:nameIdentifier nameIdentifierURI="https://o/1"/><jpcoar:creatorName>n</jpcoar:creatorName></jpcoar:creator></jpcoar:jpcoar>`,
		jpcoarOpen + `<jpcoar:catalog><jpcoar:identifier identifierType="URI">https://c/1</jpcoar:identifier></jpcoar:catalog></jpcoar:jpcoar>`,
		`<junii2 xmlns="http://irdb.nii.ac.jp/oai"><title>t</title><URI>https://j/1</URI><fullTextURL>https://j/f</fullTextURL><selfDOI>10.1/y</selfDOI></junii2>`,
		`<a xmlns:x="https://irdb.nii.ac.jp/schema/jpcoar/1.0/"><x:identifier identifierType="URI">https://q/1</x:identifier></a>`,
		`<x>`, `<a/><b/>`, ``,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "h")
	}
	f.Fuzz(func(t *testing.T, doc []byte, host string) {
		facts, err := Extract(doc, host)
		if err != nil && !errors.Is(err, ErrNotWellFormed) {
			t.Fatalf("error not wrapping ErrNotWellFormed: %v", err)
		}
		if facts.Landing != "" && !isHTTP(facts.Landing) {
			t.Fatalf("landing %q", facts.Landing)
		}
		seen := map[string]bool{}
		for _, file := range facts.Files {
			if !isHTTP(file.URI) || seen[file.URI] || file.Length < 0 || (file.MediaType != "" && !isMediaType(file.MediaType)) {
				t.Fatalf("file %+v", file)
			}
			seen[file.URI] = true
		}
		for _, d := range facts.DOIs {
			if !strings.HasPrefix(d, "https://doi.org/10.") || !utf8.ValidString(d) {
				t.Fatalf("DOI %q", d)
			}
		}
		for _, h := range facts.Handles {
			if !strings.HasPrefix(h, "https://hdl.handle.net/") {
				t.Fatalf("handle %q", h)
			}
		}
		m := Assemble(baseMap(), []MetadataRecord{{URL: gw + "x.xml", Namespace: "urn:x", FirstSeen: t0(), Modified: t1()}}, []Facts{facts}, AssembleOptions{})
		for _, write := range []func(io.Writer) error{m.WriteORE10, m.WriteORE02} {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.Bytes()
			d := xml.NewDecoder(bytes.NewReader(out))
			for {
				_, err := d.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("output not well-formed: %v\n%s", err, out)
				}
			}
		}
	})
}
