package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func openMem(t *testing.T, now func() time.Time) *DB {
	t.Helper()
	db, err := Open(Options{InMemory: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(Options{Dir: dir})
	if !errors.Is(err, ErrLocked) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(Options{Dir: dir}) // released on Close
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
	b, err := db.NewBatch("r", "oai_dc")
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"oai:x:1", "oai:x:dept/論文 2:v1", "oai:x:3"}
	for _, id := range ids {
		if r, _ := b.Get(id); r != nil {
			t.Fatal("unexpected record")
		}
		ev := &Event{Identifier: id, Change: Created, SetsAfter: ExpandSets([]string{"a:b"})}
		if err := b.Append(ev); err != nil {
			t.Fatal(err)
		}
		if err := b.Put(&Record{Identifier: id, Sets: []string{"a:b"}, Modified: ev.Time, Seq: ev.Seq}, []byte("<x/>")); err != nil {
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
	// Move one record out of a:b into c, delete another.
	b, _ = db.NewBatch("r", "oai_dc")
	b.Append(&Event{Identifier: ids[0], Change: Updated, SetsBefore: []string{"a", "a:b"}, SetsAfter: []string{"c"}})
	b.Put(&Record{Identifier: ids[0], Sets: []string{"c"}}, nil)
	b.Append(&Event{Identifier: ids[1], Change: Deleted, SetsBefore: []string{"a", "a:b"}})
	b.Put(&Record{Identifier: ids[1], Deleted: true}, nil)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ctr, _ := db.Counter("r", "oai_dc")
	if ctr.Seq != 5 || ctr.Live != 2 || ctr.Deleted != 1 {
		t.Errorf("counter %+v", ctr)
	}
	var prev time.Time
	var changes []string
	db.Events(context.Background(), "r", "oai_dc", 0, func(e *Event) error {
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
	if m, _ := db.Metadata("r", "oai_dc", ids[1]); m != nil {
		t.Error("deleted record kept metadata")
	}
	if m, _ := db.Metadata("r", "oai_dc", ids[0]); string(m) != "<x/>" {
		t.Errorf("metadata %q", m)
	}
	if cp, _ := db.Checkpoint("r", "oai_dc"); cp.Token != "t2" {
		t.Errorf("checkpoint %+v", cp)
	}
	// Membership index: a holds only oai:x:3 now, c holds oai:x:1.
	members := func(set string) []string {
		var out []string
		if err := db.SetMembers(context.Background(), "r", "oai_dc", set, func(id string) error { out = append(out, id); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if a, c := members("a"), members("c"); !reflect.DeepEqual(a, []string{"oai:x:3"}) || !reflect.DeepEqual(c, []string{"oai:x:1"}) {
		t.Errorf("members a=%v c=%v", a, c)
	}
}

func TestBatchSplitsWhenTooBig(t *testing.T) {
	db, err := Open(Options{Dir: t.TempDir(), MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, _ := db.NewBatch("r", "p")
	meta := []byte(strings.Repeat("x", 900)) // below the value threshold, so it counts fully
	for i := 0; i < 500; i++ {               // ~2 MB, more than one transaction may hold
		id := fmt.Sprint("id-", i)
		ev := &Event{Identifier: id, Change: Created}
		if err := b.Append(ev); err != nil {
			t.Fatal(err)
		}
		if err := b.Put(&Record{Identifier: id, Seq: ev.Seq, Sets: []string{"a:b:c:d", "x:y:z"}}, meta); err != nil {
			t.Fatal(err)
		}
		if err := b.EndRecord(); err != nil {
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
	ctr, _ := db.Counter("r", "p")
	n := 0
	db.Records(context.Background(), "r", "p", func(*Record) error { n++; return nil })
	members := 0
	db.SetMembers(context.Background(), "r", "p", "x:y", func(string) error { members++; return nil })
	if ctr.Seq != 500 || ctr.Live != 500 || n != 500 || members != 500 {
		t.Fatalf("counter %+v records %d members %d", ctr, n, members)
	}
	if cp, _ := db.Checkpoint("r", "p"); cp.Token != "next" {
		t.Fatalf("checkpoint %+v", cp)
	}
}
