package store

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/skl"
)

// The steps of Open: options and defaults, the directory and its lock,
// Badger's options, and the loops a writable store runs.

// withDefaults fills in the logger and clock opts may leave out, and checks
// the Change List policy, which has no default.
func withDefaults(opts Options) (Options, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ChangeListLimit <= 0 || opts.ChangeListPeriod <= 0 {
		return opts, fmt.Errorf("store: a Change List limit and period are required (got %d, %s)", opts.ChangeListLimit, opts.ChangeListPeriod)
	}
	return opts, nil
}

// newDB is the store opts describe, before anything is opened.
func newDB(opts Options) *DB {
	return &DB{log: opts.Logger, now: opts.Now, dir: opts.Dir, stop: make(chan struct{}),
		clLimit: opts.ChangeListLimit, clPeriod: opts.ChangeListPeriod, clBytes: opts.ChangeListBytes, entryBytes: opts.ChangeEntryBytes,
		space:   spaceCheck{dir: opts.Dir, min: opts.MinFree, free: opts.FreeSpace, inMemory: opts.InMemory},
		horizon: horizon{now: opts.Now, pending: map[*Batch]time.Time{}}}
}

// claimDir creates the data directory, takes its lock and removes the empty
// log files a crash can leave; on failure it holds no lock.
func (db *DB) claimDir() error {
	if err := os.MkdirAll(db.dir, 0o755); err != nil {
		return fmt.Errorf("data dir %s: %w", db.dir, err)
	}
	lock, err := lockDir(db.dir)
	if err != nil {
		return err
	}
	db.lock = lock
	if err := removeEmptyLogs(db.dir, db.log); err != nil {
		db.unlock()
		return err
	}
	return nil
}

// badgerOptions are the Badger options of a writable store with memtables of
// memTable bytes.
func badgerOptions(opts Options, memTable int64) badger.Options {
	bo := badger.DefaultOptions(opts.Dir)
	if opts.InMemory {
		bo = badger.DefaultOptions("").WithInMemory(true)
	}
	// Two memtables of 16 MiB: against three of 8 MiB, half as many level-0
	// tables to build and compact, which took the 100,000-record harvest
	// from ~10,000 to ~14,000 records/s; the live heap during it peaks near
	// 200 MiB, inside the soft limit (config.MemoryLimit, docs/benchmarks.md).
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
		WithValueLogFileSize(cmp.Or(opts.ValueLogFileSize, 256<<20)).
		// Tables at every level keep the base size: Badger sizes compaction
		// buffers at twice the table size, and by default tables double per
		// level, so memory would climb as the store grows.
		WithNumCompactors(2).
		WithMetricsEnabled(false).
		// No conflict detection: Badger keeps the keys every transaction
		// wrote until the oldest transaction still reading ends, and under a
		// harvest of many repositories new transactions wait for the write
		// pipeline, so that was always a while: 245 MiB of the heap at
		// 700 repositories, the collector a fifth of the CPU. Each (repository,
		// format) has one writer, its run; other read-change-write updates
		// take turns (DB.update).
		WithDetectConflicts(false)
	bo.TableSizeMultiplier = 1
	// Levels 4 times the one above (not 10), and compactions out of level 0
	// once 10 tables wait there (not 5, stalling writes at 20, not 15):
	// leveled compaction rewrites each byte about LevelSizeMultiplier/2 times
	// per level, and every level-0 table spans the whole key space (many
	// repositories and formats are written at once), so each level-0
	// compaction rewrites the whole base level, better done for more tables
	// at once. Measured with 59 repositories, 2,000,000 records (bench/):
	// 264 s → 206 s, and the rate over the last tenth 27 % → 24 % below the
	// first (docs/benchmarks.md, "Consortium scale").
	bo.LevelSizeMultiplier = 4
	bo.NumLevelZeroTables = 10
	bo.NumLevelZeroTablesStall = 20
	// A base level of 128 MiB (not 10), about what one level-0 compaction
	// brings (10 tables from 16 MiB memtables), and tables of 8 MiB (not 2):
	// with the default, each level-0 compaction overflowed the base level at
	// once and cascaded through levels kept small, and the tree had a level
	// more. With 59 repositories, 2,000,000 records (bench/): 122 s → 102 s,
	// bytes written per record 11,276 → 9,615, the same peak memory.
	bo.BaseLevelSize = 128 << 20
	bo.BaseTableSize = 8 << 20
	// Blocks hold small binary states and keys (the metadata bytes live in the
	// value log): compression buys little and costs CPU and per-builder buffers.
	bo = bo.WithCompression(options.None)
	if !opts.InMemory {
		// Metadata bytes go to the value log, keeping the LSM tree small so list
		// scans over record states stay fast. (In memory there is no value log.)
		bo = bo.WithValueThreshold(1 << 10)
	}
	return bo
}

// setOptions keeps bo, the options of the writable store, and the batch
// limits that follow from them.
func (db *DB) setOptions(bo badger.Options) {
	// Badger refuses a transaction at 15% of the memtable size or at that size
	// divided by a skiplist node; batches stay at 90% of both.
	db.maxBatchSize = 15 * bo.MemTableSize / 100 * 9 / 10
	db.maxBatchCount = 15 * bo.MemTableSize / 100 / int64(skl.MaxNodeSize) * 9 / 10
	db.valueThreshold = bo.ValueThreshold
	db.bo = bo
}

// openOptions are the options to open Badger with now: db.bo, or db.bo
// read-only when the disk is full and there is a store to read.
func (db *DB) openOptions() (badger.Options, error) {
	// On a full disk Badger cannot even open for writing (it writes a new
	// memtable file at once): open read-only, so what is stored stays served,
	// and become writable when space returns.
	err := db.space.check()
	if err == nil {
		return db.bo, nil
	}
	if !errors.Is(err, ErrDiskFull) {
		return badger.Options{}, err
	}
	if !db.space.inMemory && !hasManifest(db.dir) {
		// Read-only needs a store to read; creating one needs room.
		return badger.Options{}, fmt.Errorf("%w; a new store cannot be created there: free space, or give data_dir a file system with more room", err)
	}
	db.log.Error("store opened read-only: harvests are refused until space is freed", "err", err)
	db.readOnly = true
	return db.bo.WithReadOnly(true), nil
}

// startLoops starts the store's periodic work: value-log GC, the upgrade of
// a read-only store, and group commit.
func (db *DB) startLoops(opts Options) {
	if !opts.InMemory {
		db.mapped.limit = opts.MappedLimit
		db.every(mappedEvery, db.boundMapped)
	}
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
