// Package store keeps rsbridge's state in Badger: the current state and bytes of
// every harvested record, the append-only change events, set membership, harvest
// checkpoints and repository descriptions. It is the only package that imports
// Badger.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Options configure Open.
type Options struct {
	Dir      string // data directory; ignored when InMemory
	InMemory bool   // for tests
	// SyncWrites fsyncs every commit. Without it, SyncInterval > 0 fsyncs
	// whatever was written at most that often (group commit): a power loss
	// can then lose the last interval's commits, all of them or a prefix,
	// never a part of one, and the harvest redoes them from its checkpoint.
	// A process crash loses nothing either way.
	SyncWrites   bool
	SyncInterval time.Duration
	// AfterSync, for tests, runs after each periodic sync with every writer
	// and reader held off, so the directory can be copied as a power loss
	// would leave it.
	AfterSync  func()
	GCInterval time.Duration
	Logger     *slog.Logger
	Now        func() time.Time // event clock; tests replace it
	// MemTableSize bounds Badger's memtable and so the largest transaction
	// (default 16 MiB); tests make it small to exercise transaction splitting.
	MemTableSize int64
	// ValueLogFileSize is the size of a value-log file (default 256 MiB);
	// tests make it small to have several.
	ValueLogFileSize int64
	// ChangeListLimit and ChangeListPeriod cut the Change Lists of every
	// resource set; both are required. The store owns this policy: Batch cuts
	// lists with it and Snap reports the open list with it. Changing them
	// affects only lists started afterwards.
	ChangeListLimit  int
	ChangeListPeriod time.Duration
	// ChangeListBytes, with ChangeEntryBytes, bounds a Change List's size:
	// a list whose next entry would take it past ChangeListBytes closes at
	// its last entry, like a list that holds ChangeListLimit entries.
	// ChangeEntryBytes returns an upper bound of the bytes one entry about
	// the identifier takes in a served list; nil: lists are cut by count
	// and period only.
	ChangeListBytes  int64
	ChangeEntryBytes func(repo, prefix, id string) int64
	// MappedLimit bounds the file-backed resident memory (Badger's mapped
	// tables and value log): above it the store pages its files out
	// (mapped.go). 0: the kernel decides.
	MappedLimit uint64
	// MinFree is the free space the data directory must keep: below it every
	// write is refused with a *SpaceError before Badger could run out of disk
	// inside a memory-mapped file (which kills the process with SIGBUS).
	// Zero means the default: 5 % of the file system, at least 256 MiB and at
	// most 1 GiB.
	MinFree uint64
	// FreeSpace reports the free and total bytes of the file system holding
	// dir; tests replace it (default statfs).
	FreeSpace func(dir string) (free, total uint64, err error)
}

// DB is an open store. Close it to stop the value-log GC and release the lock.
type DB struct {
	// mu guards bdb against its one swap: a store opened read-only because
	// the disk was full becomes writable when space returns. Every use of bdb
	// holds a read lock; the swap takes the write lock only when it is free.
	mu       sync.RWMutex
	updateMu sync.Mutex // one update (read, change, write) at a time: Badger does not detect conflicts (open.go)
	bdb      *badger.DB
	bo       badger.Options
	readOnly bool // guarded by mu
	lock     *os.File
	log      *slog.Logger
	now      func() time.Time
	dir      string
	space    spaceCheck

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	valueThreshold int64 // Badger's, for the batch size estimate
	maxBatchSize   int64 // the transaction limits the batch stays below
	maxBatchCount  int64
	clLimit        int
	clPeriod       time.Duration
	clBytes        int64
	entryBytes     func(repo, prefix, id string) int64
	written        atomic.Bool // something was committed since the last periodic sync
	setsGen        atomic.Uint64
	horizon        horizon // what readers can rely on (horizon.go)
	stemCache      stemCache
	mapped         mapped
}

// DefaultMemTableSize is Badger's memtable size unless Options.MemTableSize
// says otherwise.
const DefaultMemTableSize = 16 << 20

// ReserveFloor is the least free space a writable store keeps whatever
// Options.MinFree says: four memtables, room for a memtable flush and the
// compaction it starts (64 MiB by default). With less, Badger can run out of
// disk inside a memory-mapped file, which kills the process with SIGBUS.
func ReserveFloor(memTable int64) uint64 { return 4 * uint64(memTable) }

// hasManifest reports whether dir holds a Badger store.
func hasManifest(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "MANIFEST"))
	return err == nil
}

