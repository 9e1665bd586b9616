package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestMirrorOpenAfterCrashBetweenCreateAndSize: a mirror killed right after
// Badger created a memtable or value-log file leaves it empty; its state
// still opens and keeps what was committed (found by TestMirrorChurn).
func TestMirrorOpenAfterCrashBetweenCreateAndSize(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenMirror(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Batch()
	b.PutResource("set1", &MirrorResource{URI: "http://s/a", Length: 3})
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"00009.mem", "000009.vlog"} {
		if err := os.WriteFile(filepath.Join(dir, "state", name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err = OpenMirror(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if r, err := m.Resource("set1", "http://s/a"); err != nil || r == nil || r.Length != 3 {
		t.Fatalf("after reopening: %+v, %v", r, err)
	}
}

func TestMirrorState(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenMirror(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenMirror(dir, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second process on one state directory: %v, want ErrLocked", err)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	b := m.Batch()
	for _, uri := range []string{"http://s/b", "http://s/a", "http://s/c"} {
		if err := b.PutResource("set1", &MirrorResource{URI: uri, Path: "s/" + uri[9:], Length: 3, MD5: "m", From: "dump", Applied: now}); err != nil {
			t.Fatal(err)
		}
	}
	b.PutResource("set2", &MirrorResource{URI: "http://s/a", From: "list"})
	b.PutLog(MirrorLog{Bytes: 120})
	b.PutSet("set1", MirrorSet{BaselineAt: now, Lists: map[string]time.Time{"http://s/cl1": now}})
	if b.Len() != 6 {
		t.Fatalf("batch of %d writes, want 6", b.Len())
	}
	if r, _ := m.Resource("set1", "http://s/a"); r != nil {
		t.Fatal("a batch is visible before it commits")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	var uris []string
	m.Resources(context.Background(), "set1", func(r *MirrorResource) error { uris = append(uris, r.URI); return nil })
	if len(uris) != 3 || uris[0] != "http://s/a" || uris[2] != "http://s/c" {
		t.Errorf("set1 resources %v, want a, b, c in order and none of set2", uris)
	}
	m.Close()

	// Reopened: everything committed is there.
	m, err = OpenMirror(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r, err := m.Resource("set2", "http://s/a")
	if err != nil || r == nil || r.From != "list" {
		t.Fatalf("after reopening: %+v %v", r, err)
	}
	s, _ := m.Set("set1")
	l, _ := m.Log()
	if !s.BaselineAt.Equal(now) || !s.Lists["http://s/cl1"].Equal(now) || l.Bytes != 120 {
		t.Errorf("after reopening: set %+v, log %+v", s, l)
	}
	// Sets are those with a progress record (set2 has resources alone).
	b = m.Batch()
	b.PutSet("http://s/x/capabilitylist.xml", MirrorSet{})
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if sets, err := m.Sets(context.Background()); err != nil || !slices.Equal(sets, []string{"http://s/x/capabilitylist.xml", "set1"}) {
		t.Errorf("Sets: %q %v, want the two with progress, in order", sets, err)
	}
}

func TestMirrorResourcesAfter(t *testing.T) {
	m, err := OpenMirror(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b := m.Batch()
	// "http://s/a/b" extends "http://s/a": the page after "a" starts at
	// it, without repeating "a".
	all := []string{"http://s/a", "http://s/a/b", "http://s/b", "http://s/c", "http://s/d"}
	for _, uri := range all {
		b.PutResource("set1", &MirrorResource{URI: uri})
		b.PutResource("set0", &MirrorResource{URI: uri + "/other"})
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, limit := range []int{1, 2, 3, 5, 6} {
		var got []string
		pages := 0
		for after := ""; ; pages++ {
			n := 0
			err := m.ResourcesAfter(ctx, "set1", after, limit, func(r *MirrorResource) error {
				got = append(got, r.URI)
				after = r.URI
				n++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n > limit {
				t.Fatalf("limit %d: a page of %d", limit, n)
			}
			if n < limit {
				break
			}
		}
		if !slices.Equal(got, all) {
			t.Errorf("limit %d: %q in %d pages, want %q", limit, got, pages, all)
		}
	}
}

func TestMirrorMarks(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenMirror(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	has := func(k *MirrorMarks, v string) bool {
		t.Helper()
		ok, err := k.Has(v)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	k, err := m.Marks("listed")
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Marks("listedx")
	if err != nil {
		t.Fatal(err)
	}
	// More than a page of drop, so that dropping takes several pages.
	for i := range marksPage + 7 {
		if err := k.Add(fmt.Sprintf("http://s/%06d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Add("a/b.xml"); err != nil {
		t.Fatal(err)
	}
	if has(other, "a/b.xml") {
		t.Error("a mark is visible before Flush")
	}
	if err := k.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := other.Flush(); err != nil {
		t.Fatal(err)
	}
	if !has(k, "http://s/000001") || !has(k, fmt.Sprintf("http://s/%06d", marksPage+6)) || has(k, "http://s/0000010") || has(k, "a/b.xml") {
		t.Error("Has: wrong after Flush (or marks of another name seen)")
	}
	// Check looks many up in one read, in the order given; Each reads
	// them back in order, a page at a time.
	var checked []string
	err = k.Check([]string{"http://s/000003", "nope", "http://s/000002"}, func(v string, ok bool) error {
		checked = append(checked, fmt.Sprintf("%s=%v", v, ok))
		return nil
	})
	if want := []string{"http://s/000003=true", "nope=false", "http://s/000002=true"}; err != nil || !slices.Equal(checked, want) {
		t.Errorf("Check: %q %v, want %q", checked, err, want)
	}
	stop := errors.New("stop")
	if err := k.Check([]string{"a", "b"}, func(string, bool) error { return stop }); err != stop {
		t.Errorf("Check: %v, want fn's error as it is", err)
	}
	n, last := 0, ""
	err = k.Each(context.Background(), func(v string) error {
		if v <= last {
			t.Fatalf("Each: %q after %q", v, last)
		}
		n, last = n+1, v
		return nil
	})
	if err != nil || n != marksPage+7 {
		t.Errorf("Each: %d marks, %v; want %d", n, err, marksPage+7)
	}
	// Dropping "listed" leaves "listedx", whose name it begins.
	if err := k.Drop(); err != nil {
		t.Fatal(err)
	}
	if has(k, "http://s/000001") || !has(other, "a/b.xml") {
		t.Error("Drop: the marks stay, or another name's went with them")
	}
	// A killed audit leaves flushed marks behind: the next Marks of that
	// name starts empty, after a reopening too.
	if err := other.Add("c.xml"); err != nil {
		t.Fatal(err)
	}
	if err := other.Flush(); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m, err = OpenMirror(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	again, err := m.Marks("listedx")
	if err != nil {
		t.Fatal(err)
	}
	if has(again, "a/b.xml") || has(again, "c.xml") {
		t.Error("a new set of marks holds what the last one left")
	}
	// Drop with marks not flushed discards them.
	again.Add("d.xml")
	if err := again.Drop(); err != nil {
		t.Fatal(err)
	}
	if has(again, "d.xml") {
		t.Error("an unflushed mark survived Drop")
	}
}
