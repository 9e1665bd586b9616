package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// policy is the Change List limit and period the tests open stores with.
func policy(o Options) Options {
	o.ChangeListLimit, o.ChangeListPeriod = 50000, 24*time.Hour
	if o.MinFree == 0 {
		o.MinFree = 1 // tests must not depend on the machine's free disk space
	}
	return o
}

func openMem(t *testing.T, now func() time.Time) *DB {
	t.Helper()
	db, err := Open(policy(Options{InMemory: true, Now: now}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(policy(Options{Dir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(policy(Options{Dir: dir}))
	if !errors.Is(err, ErrLocked) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(policy(Options{Dir: dir})) // released on Close
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestExpandSets(t *testing.T) {
	got := ExpandSets([]string{"a:b:c", "x", "a:d", "x"})
	want := []string{"a", "a:b", "a:b:c", "a:d", "x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v", got)
	}
}

func TestBatchReadYourWritesMembershipAndEvents(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db := openMem(t, func() time.Time { return clock }) // a stuck clock: times must still increase
	b := openBatch(t, db, "r", "oai_dc")
	ids := []string{"oai:x:1", "oai:x:dept/論文 2:v1", "oai:x:3"}
	for _, id := range ids {
		if r, _ := b.Get(id); r != nil {
			t.Fatal("unexpected record")
		}
		ev := &Event{Identifier: id, Change: Created, SetsAfter: ExpandSets([]string{"a:b"})}
		if err := b.Apply(&Record{Identifier: id, Sets: []string{"a:b"}}, []byte("<x/>"), ev); err != nil {
			t.Fatal(err)
		}
		if r, _ := b.Get(id); r == nil || r.Seq != ev.Seq {
			t.Fatal("batch does not see its own write")
		}
	}
	if err := b.SetCheckpoint(Checkpoint{Token: "t2", InProgress: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	// Move one record out of a:b into c, delete another. What Get returns
	// is the caller's: changing it changes nothing the batch holds.
	b = openBatch(t, db, "r", "oai_dc")
	if r, _ := b.Get(ids[0]); r == nil || len(r.Sets) != 1 {
		t.Fatalf("stored state %+v", r)
	} else {
		r.Sets[0], r.Length = "changed", 99
	}
	if r, _ := b.Get(ids[0]); r == nil || r.Sets[0] != "a:b" || r.Length != 0 {
		t.Fatalf("the batch's state changed with what Get returned: %+v", r)
	}
	if err := b.Apply(&Record{Identifier: ids[0], Sets: []string{"c"}}, nil, &Event{Identifier: ids[0], Change: Updated, SetsBefore: []string{"a", "a:b"}, SetsAfter: []string{"c"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(&Record{Identifier: ids[1], Deleted: true}, nil, &Event{Identifier: ids[1], Change: Deleted, SetsBefore: []string{"a", "a:b"}}); err != nil {
		t.Fatal(err)
	}
	if r, _ := b.Get(ids[0]); r == nil || !slices.Equal(r.Sets, []string{"c"}) {
		t.Fatalf("after the move the batch sees %+v", r)
	}
	if r, _ := b.Get(ids[1]); r == nil || !r.Deleted {
		t.Fatalf("after the deletion the batch sees %+v", r)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	snap := begin(t, db)
	ctr, _ := snap.Counter("r", "oai_dc")
	if ctr.Seq != 5 || ctr.Live != 2 || ctr.Deleted != 1 {
		t.Errorf("counter %+v", ctr)
	}
	var prev time.Time
	var changes []string
	snap.Events("r", "oai_dc", 0, func(e *Event) error {
		if !e.Time.After(prev) {
			t.Errorf("event %d time %v not after %v", e.Seq, e.Time, prev)
		}
		prev = e.Time
		changes = append(changes, fmt.Sprintf("%d:%s:%s:a=%s:c=%s", e.Seq, e.Identifier, e.Change, e.SetChange("a"), e.SetChange("c")))
		return nil
	})
	want := []string{"1:oai:x:1:created:a=created:c=change(0)", "2:oai:x:dept/論文 2:v1:created:a=created:c=change(0)", "3:oai:x:3:created:a=created:c=change(0)", "4:oai:x:1:updated:a=deleted:c=created", "5:oai:x:dept/論文 2:v1:deleted:a=deleted:c=change(0)"}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("events\n%v\nwant\n%v", changes, want)
	}
	if m, _ := snap.Metadata("r", "oai_dc", ids[1]); m != nil {
		t.Error("deleted record kept metadata")
	}
	if m, _ := snap.Metadata("r", "oai_dc", ids[0]); string(m) != "<x/>" {
		t.Errorf("metadata %q", m)
	}
	if cp, _ := snap.Checkpoint("r", "oai_dc"); cp.Token != "t2" {
		t.Errorf("checkpoint %+v", cp)
	}
	// Membership index: a holds only oai:x:3 now, c holds oai:x:1.
	members := func(set string) []string {
		var out []string
		if err := snap.Resources("r", "oai_dc", set, "", "", 100, func(r *Record) error { out = append(out, r.Identifier); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if a, c := members("a"), members("c"); !reflect.DeepEqual(a, []string{"oai:x:3"}) || !reflect.DeepEqual(c, []string{"oai:x:1"}) {
		t.Errorf("members a=%v c=%v", a, c)
	}
}

func TestBatchSplitsWhenTooBig(t *testing.T) {
	db, err := Open(policy(Options{Dir: t.TempDir(), MemTableSize: 1 << 20}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := openBatch(t, db, "r", "p")
	meta := []byte(strings.Repeat("x", 900)) // below the value threshold, so it counts fully
	for i := 0; i < 500; i++ {               // ~2 MB, more than one transaction may hold
		id := fmt.Sprint("id-", i)
		ev := &Event{Identifier: id, Change: Created}
		if err := b.Apply(&Record{Identifier: id, Sets: []string{"a:b:c:d", "x:y:z"}}, meta, ev); err != nil {
			t.Fatal(err)
		}
	}
	b.SetCheckpoint(Checkpoint{Token: "next"})
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if b.Parts() == 0 {
		t.Fatal("expected the batch to split")
	}
	snap := begin(t, db)
	ctr, _ := snap.Counter("r", "p")
	n := 0
	snap.Resources("r", "p", AllSet, "", "", 1000, func(*Record) error { n++; return nil })
	members := 0
	snap.Resources("r", "p", "x:y", "", "", 1000, func(*Record) error { members++; return nil })
	if ctr.Seq != 500 || ctr.Live != 500 || n != 500 || members != 500 {
		t.Fatalf("counter %+v records %d members %d", ctr, n, members)
	}
	if cp, _ := snap.Checkpoint("r", "p"); cp.Token != "next" {
		t.Fatalf("checkpoint %+v", cp)
	}
}

// testSnap is a read snapshot held open by a goroutine until done.
type testSnap struct {
	*Snap
	done func()
}

// begin opens a read snapshot that stays open until done or the test's end.
func begin(t *testing.T, db *DB) testSnap {
	t.Helper()
	ready, stop, ended := make(chan *Snap), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		db.View(context.Background(), func(s *Snap) error {
			ready <- s
			<-stop
			return nil
		})
	}()
	var once sync.Once
	done := func() { once.Do(func() { close(stop); <-ended }) }
	t.Cleanup(done)
	return testSnap{<-ready, done}
}

// clockDB opens an in-memory store whose clock is set by the returned func.
func clockDB(t *testing.T, start time.Time, o Options) (*DB, func(time.Time)) {
	t.Helper()
	var mu sync.Mutex
	now := start
	o.InMemory = true
	o.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
}

// TestChangeListPolicy: the store cuts lists by size and by period, names
// each after its start, and the snapshot reports the open list, including
// one that has no entry yet, with the ID and From the catalog will give it.
// An empty open list keeps its URL however long it stays empty (issue 16,
// finding 2: it used to be renamed at every period's end, its old URL
// answering 404).
func TestChangeListPolicy(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db, setNow := clockDB(t, t0, Options{ChangeListLimit: 2, ChangeListPeriod: time.Hour})
	apply := func(ids ...string) {
		t.Helper()
		b := openBatch(t, db, "r", "p")
		for _, id := range ids {
			if err := b.Apply(&Record{Identifier: id}, []byte("<x/>"), &Event{Identifier: id, Change: Created}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	apply("id0", "id1", "id2")
	type row struct {
		id          string
		count       int
		from, until time.Time
	}
	lists := func() []row {
		var out []row
		err := db.View(context.Background(), func(s *Snap) error {
			ls, err := s.ChangeLists("r", "p", AllSet)
			for _, l := range ls {
				out = append(out, row{l.ID, l.Count, l.From, l.Until(s.At("r", "p"))})
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	full := t0.Add(time.Microsecond) // the second event's time: the first list closed by size there
	want := []row{{"20261122T100000Z-0001", 2, t0, full}, {"20261122T100000Z-0002", 1, full, time.Time{}}}
	if got := lists(); !reflect.DeepEqual(got, want) {
		t.Fatalf("at t0:\n%v\nwant\n%v", got, want)
	}
	setNow(t0.Add(90 * time.Minute))
	want[1].until = t0.Add(time.Hour)
	want = append(want, row{"20261122T110000Z-0001", 0, t0.Add(time.Hour), time.Time{}})
	if got := lists(); !reflect.DeepEqual(got, want) {
		t.Fatalf("an hour later:\n%v\nwant\n%v", got, want)
	}
	one := func(id string) *ChangeListInfo {
		var l *ChangeListInfo
		db.View(context.Background(), func(s *Snap) error {
			var err error
			l, err = s.ChangeList("r", "p", AllSet, id)
			return err
		})
		return l
	}
	if l := one("20261122T110000Z-0001"); l == nil || l.Count != 0 || !l.From.Equal(t0.Add(time.Hour)) {
		t.Errorf("open list without entries: %+v", l)
	}
	// Quiet for hours: the empty open list keeps its name and start.
	setNow(t0.Add(3*time.Hour + 30*time.Minute))
	if got := lists(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a quiet spell:\n%v\nwant\n%v", got, want)
	}
	if l := one("20261122T110000Z-0001"); l == nil || l.Count != 0 {
		t.Errorf("the empty open list went away during a quiet spell: %+v", l)
	}
	if l := one("20261122T130000Z-0001"); l != nil {
		t.Errorf("a list named after the clock: %+v", l)
	}
	// The first change goes to that list, which closes at the end of the
	// change's period.
	setNow(t0.Add(3*time.Hour + 45*time.Minute))
	apply("id3")
	setNow(t0.Add(4*time.Hour + time.Minute))
	want[2] = row{"20261122T110000Z-0001", 1, t0.Add(time.Hour), t0.Add(4 * time.Hour)}
	want = append(want, row{"20261122T140000Z-0001", 0, t0.Add(4 * time.Hour), time.Time{}})
	if got := lists(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the quiet spell's change:\n%v\nwant\n%v", got, want)
	}
	if l := one("20261122T100000Z-0001"); l == nil || l.Count != 2 {
		t.Errorf("closed list: %+v", l)
	}
}

// TestListClosesOnlyWhenCommitted: an event is timed when its record is
// applied but seen when its transaction commits. A list whose period ended
// while such an event was pending stays open until the commit, then holds it
// (issue 16, finding 1: it used to close at the period's end, be cached for a
// year without the event, and the event was in no list).
func TestListClosesOnlyWhenCommitted(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 59, 59, 0, time.UTC)
	db, setNow := clockDB(t, t0, Options{ChangeListLimit: 100, ChangeListPeriod: time.Hour})
	b := openBatch(t, db, "r", "p")
	if err := b.Apply(&Record{Identifier: "a"}, []byte("<x/>"), &Event{Identifier: "a", Change: Created}); err != nil {
		t.Fatal(err)
	}
	setNow(t0.Add(10 * time.Second)) // 11:00:09: the 10:00 period is over, the page not committed
	read := func() (at time.Time, ls []ChangeListInfo) {
		err := db.View(context.Background(), func(s *Snap) error {
			var err error
			at, ls = s.At("r", "p"), nil
			ls, err = s.ChangeLists("r", "p", AllSet)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return at, ls
	}
	at, ls := read()
	if !at.Equal(t0) {
		t.Errorf("horizon %v with an event of %v pending, want the event's time", at, t0)
	}
	if len(ls) != 1 || ls[0].Count != 0 || !ls[0].Until(at).IsZero() {
		t.Fatalf("while the event is pending, the one list must be open: %+v", ls)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	at, ls = read()
	if !at.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("horizon %v after the commit, want the clock", at)
	}
	if len(ls) != 2 || ls[0].Count != 1 || !ls[0].Until(at).Equal(t0.Add(time.Second)) || !ls[0].LastTime.Equal(t0) {
		t.Fatalf("after the commit the list holds the event and is closed: %+v", ls)
	}
	// A discarded batch lets the horizon go.
	b = openBatch(t, db, "r", "p")
	if err := b.Apply(&Record{Identifier: "b"}, []byte("<x/>"), &Event{Identifier: "b", Change: Created}); err != nil {
		t.Fatal(err)
	}
	setNow(t0.Add(20 * time.Second))
	if at, _ := read(); !at.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("horizon %v with an event pending since %v", at, t0.Add(10*time.Second))
	}
	b.Discard()
	if at, _ := read(); !at.Equal(t0.Add(20 * time.Second)) {
		t.Errorf("horizon %v after a discard, want the clock", at)
	}
}

// TestOpenAfterCrashBetweenCreateAndSize: a process killed right after Badger
// created a memtable or value-log file leaves it empty; the store still opens
// and keeps what was committed (found by the SIGKILL crash test).
func TestOpenAfterCrashBetweenCreateAndSize(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(policy(Options{Dir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	b := openBatch(t, db, "r", "p")
	if err := b.Apply(&Record{Identifier: "a"}, []byte("<x/>"), &Event{Identifier: "a", Change: Created}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, name := range []string{"00009.mem", "000009.vlog"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err = Open(policy(Options{Dir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if m, _ := begin(t, db).Metadata("r", "p", "a"); string(m) != "<x/>" {
		t.Fatalf("metadata %q", m)
	}
}

// TestChangeListBytes: a list whose next entry would pass the byte limit
// closes at its last entry, like a list that holds the limit of entries, so
// no Change List passes 50 MiB whatever its identifiers (issue 16, finding
// 4: only the entry count was checked).
func TestChangeListBytes(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	db, err := Open(Options{InMemory: true, Now: func() time.Time { return t0 }, ChangeListLimit: 100, ChangeListPeriod: time.Hour,
		ChangeListBytes: 2500, ChangeEntryBytes: func(repo, prefix, id string) int64 { return int64(1000 + len(id)) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := openBatch(t, db, "r", "p")
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if err := b.Apply(&Record{Identifier: id}, []byte("<x/>"), &Event{Identifier: id, Change: Created}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	var ls []ChangeListInfo
	var at time.Time
	db.View(context.Background(), func(s *Snap) error {
		at = s.At("r", "p")
		ls, err = s.ChangeLists("r", "p", AllSet)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for i, l := range ls {
		counts = append(counts, l.Count)
		if l.Bytes > 2500 {
			t.Errorf("list %s bounds %d bytes, more than 2500", l.ID, l.Bytes)
		}
		if i < len(ls)-1 && (l.Until(at).IsZero() || !l.Until(at).Equal(ls[i+1].From)) {
			t.Errorf("list %s: until %v, next from %v", l.ID, l.Until(at), ls[i+1].From)
		}
	}
	if !reflect.DeepEqual(counts, []int{2, 2, 1}) {
		t.Errorf("entries per list %v, want [2 2 1]", counts)
	}
}

// TestHorizonPerCounterAndSuccessors: a slow page of one repository holds
// back no other's lists, and a list followed by a newer one is closed even
// when the horizon is behind its end (found by the ten-minute churn run: a
// commit between the horizon's reading and the snapshot made the index show
// an open list before a newer one).
func TestHorizonPerCounterAndSuccessors(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	db, setNow := clockDB(t, t0, Options{ChangeListLimit: 100, ChangeListPeriod: time.Hour})
	apply := func(repo, id string) *Batch {
		t.Helper()
		b := openBatch(t, db, repo, "p")
		if err := b.Apply(&Record{Identifier: id}, []byte("<x/>"), &Event{Identifier: id, Change: Created}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	lists := func(repo string) (time.Time, []ChangeListInfo) {
		t.Helper()
		var at time.Time
		var ls []ChangeListInfo
		err := db.View(context.Background(), func(s *Snap) error {
			var err error
			at = s.At(repo, "p")
			ls, err = s.ChangeLists(repo, "p", AllSet)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return at, ls
	}
	if err := apply("a", "1").Commit(); err != nil { // list 1 of a: 10:00-11:00
		t.Fatal(err)
	}
	setNow(t0.Add(29*time.Minute + 59*time.Second)) // 10:59:59
	slowB := apply("b", "x")                        // b's page is slow
	defer slowB.Discard()                           // (after Commit too: a failing test must not leave the store locked)
	pendingA := apply("a", "2")                     // so is one of a's
	defer pendingA.Discard()
	setNow(t0.Add(35 * time.Minute)) // 11:05
	// Another batch of a commits past the period's end.
	if err := apply("a", "3").Commit(); err != nil {
		t.Fatal(err)
	}
	at, ls := lists("a")
	if !at.Equal(t0.Add(29*time.Minute + 59*time.Second)) {
		t.Errorf("a's horizon %v, want its pending event's time", at)
	}
	if len(ls) != 2 || ls[0].Until(at).IsZero() || !ls[1].Until(at).IsZero() {
		t.Fatalf("a's lists at %v: %+v; the first has a successor, so it is closed, and only the last is open", at, ls)
	}
	pendingA.Discard() // it would conflict: a's counter moved on
	if at, _ := lists("a"); !at.Equal(t0.Add(35 * time.Minute)) {
		t.Errorf("a's horizon %v after its pending batch went, want the clock; b's pending page must not hold it", at)
	}
	if at, _ := lists("b"); !at.Equal(t0.Add(29*time.Minute + 59*time.Second)) {
		t.Errorf("b's horizon %v, want its pending event's time", at)
	}
	if err := slowB.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestSetResources: a set's Resource List joins its members (keys) with the
// record states, for sets dense and sparse in the repository (the state
// iterator steps, or seeks), within ranges and limits, after records moved
// between sets, changed or were deleted; and a membership written by an
// earlier version (with a copy of the state) reads the current state.
func TestSetResources(t *testing.T) {
	db := openMem(t, nil)
	const n = 400
	id := func(i int) string { return fmt.Sprintf("oai:x:%04d", i) }
	setsOf := func(i, round int) []string {
		var s []string
		if i%5 != 0 {
			s = append(s, "dense")
		}
		if i%37 == round {
			s = append(s, "sparse")
		}
		if i >= 100 && i < 130 {
			s = append(s, "block")
		}
		return s
	}
	write := func(round int) {
		t.Helper()
		b := openBatch(t, db, "r", "p")
		for i := range n {
			old, _ := b.Get(id(i))
			rec := &Record{Identifier: id(i), Sets: setsOf(i, round), Length: int64(1000*round + i), Deleted: round == 1 && i%11 == 0}
			ev := &Event{Identifier: id(i), Change: Created, SetsAfter: rec.Members()}
			if old != nil {
				ev.Change, ev.SetsBefore = Updated, old.Members()
			}
			if rec.Deleted {
				ev.Change = Deleted
			}
			if err := b.Apply(rec, []byte("<x/>"), ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(round int) {
		t.Helper()
		s := begin(t, db)
		defer s.done()
		for _, tc := range []struct {
			set, start, end string
			limit           int
		}{
			{"dense", "", "", n}, {"sparse", "", "", n}, {"block", "", "", n},
			{"dense", id(57), id(300), n}, {"sparse", id(38), "", 3}, {"block", id(110), id(120), 4}, {"none", "", "", n},
		} {
			var want, got []string
			for i := range n {
				if round == 1 && i%11 == 0 || !slices.Contains(setsOf(i, round), tc.set) || id(i) < tc.start || tc.end != "" && id(i) >= tc.end {
					continue
				}
				if len(want) < tc.limit {
					want = append(want, fmt.Sprint(id(i), " ", 1000*round+i))
				}
			}
			err := s.Resources("r", "p", tc.set, tc.start, tc.end, tc.limit, func(r *Record) error {
				got = append(got, fmt.Sprint(r.Identifier, " ", r.Length))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("round %d, %+v:\n got %q\nwant %q", round, tc, got, want)
			}
		}
	}
	write(0)
	check(0)
	write(1) // sparse moves by one record, every 11th record deleted, all lengths change
	check(1)
	// A membership as an earlier version wrote it, with a stale state copy.
	if err := db.bdb.Update(func(txn *badger.Txn) error {
		return txn.Set(key('m', "r", "p", "dense", id(1)), encodeRecord(&Record{Length: 7}, stems{}))
	}); err != nil {
		t.Fatal(err)
	}
	check(1)
}

// TestUpdatesTakeTurns: Badger detects no conflicts (open.go), so concurrent
// read-change-write updates of one key must not lose each other's change.
func TestUpdatesTakeTurns(t *testing.T) {
	db := openMem(t, nil)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := db.UpdateRepoInfo("r", func(ri *RepoInfo) {
				time.Sleep(time.Millisecond) // between the read and the write
				ri.AdminEmails = append(ri.AdminEmails, fmt.Sprint(i))
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s := begin(t, db)
	defer s.done()
	ri, err := s.RepoInfo("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(ri.AdminEmails) != n {
		t.Errorf("%d of %d updates kept", len(ri.AdminEmails), n)
	}
}

// openBatch starts a batch that the test's end discards, so a failing check
// does not leave it open (Close would wait for it until the test timed out).
func openBatch(t testing.TB, db *DB, repo, prefix string) *Batch {
	t.Helper()
	b, err := db.NewBatch(repo, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Discard)
	return b
}