// ErrLocked reports a data directory held by another process.
var ErrLocked = errors.New("data directory is in use by another rsbridge process")

// Open opens (creating if needed) the store. A directory already held by a running
// rsbridge gives a one-line error wrapping ErrLocked.
func Open(opts Options) (*DB, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	db := newDB(opts)
	if !opts.InMemory {
		if err := db.claimDir(); err != nil {
			return nil, err
		}
	}
	memTable := opts.MemTableSize
	if memTable <= 0 {
		memTable = DefaultMemTableSize
	}
	if db.space.min != 0 {
		// Below the floor a memtable flush or a compaction can run out of
		// disk inside a memory-mapped file: SIGBUS (issue 21).
		db.space.min = max(db.space.min, ReserveFloor(memTable))
	}
	db.setOptions(badgerOptions(opts, memTable))
	bo, err := db.openOptions()
	if err != nil {
		db.unlock()
		return nil, err
	}
	bdb, err := badger.Open(bo)
	if err != nil {
		db.unlock()
		return nil, fmt.Errorf("open store in %s: %w", opts.Dir, err)
	}
	db.bdb = bdb
	db.startLoops(opts)
	return db, nil
}

// every runs fn in a goroutine of the store every interval until the store
// closes or fn reports that it is done; Close waits for it.
func (db *DB) every(interval time.Duration, fn func() (done bool)) {
	db.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-db.stop:
				return
			case <-t.C:
				if fn() {
					return
				}
			}
		}
	})
}

// syncWritten fsyncs what was written since the last time, if anything
// (group commit).
func (db *DB) syncWritten(after func()) {
	if !db.written.Swap(false) {
		return
	}
	if after == nil {
		if err := db.Sync(); err != nil {
			db.log.Error("periodic sync failed", "err", err)
		}
		return
	}
	// Tests: hold everyone off, so what the hook sees on disk is exactly
	// what the sync made durable.
	db.mu.Lock()
	if err := db.bdb.Sync(); err != nil {
		db.log.Error("periodic sync failed", "err", err)
	}
	after()
	db.mu.Unlock()
}

// Sync makes everything committed so far durable (fsync of the value log and
// the memtable's log). Harvests call it when they end.
func (db *DB) Sync() error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.readOnly {
		return nil
	}
	if err := db.bdb.Sync(); err != nil {
		return fmt.Errorf("store: sync %s: %w", db.dir, err)
	}
	return nil
}

// Close stops the GC loop, closes Badger and releases the directory lock. Later
// calls return the first call's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		close(db.stop)
		db.wg.Wait()
		db.mu.Lock()
		defer db.mu.Unlock()
		if err := db.bdb.Close(); err != nil {
			db.closeErr = fmt.Errorf("close store: %w", err)
		}
		db.unlock()
	})
	return db.closeErr
}

// collectGarbage rewrites value-log files while enough of them is garbage
// (or until the store closes).
func (db *DB) collectGarbage() bool {
	n := 0
	for {
		select {
		case <-db.stop:
			return true
		default:
		}
		if err := db.runGC(); err != nil {
			if !errors.Is(err, badger.ErrNoRewrite) && !errors.Is(err, badger.ErrRejected) && !errors.Is(err, ErrDiskFull) {
				db.log.Warn("value log GC failed", "err", err)
			}
			break
		}
		n++
	}
	if n > 0 {
		db.log.Info("value log GC rewrote files", "files", n)
	}
	return false
}

// runGC rewrites one value-log file if enough of it is garbage; it needs
// space for the rewrite.
func (db *DB) runGC() error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.readOnly {
		return ErrDiskFull
	}
	if err := db.space.check(); err != nil {
		return err
	}
	return db.bdb.RunValueLogGC(0.5)
}

// update runs fn in a read-write transaction, refused on a full disk. Updates
// run one at a time, so what fn reads no other update changes before it
// commits (the hub settles the deliveries of one notification in parallel,
// each decrementing its Pending; a run and an admin request both update a
// repository's description). Page batches do not take this path: each
// (repository, format) has one writer, its run, and they share no keys with
// updates.
func (db *DB) update(fn func(txn *badger.Txn) error) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if err := db.writable(); err != nil {
		return err
	}
	db.updateMu.Lock()
	defer db.updateMu.Unlock()
	if err := db.bdb.Update(fn); err != nil {
		return err
	}
	db.written.Store(true)
	return nil
}

