package store

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// TestDiskFull: below the reserve every write is refused with an error that
// names the directory and the free space, reads go on, and writes resume when
// space returns; a store opened on a full disk opens read-only and becomes
// writable once space is back.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	var free atomic.Uint64
	free.Store(10 << 30)
	o := policy(Options{Dir: dir, MinFree: 1 << 30, FreeSpace: func(string) (uint64, uint64, error) { return free.Load(), 100 << 30, nil }})
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	write := func(id string) error {
		b, err := db.NewBatch("r", "p")
		if err != nil {
			return err
		}
		if err := b.Apply(&Record{Identifier: id}, []byte("<x/>"), &Event{Identifier: id, Change: Created}); err != nil {
			b.Discard()
			return err
		}
		return b.Commit()
	}
	if err := write("a"); err != nil {
		t.Fatal(err)
	}
	free.Store(300 << 20)
	err = write("b")
	var se *SpaceError
	if !errors.As(err, &se) || !errors.Is(err, ErrDiskFull) || se.Free != 300<<20 || se.Reserve != 1<<30 ||
		!strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "300.0 MiB free, below the reserve of 1.0 GiB") {
		t.Fatalf("write on a full disk: %v", err)
	}
	if err := db.UpdateRepoInfo("r", func(*RepoInfo) {}); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("small writes too: %v", err)
	}
	s := begin(t, db)
	if m, _ := s.Metadata("r", "p", "a"); string(m) != "<x/>" {
		t.Fatal("reads go on")
	}
	s.done()
	free.Store(2 << 30)
	if err := write("b"); err != nil {
		t.Fatalf("space is back: %v", err)
	}
	db.Close()

	free.Store(100 << 20)
	db, err = Open(o)
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if !db.ReadOnly() {
		t.Fatal("expected a read-only store")
	}
	snap := begin(t, db)
	if m, _ := snap.Metadata("r", "p", "b"); string(m) != "<x/>" {
		t.Fatal("a read-only store serves what is stored")
	}
	if err := write("c"); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("write to a read-only store: %v", err)
	}
	free.Store(5 << 30)
	if err := write("c"); !errors.As(err, &se) || !se.ReadOnly {
		t.Fatalf("space back, not yet reopened: %v", err)
	}
	if db.tryUpgrade() {
		t.Fatal("reopened while a snapshot was reading")
	}
	snap.done()
	if !db.tryUpgrade() || db.ReadOnly() {
		t.Fatal("not reopened for writing")
	}
	if err := write("c"); err != nil {
		t.Fatalf("write after reopening: %v", err)
	}
	if m, _ := begin(t, db).Metadata("r", "p", "c"); string(m) != "<x/>" {
		t.Fatal("write lost")
	}
}

// TestReserveFloor: a reserve below four memtables is raised to them, so a
// memtable flush and a compaction always have room (issue 21, item 3), and
// a fresh directory below the reserve is refused with a clear error instead
// of Badger's "no manifest found, required for read-only db" (item 8).
func TestReserveFloor(t *testing.T) {
	dir := t.TempDir()
	free := uint64(40 << 20)
	fs := func(string) (uint64, uint64, error) { return free, 100 << 20, nil }
	_, err := Open(policy(Options{Dir: dir, MinFree: 1 << 20, FreeSpace: fs}))
	if err == nil || !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "a new store cannot be created there") || strings.Contains(err.Error(), "manifest") {
		t.Fatalf("a fresh directory with 40 MiB free and min_free 1 MiB: %v", err)
	}
	free = 80 << 20
	db, err := Open(policy(Options{Dir: dir, MinFree: 1 << 20, FreeSpace: fs}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, reserve, _ := db.Space(); reserve != ReserveFloor(DefaultMemTableSize) {
		t.Errorf("reserve %d, want the floor %d", reserve, ReserveFloor(DefaultMemTableSize))
	}
	free = 50 << 20
	if _, err := db.NewBatch("r", "p"); !errors.Is(err, ErrDiskFull) {
		t.Errorf("a write with 50 MiB free under a 1 MiB min_free: %v, want refused at the 64 MiB floor", err)
	}
}

// TestSize: the store's size on disk is what its files take, not the 0
// Badger reports with its metrics off (issue 21, item 10).
func TestSize(t *testing.T) {
	db, err := Open(policy(Options{Dir: t.TempDir(), MinFree: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := openBatch(t, db, "r", "p")
	for i := range 2000 {
		id := strings.Repeat("x", 10) + strings.Repeat("y", i%7) + string(rune('a'+i%26)) + fmt.Sprint(i)
		if err := b.Apply(&Record{Identifier: id}, []byte(strings.Repeat("<x/>", 600)), &Event{Identifier: id, Change: Created}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	lsm, vlog := db.Size()
	if vlog < 2000*2400 || lsm <= 0 {
		t.Errorf("size on disk: lsm %d, vlog %d; 2000 records of 2,400 bytes went to the value log", lsm, vlog)
	}
}
