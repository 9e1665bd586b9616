package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func sha(b string) string { h := sha256.Sum256([]byte(b)); return hex.EncodeToString(h[:]) }

// TestVersions: the bytes of every change stay readable by content hash while
// the record changes, is deleted and comes back.
func TestVersions(t *testing.T) {
	db := openMem(t, nil)
	apply := func(meta string, ch Change, deleted bool) {
		t.Helper()
		b := openBatch(t, db, "r", "p")
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
		b := openBatch(t, db, "r", "p")
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
	// Lists of hours 0 and 1 closed at or before 02:00; their events (the
	// all-records set's entries) go, and the bytes superseded by an event
	// that went (hour 0's, replaced at 01:01). Hour 1's bytes were replaced
	// at 02:01, by an event that stays, so they stay too (the rule is
	// conservative).
	if got.Lists != 2 || got.Entries != 0 || got.Events != 2 || got.Versions != 1 || len(got.Files) != 4 {
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

// TestAllSetEntriesAreEvents: the all-records set keeps no entries of its
// own; its Change Lists read the events. Pruning keeps the events of every
// list that stays, even those older than the cutoff, and a store written
// before (entries copied per set, events pruned while a list kept the copy)
// reads the copies where events are missing, each entry once.
func TestAllSetEntriesAreEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, apply := historyDB(t, t0)

	apply(t0.Add(10*time.Minute), "a", Created, "s")
	apply(t0.Add(30*time.Minute), "b", Created)
	apply(t0.Add(50*time.Minute), "a", Deleted)
	apply(t0.Add(70*time.Minute), "c", Created, "s")

	entries := func(set string) []string { t.Helper(); return setEntryLines(t, db, set) }
	all := []string{"1 a created true 00:10", "2 b created true 00:30", "3 a deleted false 00:50", "4 c created true 01:10"}
	if got := entries(AllSet); !slices.Equal(got, all) {
		t.Fatalf("all-records entries %q, want %q", got, all)
	}
	if got, want := entries("s"), []string{"1 a created true 00:10", "3 a deleted false 00:50", "4 c created true 01:10"}; !slices.Equal(got, want) {
		t.Fatalf("set entries %q, want %q", got, want)
	}

	// The 00:00 list closes at 01:00, after the cutoff: it stays, and so do
	// its events, though all three were detected before the cutoff.
	if _, err := db.Prune(context.Background(), "r", "p", t0.Add(55*time.Minute), t0.Add(2*time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if got := entries(AllSet); !slices.Equal(got, all) {
		t.Fatalf("after pruning: %q, want %q", got, all)
	}

	// What an earlier version left: a copy of every event (x/), and events 2
	// and 4 pruned while their lists stayed.
	err := db.bdb.Update(func(txn *badger.Txn) error {
		for _, seq := range []uint64{1, 2, 3, 4} {
			ev, err := getEvent(db, txn, "r", "p", seq)
			if err != nil {
				return err
			}
			se := ev.setEvent(AllSet)
			if err := txn.Set(seqKey('x', seq, "r", "p", AllSet), encodeSetEvent(&se)); err != nil {
				return err
			}
		}
		for _, seq := range []uint64{2, 4} {
			if err := txn.Delete(seqKey('e', seq, "r", "p")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(AllSet); !slices.Equal(got, all) {
		t.Fatalf("from an earlier version's store: %q, want %q", got, all)
	}
}

// TestSetEntriesAreKeys: a set's change entry is its key alone, read with
// its event; when Prune removes an event that a kept list of a set still
// holds (a set's newest list stays, however old), it writes that entry in
// full first, so the list reads the same after. An entry naming a missing
// event is an error, not a silent gap.
func TestSetEntriesAreKeys(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, apply := historyDB(t, t0)
	apply(t0.Add(10*time.Minute), "a", Created, "s")
	apply(t0.Add(20*time.Minute), "b", Created, "t")
	apply(t0.Add(40*time.Minute), "a", Updated, "t") // leaves s, joins t
	apply(t0.Add(70*time.Minute), "c", Created)
	apply(t0.Add(130*time.Minute), "d", Created)
	apply(t0.Add(190*time.Minute), "e", Created, "t")

	values := func(set string) map[uint64]int {
		t.Helper()
		out := map[uint64]int{}
		p := prefixKey('x', "r", "p", set)
		err := db.bdb.View(func(txn *badger.Txn) error {
			return scan(txn, p, true, func(k, v []byte) error { out[seqOf(k)] = len(v); return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := values("s"), map[uint64]int{1: 0, 3: 0}; !maps.Equal(got, want) {
		t.Fatalf("entries of s: %v (sequence number: value length), want keys alone %v", got, want)
	}
	if got, want := values("t"), map[uint64]int{2: 0, 3: 0, 6: 0}; !maps.Equal(got, want) {
		t.Fatalf("entries of t: %v, want keys alone %v", got, want)
	}
	s := []string{"1 a created true 00:10", "3 a deleted false 00:40"}
	if got := setEntryLines(t, db, "s"); !slices.Equal(got, s) {
		t.Fatalf("s: %q, want %q", got, s)
	}
	if got, want := setEntryLines(t, db, "t"), []string{"2 b created true 00:20", "3 a created true 00:40", "6 e created true 03:10"}; !slices.Equal(got, want) {
		t.Fatalf("t: %q, want %q", got, want)
	}

	// Cutoff 02:30: the all-records lists of hours 0 and 1 go with their
	// events (1-4), and t's list of hour 0 with its entries; s's only list
	// stays, and its two entries are written in full.
	got, err := db.Prune(context.Background(), "r", "p", t0.Add(150*time.Minute), t0.Add(4*time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Events != 4 || got.Entries != 2 || got.Filled != 2 {
		t.Fatalf("pruned %+v", got)
	}
	if got := setEntryLines(t, db, "s"); !slices.Equal(got, s) {
		t.Fatalf("s after pruning: %q, want %q", got, s)
	}
	if v := values("s"); v[1] == 0 || v[3] == 0 || len(v) != 2 {
		t.Fatalf("entries of s after pruning: %v, want both in full", v)
	}
	if got, want := setEntryLines(t, db, "t"), []string{"6 e created true 03:10"}; !slices.Equal(got, want) {
		t.Fatalf("t after pruning: %q, want %q", got, want)
	}
	if got, want := setEntryLines(t, db, AllSet), []string{"5 d created true 02:10", "6 e created true 03:10"}; !slices.Equal(got, want) {
		t.Fatalf("all records after pruning: %q, want %q", got, want)
	}

	// A later Prune, with nothing left to remove, writes nothing again.
	if got, err := db.Prune(context.Background(), "r", "p", t0.Add(150*time.Minute), t0.Add(4*time.Hour), 0); err != nil || got.Filled != 0 || got.Events != 0 {
		t.Fatalf("second prune %+v, %v", got, err)
	}

	if err := db.bdb.Update(func(txn *badger.Txn) error { return txn.Delete(seqKey('e', 6, "r", "p")) }); err != nil {
		t.Fatal(err)
	}
	snap := begin(t, db)
	defer snap.done()
	err = snap.SetEvents("r", "p", "t", 6, 6, func(*SetEvent) error { return nil })
	if !errors.Is(err, errCorrupt) {
		t.Fatalf("an entry whose event is missing: %v, want %v", err, errCorrupt)
	}
}

// TestPruneWhileReading: a destination reading a set's kept Change List
// while Prune removes the events it names sees every entry, whole, in every
// snapshot: Prune's write batch commits in several transactions, and each
// entry is written in full before its event goes.
func TestPruneWhileReading(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var now atomic.Pointer[time.Time]
	setNow := func(at time.Time) { now.Store(&at) }
	setNow(t0)
	db, err := Open(policy(Options{Dir: t.TempDir(), MemTableSize: 1 << 20, Now: func() time.Time { return *now.Load() }}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.clLimit, db.clPeriod = 100000, time.Hour
	const n = 6000 // 12,000 writes to prune: several transactions at this memtable size
	setNow(t0.Add(10 * time.Minute))
	b := openBatch(t, db, "r", "p")
	for i := range n {
		id := fmt.Sprint("id-", i)
		ev := &Event{Identifier: id, Change: Created, SetsAfter: []string{"s"}, SHA256: sha(id), Length: int64(len(id))}
		if err := b.Apply(&Record{Identifier: id, Sets: []string{"s"}, SHA256: sha(id), Length: int64(len(id))}, []byte(id), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	setNow(t0.Add(150 * time.Minute))
	applyChange(t, db, "late", Created, t0.Add(150*time.Minute)) // the all-records set's next list

	read := func() error {
		return db.View(context.Background(), func(s *Snap) error {
			lists, err := s.ChangeLists("r", "p", "s")
			if err != nil {
				return err
			}
			got := 0
			for _, l := range lists {
				err := s.SetEvents("r", "p", "s", l.FirstSeq, l.LastSeq, func(e *SetEvent) error {
					if e.Change != Created || e.SHA256 != sha(e.Identifier) || e.Length != int64(len(e.Identifier)) {
						return fmt.Errorf("entry %d: %+v", e.Seq, e)
					}
					got++
					return nil
				})
				if err != nil {
					return err
				}
			}
			if got != n {
				return fmt.Errorf("%d entries, want %d", got, n)
			}
			return nil
		})
	}
	if err := read(); err != nil {
		t.Fatal(err)
	}
	var pruning atomic.Bool
	pruning.Store(true)
	done := make(chan int)
	go func() {
		during := 0
		for pruning.Load() {
			if err := read(); err != nil {
				t.Errorf("read during Prune: %v", err)
				break
			}
			during++
		}
		done <- during
	}()
	got, err := db.Prune(context.Background(), "r", "p", t0.Add(90*time.Minute), t0.Add(3*time.Hour), 0)
	pruning.Store(false)
	t.Logf("%d complete reads during Prune", <-done)
	if err != nil {
		t.Fatal(err)
	}
	if got.Events != n || got.Filled != n {
		t.Fatalf("pruned %+v", got)
	}
	if err := read(); err != nil {
		t.Fatalf("after Prune: %v", err)
	}
}

func getEvent(db *DB, txn *badger.Txn, repo, prefix string, seq uint64) (*Event, error) {
	it, err := txn.Get(seqKey('e', seq, repo, prefix))
	if err != nil {
		return nil, err
	}
	er := db.newEventReader(txn, repo, prefix)
	defer er.Close()
	ev := &Event{}
	return ev, er.read(it, seq, ev)
}

// historyDB is an in-memory store with hourly Change Lists, and a function
// that commits one change (applyChange) at the time it names.
func historyDB(t *testing.T, t0 time.Time) (*DB, func(at time.Time, id string, c Change, sets ...string)) {
	db, setNow := clockDB(t, t0, policy(Options{}))
	db.clLimit, db.clPeriod = 1000, time.Hour
	return db, func(at time.Time, id string, c Change, sets ...string) {
		t.Helper()
		setNow(at)
		applyChange(t, db, id, c, at, sets...)
	}
}

// applyChange commits one change of record id in repository "r", format "p":
// its event (with its sets before and after) and state; at is its datestamp.
func applyChange(t *testing.T, db *DB, id string, c Change, at time.Time, sets ...string) {
	t.Helper()
	b := openBatch(t, db, "r", "p")
	content := "<x>" + id + at.String() + "</x>"
	rec := &Record{Identifier: id, Sets: sets, Deleted: c == Deleted, SHA256: sha(content), Length: int64(len(content)), Datestamp: at}
	ev := &Event{Identifier: id, Change: c, SetsAfter: rec.Members(), Datestamp: at}
	if c != Deleted {
		ev.SHA256, ev.Length = sha(content), int64(len(content))
	}
	if old, _ := b.Get(id); old != nil {
		ev.SetsBefore = old.Members()
	}
	if err := b.Apply(rec, []byte(content), ev); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// setEntryLines is every entry of the set's Change Lists in "r"/"p", one
// line each: sequence number, identifier, change, whether it has a hash and
// length, datestamp.
func setEntryLines(t *testing.T, db *DB, set string) []string {
	t.Helper()
	s := begin(t, db)
	defer s.done()
	lists, err := s.ChangeLists("r", "p", set)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lists {
		if l.Count == 0 {
			continue
		}
		err := s.SetEvents("r", "p", set, l.FirstSeq, l.LastSeq, func(e *SetEvent) error {
			hashed := e.SHA256 != "" && e.Length > 0
			out = append(out, fmt.Sprintf("%d %s %s %v %s", e.Seq, e.Identifier, e.Change, hashed, e.Datestamp.Format("15:04")))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestLastSetEvent: the newest change entry of a set after a sequence
// number, for an OAI set (x/ entries) and the all-records set (events), or
// nil when there is none; records of other sets and repositories around it
// do not count.
func TestLastSetEvent(t *testing.T) {
	db, err := Open(policy(Options{InMemory: true}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, repo := range []string{"q", "r", "s"} {
		b := openBatch(t, db, repo, "p")
		for i := range 5 {
			id := fmt.Sprint("id-", i)
			sets := []string{"a"}
			if i%2 == 1 {
				sets = []string{"b"}
			}
			ev := &Event{Identifier: id, Change: Created, SetsAfter: sets, SHA256: sha(id), Length: int64(len(id))}
			if err := b.Apply(&Record{Identifier: id, Sets: sets, SHA256: sha(id), Length: int64(len(id))}, []byte(id), ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		set   string
		after uint64
		want  string // identifier, "" for none
	}{
		{AllSet, 0, "id-4"}, {AllSet, 4, "id-4"}, {AllSet, 5, ""},
		{"a", 0, "id-4"}, {"a", 4, "id-4"}, {"a", 5, ""},
		{"b", 0, "id-3"}, {"b", 3, "id-3"}, {"b", 4, ""},
		{"c", 0, ""},
	}
	err = db.View(context.Background(), func(s *Snap) error {
		for _, c := range cases {
			got, err := s.LastSetEvent("r", "p", c.set, c.after)
			if err != nil {
				return err
			}
			switch {
			case c.want == "" && got != nil:
				t.Errorf("set %q after %d: %+v, want none", c.set, c.after, got)
			case c.want != "" && (got == nil || got.Identifier != c.want || got.Change != Created):
				t.Errorf("set %q after %d: %+v, want %s", c.set, c.after, got, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