// writable reports why the store cannot take writes now (a *SpaceError), or
// nil. The caller holds db.mu.
func (db *DB) writable() error {
	if db.readOnly {
		if err := db.space.check(); err != nil {
			return err
		}
		return &SpaceError{Dir: db.dir, ReadOnly: true}
	}
	return db.space.check()
}
func (b badgerLogger) Infof(f string, a ...any)  { b.l.Debug(oneLine(f, a...)) }
func (b badgerLogger) Debugf(f string, a ...any) { b.l.Debug(oneLine(f, a...)) }

func getJSON(txn *badger.Txn, k []byte, v any) (bool, error) {
	it, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, it.Value(func(b []byte) error { return json.Unmarshal(b, v) })
}

func wrapKey(err error, repo, prefix, id string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: record %s/%s/%q: %w", repo, prefix, id, err)
}

// PutCheckpoint stores a checkpoint outside a page batch (a run that stops
// without committing a page still has something to record).
func (db *DB) PutCheckpoint(repo, prefix string, cp Checkpoint) error {
	b, err := json.Marshal(cp)
	if err == nil {
		err = db.update(func(txn *badger.Txn) error { return txn.Set(key('c', repo, prefix), b) })
	}
	if err != nil {
		return fmt.Errorf("store: checkpoint %s/%s: %w", repo, prefix, err)
	}
	return nil
}

// UpdateRepoInfo reads, changes and writes a repository description atomically.
func (db *DB) UpdateRepoInfo(repo string, fn func(*RepoInfo)) error {
	return db.update(func(txn *badger.Txn) error {
		ri := RepoInfo{Name: repo}
		if _, err := getJSON(txn, key('i', repo), &ri); err != nil {
			return err
		}
		fn(&ri)
		b, err := json.Marshal(ri)
		if err != nil {
			return err
		}
		return txn.Set(key('i', repo), b)
	})
}

// ReplaceSets stores the repository's sets and drops sets no longer reported,
// in one transaction when it fits (a repository with tens of thousands of sets
// is written in several, new names first, stale ones dropped last).
func (db *DB) ReplaceSets(repo string, sets []SetInfo) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if err := db.writable(); err != nil {
		return err
	}
	keep := make(map[string]bool, len(sets))
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	for _, s := range sets {
		keep[s.Spec] = true
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		if err := wb.Set(key('s', repo, s.Spec), b); err != nil {
			return fmt.Errorf("store: sets of %s: %w", repo, err)
		}
	}
	p := prefixKey('s', repo)
	err := db.bdb.View(func(txn *badger.Txn) error {
		return scan(txn, p, false, func(k, _ []byte) error {
			if !keep[string(k[len(p):])] {
				return wb.Delete(slices.Clone(k))
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: sets of %s: %w", repo, err)
	}
	if err := wb.Flush(); err != nil {
		return err
	}
	db.setsGen.Add(1)
	return nil
}

// SetsGeneration changes whenever ReplaceSets stored new set lists, so
// readers can cache what they derive from them.
func (db *DB) SetsGeneration() uint64 { return db.setsGen.Load() }

// scan iterates keys with the prefix in order, handing out values only when asked.
func scan(txn *badger.Txn, prefix []byte, values bool, fn func(k, v []byte) error) error {
	return scanAt(txn, prefix, prefix, values, fn)
}

// errStop ends a scan early without an error.
var errStop = errors.New("stop scan")

// scanFrom calls fn with the key and value of every key under prefix from
// start on; fn returns errStop to end early.
func scanFrom(txn *badger.Txn, prefix, start []byte, fn func(k, v []byte) error) error {
	if err := scanAt(txn, prefix, start, true, fn); err != nil && !errors.Is(err, errStop) {
		return err
	}
	return nil
}

func scanAt(txn *badger.Txn, prefix, start []byte, values bool, fn func(k, v []byte) error) error {
	o := badger.DefaultIteratorOptions
	o.Prefix = prefix
	o.PrefetchValues = values
	o.PrefetchSize = 64
	it := txn.NewIterator(o)
	defer it.Close()
	for it.Seek(start); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		var err error
		if values {
			err = item.Value(func(v []byte) error { return fn(item.Key(), v) })
		} else {
			err = fn(item.Key(), nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ClearSeen removes the marks of an earlier reconciliation pass.
func (db *DB) ClearSeen(repo, prefix string) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if err := db.writable(); err != nil {
		return err
	}
	return db.bdb.DropPrefix(prefixKey('p', repo, prefix))
}
