package oaipmh

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// oaiDCPage returns one realistic ListRecords page: 100 oai_dc records of about
// 2 KB each from the synthetic provider, with a resumption token.
func oaiDCPage(tb testing.TB) []byte {
	tb.Helper()
	s := oaiserver.New(oaiserver.Options{Records: 1000, RecordBytes: 2048, PageSize: 100, Now: func() time.Time { return time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC) }})
	req := httptest.NewRequest(http.MethodGet, "http://demo.example/oai?verb=ListRecords&metadataPrefix=oai_dc", nil)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		tb.Fatalf("synthetic provider: HTTP %d", w.Code)
	}
	return w.Body.Bytes()
}

// BenchmarkDecode decodes a 100-record oai_dc page (ns/op = ns per page): the
// envelope, the scanner that cuts records out, the repair check and the record
// tokenizer over every record.
func BenchmarkDecode(b *testing.B) {
	page := oaiDCPage(b)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n = 0
		_, err := newDecoder(bytes.NewReader(page), 16<<20).decode(handlers{record: func(r *Record) error { n++; return nil }})
		if err != nil {
			b.Fatal(err)
		}
	}
	if n != 100 {
		b.Fatalf("decoded %d records", n)
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkDecodeHashed is BenchmarkDecode with the handler hashing every
// record's Metadata as the bridge does (md5 and SHA-256, classify.go): what
// hashing costs next to decoding, and so what computing the sums inside the
// decoder, while it copies the metadata, could save at most.
func BenchmarkDecodeHashed(b *testing.B) {
	page := oaiDCPage(b)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	n := 0
	var sink byte
	for b.Loop() {
		n = 0
		_, err := newDecoder(bytes.NewReader(page), 16<<20).decode(handlers{record: func(r *Record) error {
			md := md5.Sum(r.Metadata)
			sh := sha256.Sum256(r.Metadata)
			sink ^= md[0] ^ sh[0]
			n++
			return nil
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	if n != 100 {
		b.Fatalf("decoded %d records (%d)", n, sink)
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "records/s")
}
