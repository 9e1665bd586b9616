package oaiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

type discardRW struct {
	h http.Header
	n int
}

func (d *discardRW) Header() http.Header         { return d.h }
func (d *discardRW) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discardRW) WriteHeader(int)             {}

// BenchmarkListRecordsPage measures one ListRecords page of 100 oai_dc
// records of ~2 KB each, resumed from the middle of a 100,000-record
// repository with some mutations in the overlay (ns/op = ns per page).
func BenchmarkListRecordsPage(b *testing.B) {
	s := New(Options{Records: 100_000, RecordBytes: 2048, PageSize: 100})
	for i := 0; i < 1000; i++ {
		s.Touch(i*97, t0().AddDate(1, 0, 0).Add(1))
	}
	first := get(b, s, q("verb", "ListRecords", "metadataPrefix", "oai_dc", "from", "2020-02-04T00:00:00Z"))
	req := httptest.NewRequest(http.MethodGet, "http://demo.example/oai", nil)
	req.URL.RawQuery = q("verb", "ListRecords", "resumptionToken", first.ListRecords.Token.Value)
	w := &discardRW{h: http.Header{}}
	s.ServeHTTP(w, req)
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ServeHTTP(w, req)
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "records/s")
}
