package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkChangeListRead reads the all-records Change List entries of a
// first harvest of 50,000 records (every event a created one, stored short
// and read through its state), as a Change List document does.
func BenchmarkChangeListRead(b *testing.B) {
	const n = 50000
	db, err := Open(Options{Dir: b.TempDir(), ChangeListLimit: n, ChangeListPeriod: 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; {
		batch := openBatch(b, db, "r", "p")
		for end := i + 1000; i < end; i++ {
			id := fmt.Sprintf("oai:repo.example.ac.jp:%08d", i)
			content := "<x>" + id + "</x>"
			rec := &Record{Identifier: id, Sets: []string{"s"}, SHA256: sha(content), MD5: sha(content)[:32], Length: int64(len(content)),
				Datestamp: t0, Landing: "https://repo.example.ac.jp/records/" + id[23:]}
			ev := &Event{Identifier: id, Change: Created, SetsAfter: rec.Members(), SHA256: rec.SHA256, MD5: rec.MD5, Length: rec.Length, Datestamp: t0}
			if err := batch.Apply(rec, []byte(content), ev); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		got := 0
		err := db.View(context.Background(), func(s *Snap) error {
			return s.SetEvents("r", "p", AllSet, 1, n, func(*SetEvent) error { got++; return nil })
		})
		if err != nil || got != n {
			b.Fatalf("%d entries, %v", got, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}
