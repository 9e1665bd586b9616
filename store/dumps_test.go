package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

func sha(b string) string { h := sha256.Sum256([]byte(b)); return hex.EncodeToString(h[:]) }

// TestVersions: the bytes of every change stay readable by content hash while
// the record changes, is deleted and comes back.
func TestVersions(t *testing.T) {
	db := openMem(t, nil)
	apply := func(meta string, ch Change, deleted bool) {
		t.Helper()
		b, _ := db.NewBatch("r", "p")
		rec := &Record{Identifier: "a", Deleted: deleted}
		var m []byte
		if !deleted {
			rec.SHA256, m = sha(meta), []byte(meta)
		}
		if err := b.Apply(rec, m, &Event{Identifier: "a", Change: ch, SHA256: rec.SHA256}); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(content string) string {
		t.Helper()
		s := begin(t, db)
		defer s.done()
		b, err := s.Bytes("r", "p", "a", sha(content))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	apply("<x>1</x>", Created, false)
	apply("<x>2</x>", Updated, false)
	apply("<x>3</x>", Updated, false)
	for _, c := range []string{"<x>1</x>", "<x>2</x>", "<x>3</x>"} {
		if got := read(c); got != c {
			t.Errorf("bytes of %s: %q", c, got)
		}
	}
	apply("", Deleted, true)
	if got := read("<x>3</x>"); got != "<x>3</x>" {
		t.Errorf("after the deletion: %q", got)
	}
	apply("<x>1</x>", Created, false) // back to the first bytes
	apply("<x>4</x>", Updated, false)
	if got := read("<x>1</x>"); got != "<x>1</x>" {
		t.Errorf("bytes kept again: %q", got)
	}
	if got := read("<x>nope</x>"); got != "" {
		t.Errorf("unknown bytes: %q", got)
	}
}

// TestPrune: history older than the cutoff goes (lists, entries, events,
// versions, Change Dump packages), the newest list always stays, and the
// Change List Index then starts at the oldest list kept.
func TestPrune(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	db, err := Open(policy(Options{InMemory: true, Now: func() time.Time { return now }}))
	if err != nil {
		t.Fatal(err)
	}
	db.clLimit, db.clPeriod = 1000, time.Hour
	t.Cleanup(func() { db.Close() })
	for h := range 5 { // one update of "a" per hour: lists of hours 0..4
		now = t0.Add(time.Duration(h)*time.Hour + time.Minute)
		b, _ := db.NewBatch("r", "p")
		content := fmt.Sprint("<x>", h, "</x>")
		ch := Updated
		if h == 0 {
			ch = Created
		}
		if err := b.Apply(&Record{Identifier: "a", SHA256: sha(content)}, []byte(content), &Event{Identifier: "a", Change: ch, SHA256: sha(content)}); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		// Lists are named after their start: the first at the first
		// batch (00:01), each later one at the hour the one before closed.
		start := t0.Add(time.Duration(h) * time.Hour)
		if h == 0 {
			start = now
		}
		if err := db.PutChangeDump("r", "p", AllSet, ListID(start, 1), Package{File: fmt.Sprint("cd-", h, ".zip"), Manifest: fmt.Sprint("cd-", h, ".xml")}); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(5 * time.Hour)
	got, err := db.Prune(context.Background(), "r", "p", t0.Add(2*time.Hour), now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Lists of hours 0 and 1 closed at or before 02:00; their single entries
	// and their events go, and the bytes superseded by an event that went
	// (hour 0's, replaced at 01:01). Hour 1's bytes were replaced at 02:01, by
	// an event that stays, so they stay too (the rule is conservative).
	if got.Lists != 2 || got.Entries != 2 || got.Events != 2 || got.Versions != 1 || len(got.Files) != 4 {
		t.Fatalf("pruned %+v", got)
	}
	s := begin(t, db)
	lists, _ := s.ChangeLists("r", "p", AllSet)
	if len(lists) != 4 || !lists[0].From.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("lists after pruning: %+v", lists)
	}
	if oldest, _ := s.Oldest("r", "p", AllSet); !oldest.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("oldest %v", oldest)
	}
	var evs []uint64
	s.Events("r", "p", 0, func(e *Event) error { evs = append(evs, e.Seq); return nil })
	if len(evs) != 3 || evs[0] != 3 {
		t.Errorf("events %v", evs)
	}
	for h, want := range []string{"", "<x>1</x>", "<x>2</x>", "<x>3</x>", "<x>4</x>"} {
		b, _ := s.Bytes("r", "p", "a", sha(fmt.Sprint("<x>", h, "</x>")))
		if string(b) != want {
			t.Errorf("bytes of hour %d: %q, want %q", h, b, want)
		}
	}
	n := 0
	s.ChangeDumps("r", "p", AllSet, func(string, Package) error { n++; return nil })
	g := 0
	s.Garbage(func(Garbage) error { g++; return nil })
	if n != 3 || g != 4 {
		t.Errorf("%d change dumps left, %d files queued", n, g)
	}
	s.done()
	// Everything at once: the newest list stays.
	now = t0.Add(10 * time.Hour)
	if _, err := db.Prune(context.Background(), "r", "p", now, now, 0); err != nil {
		t.Fatal(err)
	}
	s = begin(t, db)
	if lists, _ := s.ChangeLists("r", "p", AllSet); len(lists) != 2 || lists[0].ID != ListID(t0.Add(4*time.Hour), 1) {
		t.Errorf("the newest list must stay: %+v", lists)
	}
}
