package store

import (
	"errors"
	"fmt"
	"syscall"

	badger "github.com/dgraph-io/badger/v4"
)

// ErrDiskFull is wrapped by every *SpaceError.
var ErrDiskFull = errors.New("not enough free disk space")

// SpaceError refuses a write because the data directory's file system has
// less free space than the reserve. Badger writes through memory-mapped files
// (memtables, value log, new tables), and a write into such a file on a full
// disk kills the process with SIGBUS; so writes stop well before that.
type SpaceError struct {
	Dir           string
	Free, Reserve uint64
	ReadOnly      bool // the store was opened read-only on a full disk and waits to be reopened
}

func (e *SpaceError) Error() string {
	if e.ReadOnly && e.Reserve == 0 {
		return fmt.Sprintf("data directory %s: the store was opened read-only because the disk was full; space is back, and it becomes writable within a minute when no request is reading it", e.Dir)
	}
	return fmt.Sprintf("data directory %s has %s free, below the reserve of %s (store.min_free): harvests stop until space is freed; what is stored is still served",
		e.Dir, BytesIEC(e.Free), BytesIEC(e.Reserve))
}

func (e *SpaceError) Unwrap() error { return ErrDiskFull }

// spaceCheck compares the free space of the data directory with the reserve.
type spaceCheck struct {
	dir      string
	min      uint64 // 0: the default share of the file system
	free     func(dir string) (free, total uint64, err error)
	inMemory bool
}

// defaultReserve is 5 % of the file system, at least 256 MiB (room for a
// memtable flush, a compaction and a value-log file to grow) and at most 1 GiB.
func defaultReserve(total uint64) uint64 {
	return min(max(total/20, 256<<20), 1<<30)
}

func (c spaceCheck) check() error {
	free, reserve, err := c.space()
	if err != nil || free >= reserve {
		return err
	}
	return &SpaceError{Dir: c.dir, Free: free, Reserve: reserve}
}

// space reads the free bytes and works out the reserve; both are zero for an
// in-memory store.
func (c spaceCheck) space() (free, reserve uint64, err error) {
	if c.inMemory && c.free == nil {
		return 0, 0, nil
	}
	freeFn := c.free
	if freeFn == nil {
		freeFn = statfs
	}
	free, total, err := freeFn(c.dir)
	if err != nil {
		return 0, 0, fmt.Errorf("data directory %s: cannot read the free disk space: %w", c.dir, err)
	}
	reserve = c.min
	if reserve == 0 {
		reserve = defaultReserve(total)
	}
	return free, reserve, nil
}

func statfs(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// CheckSpace reports whether the store can take writes now: nil, or a
// *SpaceError naming the directory, the free space and the reserve.
func (db *DB) CheckSpace() error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.writable()
}

// Space reports the free bytes of the data directory's file system and the
// reserve writes keep (zero for an in-memory store).
func (db *DB) Space() (free, reserve uint64, err error) { return db.space.space() }

// ReadOnly reports whether the store is open read-only (the disk was full
// when it was opened, and it has not been reopened since).
func (db *DB) ReadOnly() bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.readOnly
}

// tryUpgrade reopens a read-only store for writing if space is back and no
// reader holds it; it reports whether the store is writable now.
func (db *DB) tryUpgrade() bool {
	if db.space.check() != nil || !db.mu.TryLock() {
		return false
	}
	defer db.mu.Unlock()
	if !db.readOnly {
		return true
	}
	if err := db.reopenWritable(); err != nil {
		db.log.Error("cannot reopen the store for writing; still read-only", "err", err)
		return false
	}
	db.log.Info("disk space is back: the store is writable again", "dir", db.dir)
	return true
}

// reopenWritable swaps the read-only Badger for a writable one; the caller
// holds db.mu for writing.
func (db *DB) reopenWritable() error {
	if err := db.bdb.Close(); err != nil {
		return err
	}
	bdb, err := badger.Open(db.bo)
	if err != nil {
		// Keep serving: go back to read-only.
		ro, rerr := badger.Open(db.bo.WithReadOnly(true))
		if rerr != nil {
			return fmt.Errorf("reopen %s: %w (and read-only: %v)", db.dir, err, rerr)
		}
		db.bdb = ro
		return err
	}
	db.bdb, db.readOnly = bdb, false
	return nil
}

// bytesIEC formats a byte count for people: 1.5 GiB, 300 MiB, 12 KiB.
func BytesIEC(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
