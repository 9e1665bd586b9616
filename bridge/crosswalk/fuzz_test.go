package crosswalk

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzJunii2: any input → no panic and no error; a derived record is
// well-formed XML (parsed back with encoding/xml), deterministic across two
// calls, free of XSD-class findings of CheckJPCOAR and of record errors
// other than the IRDB-only thesis-without-creator; Record != nil iff no
// quarantine. The checkers must not panic on the input either.
func FuzzJunii2(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.data)
	}
	for _, s := range synthetic() {
		f.Add(s)
	}
	f.Add([]byte(`<junii2 xmlns="http://irdb.nii.ac.jp/oai"><title>a</title><NIItype>Others</NIItype><URI>http://x/</URI></junii2>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r1, err := Junii2ToJPCOAR2(data)
		if err != nil {
			t.Fatalf("error: %v", err)
		}
		_ = CheckJunii2(data)
		if (r1.Record == nil) == (len(r1.Quarantine) == 0) {
			t.Fatalf("record %v with quarantine %v", r1.Record != nil, r1.Quarantine)
		}
		if r1.Record == nil {
			return
		}
		r2, _ := Junii2ToJPCOAR2(data)
		if !bytes.Equal(r1.Record, r2.Record) {
			t.Fatal("not deterministic")
		}
		if err := wellFormed(r1.Record); err != nil {
			t.Fatalf("derived record not well-formed: %v\n%s", err, r1.Record)
		}
		for _, is := range CheckJPCOAR(r1.Record) {
			if strings.HasPrefix(is.Code, "xsd-") || (is.Level == LevelRecord && is.Code != "thesis-without-creator") {
				t.Fatalf("derived record fails %v\n%s", is, r1.Record)
			}
		}
	})
}

func wellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
