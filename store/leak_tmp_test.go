package store

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

func TestLeakTmp(t *testing.T) {
	db, err := Open(policy(Options{Dir: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc >> 20
	}
	n := 0
	for round := range 6 {
		for range 200 {
			b, err := db.NewBatch("r", "p")
			if err != nil {
				t.Fatal(err)
			}
			for range 100 {
				id := fmt.Sprint("oai:x:", n)
				n++
				b.Get(id)
				rec := &Record{Identifier: id, Sets: []string{"a"}}
				if err := b.Apply(rec, []byte("<x/>"), &Event{Identifier: id, Change: Created, SetsAfter: rec.Members()}); err != nil {
					t.Fatal(err)
				}
			}
			b.SetCheckpoint(Checkpoint{Token: "x"})
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			db.View(context.Background(), func(s *Snap) error { _, err := s.Counter("r", "p"); return err })
		}
		t.Logf("round %d: %d records, heap %d MiB", round, n, heap())
	}
}
