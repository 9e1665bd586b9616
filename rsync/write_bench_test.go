package rsync

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkWriteURLSet writes a Resource List of 10,000 entries, each with
// <loc>, <lastmod>, an rs:md (hash, length, type) and two rs:ln, into
// io.Discard: the writer's own cost, escaping included, with the entries
// built beforehand.
//
//	go test -run '^$' -bench WriteURLSet -benchmem ./rsync/
func BenchmarkWriteURLSet(b *testing.B) {
	const n = 10_000
	at := time.Date(2026, 11, 22, 1, 2, 3, 456000000, time.UTC)
	hash := "md5:0123456789abcdef0123456789abcdef sha-256:" + strings.Repeat("0123456789abcdef", 4)
	entries := make([]Entry, n)
	for i := range entries {
		id := fmt.Sprintf("oai%%3Arepo.example.ac.jp%%3A%08d", i)
		entries[i] = Entry{
			Loc:     "https://rsbridge.example/repo/jpcoar_2.0/resource/" + id,
			LastMod: at,
			MD:      &MD{Hash: hash, Length: 2100 + int64(i), HasLength: true, Type: "application/xml"},
			Links: []Link{
				{Rel: "via", Href: "https://repo.example.ac.jp/oai?verb=GetRecord&identifier=oai:repo.example.ac.jp:" + id + "&metadataPrefix=jpcoar_2.0", Modified: at},
				{Rel: "alternate", Href: "https://rsbridge.example/repo/oai_dc/resource/" + id, Type: "application/xml"},
			},
		}
	}
	var size int64
	for b.Loop() {
		w := NewURLSet(io.Discard, MD{Capability: ResourceList, At: at, Completed: at},
			Link{Rel: "up", Href: "https://rsbridge.example/repo/jpcoar_2.0/all/capabilitylist.xml"})
		for _, e := range entries {
			if err := w.Write(e); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		size = w.Size()
	}
	b.SetBytes(size)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}
