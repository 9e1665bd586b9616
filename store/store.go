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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/skl"
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
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ChangeListLimit <= 0 || opts.ChangeListPeriod <= 0 {
		return nil, fmt.Errorf("store: a Change List limit and period are required (got %d, %s)", opts.ChangeListLimit, opts.ChangeListPeriod)
	}
	db := &DB{log: opts.Logger, now: opts.Now, dir: opts.Dir, stop: make(chan struct{}),
		clLimit: opts.ChangeListLimit, clPeriod: opts.ChangeListPeriod, clBytes: opts.ChangeListBytes, entryBytes: opts.ChangeEntryBytes,
		space:   spaceCheck{dir: opts.Dir, min: opts.MinFree, free: opts.FreeSpace, inMemory: opts.InMemory},
		horizon: horizon{now: opts.Now, pending: map[*Batch]time.Time{}}}
	bo := badger.DefaultOptions(opts.Dir)
	if opts.InMemory {
		bo = badger.DefaultOptions("").WithInMemory(true)
	} else {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("data dir %s: %w", opts.Dir, err)
		}
		lock, err := lockDir(opts.Dir)
		if err != nil {
			return nil, err
		}
		db.lock = lock
	}
	if !opts.InMemory {
		if err := removeEmptyLogs(opts.Dir, db.log); err != nil {
			db.unlock()
			return nil, err
		}
	}
	// Two memtables of 16 MiB: against three of 8 MiB, half as many level-0
	// tables to build and compact, which took the 100,000-record harvest
	// from ~10,000 to ~14,000 records/s; the live heap during it peaks near
	// 200 MiB, inside the 256 MiB soft limit (docs/benchmarks.md).
	memTable := opts.MemTableSize
	if memTable <= 0 {
		memTable = DefaultMemTableSize
	}
	if db.space.min != 0 {
		// Below the floor a memtable flush or a compaction can run out of
		// disk inside a memory-mapped file: SIGBUS (issue 21).
		db.space.min = max(db.space.min, ReserveFloor(memTable))
	}
	bo = bo.WithLogger(badgerLogger{opts.Logger.With("component", "badger")}).
		WithSyncWrites(opts.SyncWrites).
		WithNumVersionsToKeep(1).
		WithMemTableSize(memTable).
		WithNumMemtables(2).
		// No block cache: without compression a table block is read straight
		// from the memory-mapped file, so a cache of blocks only duplicates
		// the page cache (and its monitor logged a low hit rate every minute).
		WithBlockCacheSize(0).
		WithIndexCacheSize(16 << 20).
		WithValueLogFileSize(256 << 20).
		// Tables at every level keep the base size: Badger sizes compaction
		// buffers at twice the table size, and by default tables double per
		// level, so memory would climb as the store grows.
		WithNumCompactors(2).
		WithMetricsEnabled(false)
	bo.TableSizeMultiplier = 1
	// Blocks hold small binary states and keys (the metadata bytes live in the
	// value log): compression buys little and costs CPU and per-builder buffers.
	bo = bo.WithCompression(options.None)
	if !opts.InMemory {
		// Metadata bytes go to the value log, keeping the LSM tree small so list
		// scans over record states stay fast. (In memory there is no value log.)
		bo = bo.WithValueThreshold(1 << 10)
	}
	// Badger refuses a transaction at 15% of the memtable size or at that size
	// divided by a skiplist node; batches stay at 90% of both.
	db.maxBatchSize = 15 * bo.MemTableSize / 100 * 9 / 10
	db.maxBatchCount = 15 * bo.MemTableSize / 100 / int64(skl.MaxNodeSize) * 9 / 10
	db.valueThreshold = bo.ValueThreshold
	db.bo = bo
	// On a full disk Badger cannot even open for writing (it writes a new
	// memtable file at once): open read-only, so what is stored stays served,
	// and become writable when space returns.
	if err := db.space.check(); err != nil {
		if !errors.Is(err, ErrDiskFull) {
			db.unlock()
			return nil, err
		}
		if !opts.InMemory && !hasManifest(opts.Dir) {
			// Read-only needs a store to read; creating one needs room.
			db.unlock()
			return nil, fmt.Errorf("%w; a new store cannot be created there: free space, or give data_dir a file system with more room", err)
		}
		db.log.Error("store opened read-only: harvests are refused until space is freed", "err", err)
		db.readOnly = true
		bo = bo.WithReadOnly(true)
	}
	bdb, err := badger.Open(bo)
	if err != nil {
		db.unlock()
		return nil, fmt.Errorf("open store in %s: %w", opts.Dir, err)
	}
	db.bdb = bdb
	if !opts.InMemory && opts.GCInterval > 0 {
		db.every(opts.GCInterval, db.collectGarbage)
	}
	if db.readOnly {
		// Reopen for writing once space is back and no reader holds it.
		db.every(30*time.Second, db.tryUpgrade)
	}
	if !opts.InMemory && !opts.SyncWrites && opts.SyncInterval > 0 {
		db.every(opts.SyncInterval, func() bool { db.syncWritten(opts.AfterSync); return false })
	}
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

// removeEmptyLogs deletes zero-length memtable and value-log files. Badger
// creates such a file, then sizes it; a process killed between the two leaves
// a file that can hold no data but that Badger v4 refuses to open ("Create a
// new file"), so the store could never be opened again.
func removeEmptyLogs(dir string, log *slog.Logger) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("data dir %s: %w", dir, err)
	}
	for _, e := range entries {
		if name := e.Name(); e.Type().IsRegular() && (strings.HasSuffix(name, ".mem") || strings.HasSuffix(name, ".vlog")) {
			info, err := e.Info()
			if err != nil || info.Size() != 0 {
				continue
			}
			path := filepath.Join(dir, name)
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("data dir %s: remove empty %s left by a crash: %w", dir, name, err)
			}
			log.Warn("removed an empty Badger log file left by a crash", "file", path)
		}
	}
	return nil
}

func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "rsbridge.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid := make([]byte, 32)
		n, _ := f.ReadAt(pid, 0)
		f.Close()
		holder := strings.TrimSpace(string(pid[:n]))
		if holder == "" {
			holder = "unknown"
		}
		return nil, fmt.Errorf("%w: %s (pid %s); stop that process or set another data_dir", ErrLocked, dir, holder)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

func (db *DB) unlock() {
	if db.lock != nil {
		syscall.Flock(int(db.lock.Fd()), syscall.LOCK_UN)
		db.lock.Close()
		db.lock = nil
	}
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

// update runs fn in a read-write transaction, refused on a full disk.
func (db *DB) update(fn func(txn *badger.Txn) error) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if err := db.writable(); err != nil {
		return err
	}
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

// badgerLogger sends Badger's log lines through slog, each on one line.
// Badger's cache-size advice (a pair of multi-line warnings every minute) is
// tuning information, logged at debug.
type badgerLogger struct{ l *slog.Logger }

func oneLine(f string, a ...any) string {
	return strings.Join(strings.Fields(fmt.Sprintf(f, a...)), " ")
}

func (b badgerLogger) Errorf(f string, a ...any) { b.l.Error(oneLine(f, a...)) }
func (b badgerLogger) Warningf(f string, a ...any) {
	if strings.Contains(f, "might be too small") || strings.HasPrefix(f, "Cache life expectancy") {
		b.l.Debug(oneLine(f, a...))
		return
	}
	b.l.Warn(oneLine(f, a...))
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
