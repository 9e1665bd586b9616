package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// TestShortEvents: a created event that says what the record's state says is
// stored as the identifier alone and read through the state; whatever later
// changes the state (an event, a datestamp bump, a deletion, in the same
// batch or a later one) writes it in full first, so it reads the same before
// and after, from old snapshots too; an event Prune removed stays removed;
// a short event whose state does not say it is an error.
func TestShortEvents(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	db, change := historyDB(t, t0)

	// stored is the form of each stored event: 's' short, 'f' full.
	stored := func() string {
		t.Helper()
		var out strings.Builder
		err := db.bdb.View(func(txn *badger.Txn) error {
			return scan(txn, prefixKey('e', "r", "p"), true, func(k, v []byte) error {
				switch {
				case len(v) > 0 && v[0] == eventShort:
					out.WriteByte('s')
				case len(v) > 0 && v[0] == eventV1:
					out.WriteByte('f')
				default:
					out.WriteByte('?')
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	// read is every event, in full, as a snapshot reads it.
	read := func(s *Snap) ([]string, error) {
		var out []string
		err := s.Events("r", "p", 0, func(e *Event) error {
			out = append(out, fmt.Sprintf("%d %s %s %s %v→%v %.8s %d %s", e.Seq, e.Identifier, e.Change,
				e.Time.Format("15:04:05.000000"), e.SetsBefore, e.SetsAfter, e.SHA256, e.Length, e.Datestamp.Format("15:04")))
			return nil
		})
		return out, err
	}
	all := func() []string {
		t.Helper()
		s := begin(t, db)
		defer s.done()
		out, err := read(s.Snap)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	state := func(id string) *Record {
		t.Helper()
		s := begin(t, db)
		defer s.done()
		r, err := s.Record("r", "p", id)
		if err != nil || r == nil {
			t.Fatalf("state of %s: %v, %v", id, r, err)
		}
		return r
	}
	batch := func(fn func(b *Batch)) {
		t.Helper()
		b := openBatch(t, db, "r", "p")
		fn(b)
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	change(t0.Add(time.Minute), "a", Created, "s:t")
	change(t0.Add(2*time.Minute), "b", Created)
	change(t0.Add(3*time.Minute), "c", Created, "s")
	if got := stored(); got != "sss" {
		t.Fatalf("created events stored %q, want all short", got)
	}
	if a := state("a"); !a.eventShort || a.Seq != 1 || !a.FirstSeen.Equal(a.Modified) {
		t.Fatalf("state of a: %+v, want its event short and first seen at its event", a)
	}
	created := all()
	want := "1 a created 10:01:00.000000 []→[s s:t] "
	if !strings.HasPrefix(created[0], want) || !strings.HasSuffix(created[0], " 10:01") || len(created) != 3 {
		t.Fatalf("events read %q, want the first to begin %q", created, want)
	}

	// An update: the created event is written in full first; a snapshot
	// opened before reads the short one the same.
	before := begin(t, db)
	change(t0.Add(4*time.Minute), "a", Updated, "s")
	if got := stored(); got != "fssf" {
		t.Fatalf("after an update: %q, want the replaced event full, then the update", got)
	}
	if got := all(); !slices.Equal(got[:3], created) {
		t.Fatalf("after an update the events read\n%q\nwant the first three as before\n%q", got, created)
	}
	if got, err := read(before.Snap); err != nil || !slices.Equal(got, created) {
		t.Fatalf("an older snapshot reads %q, %v, want %q", got, err, created)
	}
	before.done()
	if got := setEntryLines(t, db, "s:t"); !slices.Equal(got, []string{"1 a created true 10:01", "4 a deleted false 10:04"}) {
		t.Fatalf("s:t reads %q", got)
	}

	// A datestamp bump writes no event, but the state no longer says b's.
	batch(func(b *Batch) {
		old, err := b.Get("b")
		if err != nil {
			t.Fatal(err)
		}
		next := *old
		next.Datestamp = t0.Add(5 * time.Minute)
		if err := b.Apply(&next, nil, nil); err != nil {
			t.Fatal(err)
		}
	})
	// The same facts written again (the sets in another order) leave c's
	// event short.
	batch(func(b *Batch) {
		old, err := b.Get("c")
		if err != nil {
			t.Fatal(err)
		}
		next := *old
		next.Sets = []string{"s", "s"}
		if err := b.Apply(&next, nil, nil); err != nil {
			t.Fatal(err)
		}
	})
	if got := stored(); got != "ffsf" {
		t.Fatalf("after a datestamp bump of b and a rewrite of c: %q, want b's full and c's short", got)
	}
	if b, c := state("b"), state("c"); b.eventShort || !c.eventShort {
		t.Fatalf("flags: b %v, c %v", b.eventShort, c.eventShort)
	}
	if got := all(); !slices.Equal(got[:3], created) {
		t.Fatalf("after the bump the events read\n%q\nwant\n%q", got, created)
	}

	// Created and deleted in one batch: the first is written in full.
	batch(func(b *Batch) {
		rec := &Record{Identifier: "d", SHA256: sha("d"), Length: 1}
		if err := b.Apply(rec, []byte("d"), &Event{Identifier: "d", Change: Created, SHA256: sha("d"), Length: 1}); err != nil {
			t.Fatal(err)
		}
		gone := *rec
		gone.Deleted = true
		if err := b.Apply(&gone, nil, &Event{Identifier: "d", Change: Deleted}); err != nil {
			t.Fatal(err)
		}
	})
	if got := stored(); got != "ffsfff" {
		t.Fatalf("after d created and deleted in one batch: %q", got)
	}
	if got := all()[4]; !strings.HasPrefix(got, "5 d created ") || !strings.Contains(got, " 1 ") {
		t.Fatalf("d's created event reads %q", got)
	}

	// Prune removes c's short event (and the others of the first hour);
	// c's next change must not bring it back.
	change(t0.Add(70*time.Minute), "f", Created)
	p, err := db.Prune(context.Background(), "r", "p", t0.Add(90*time.Minute), t0.Add(2*time.Hour), 0)
	if err != nil || p.Events != 6 {
		t.Fatalf("prune %+v, %v, want the six events of 10:00-11:00 removed", p, err)
	}
	left := stored()
	change(t0.Add(2*time.Hour), "c", Updated, "s")
	if got := stored(); got != left+"f" {
		t.Fatalf("after pruning (%q left) and updating c: %q, want only the update added", left, got)
	}

	// Short events whose identifiers go back as well as forth.
	change(t0.Add(150*time.Minute), "z", Created)
	change(t0.Add(160*time.Minute), "y", Created)
	change(t0.Add(170*time.Minute), "zz", Created)
	got := all()
	var ids []string
	for _, e := range got {
		ids = append(ids, strings.Fields(e)[1])
	}
	if !slices.Equal(ids, []string{"f", "c", "z", "y", "zz"}) {
		t.Fatalf("events after pruning: %q", got)
	}

	// A short event whose state says another one is corrupt data.
	change(t0.Add(3*time.Hour), "e", Created)
	err = db.bdb.Update(func(txn *badger.Txn) error {
		r := state("e")
		r.Seq++
		return txn.Set(key('r', "r", "p", "e"), encodeRecord(r, stems{}))
	})
	if err != nil {
		t.Fatal(err)
	}
	s := begin(t, db)
	defer s.done()
	if _, err := read(s.Snap); !errors.Is(err, errCorrupt) {
		t.Fatalf("a short event its state does not say: %v, want %v", err, errCorrupt)
	}
}

// TestRecordFirstSeenIsModified: a state first seen when it was last
// modified does not store the time twice, and reads back the same.
func TestRecordFirstSeenIsModified(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 123456000, time.UTC)
	size := map[time.Time]int{}
	for _, first := range []time.Time{at, at.Add(-time.Hour), {}} {
		r := Record{Identifier: "x", Modified: at, FirstSeen: first, Seq: 3, eventShort: true}
		b := encodeRecord(&r, stems{})
		size[first] = len(b)
		var got Record
		got.Identifier = "x"
		if err := decodeRecord(b, &got, stems{}); err != nil || !got.FirstSeen.Equal(first) || !got.Modified.Equal(at) || !got.eventShort {
			t.Errorf("first seen %v: got %+v, %v", first, got, err)
		}
	}
	// Version 3 states had the deleted flag alone: other bits mean nothing.
	old := Record{Identifier: "x", Modified: at, FirstSeen: at.Add(-time.Hour), Seq: 3}
	v3 := encodeRecord(&old, stems{})
	v3[0], v3[1] = recordV3, v3[1]|flagFirstIsMod|flagEventShort
	var got Record
	got.Identifier = "x"
	if err := decodeRecord(v3, &got, stems{}); err != nil || !reflect.DeepEqual(got, old) {
		t.Errorf("version 3: got %+v, %v\nwant %+v", got, err, old)
	}
	if size[at] > size[at.Add(-time.Hour)]-9 { // 4 bytes of nanoseconds, 5 of seconds
		t.Errorf("state sizes %v: the first seen time, the same as modified, was written", size)
	}
}
