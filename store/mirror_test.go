package store

import (
	"context"
	"errors"
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
