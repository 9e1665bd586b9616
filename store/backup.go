package store

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	badger "github.com/dgraph-io/badger/v4"
)

// backupMagic starts every backup (inside the gzip stream), so restore can
// tell a backup from any other file before it writes anything.
const backupMagic = "rsbridge-backup 1\n"

// BackupStats says what a backup or restore moved.
type BackupStats struct {
	Bytes int64 // compressed size
}

// Backup writes a consistent copy of the store to w while it stays in use:
// Badger's online backup of one snapshot, gzip-compressed. Dump descriptors
// are left out (the ZIP files live beside the store, not in it): a restored
// store builds its dumps again. Everything else is in: records, bytes,
// events, lists, checkpoints, quarantine, the hub's subscriptions.
func (db *DB) Backup(ctx context.Context, w io.Writer) (BackupStats, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	cw := &countWriter{w: w, ctx: ctx}
	zw, err := gzip.NewWriterLevel(cw, gzip.BestSpeed)
	if err != nil {
		return BackupStats{}, err
	}
	if _, err := io.WriteString(zw, backupMagic); err != nil {
		return BackupStats{}, fmt.Errorf("store: backup: %w", err)
	}
	st := db.bdb.NewStream()
	st.LogPrefix = "backup"
	st.ChooseKey = func(item *badger.Item) bool {
		k := item.Key()
		return len(k) < 2 || k[1] != '/' || (k[0] != 'R' && k[0] != 'Q' && k[0] != 'G')
	}
	if _, err := st.Backup(zw, 0); err != nil {
		if ctx.Err() != nil {
			return BackupStats{}, ctx.Err()
		}
		return BackupStats{}, fmt.Errorf("store: backup: %w", err)
	}
	if err := zw.Close(); err != nil {
		return BackupStats{}, fmt.Errorf("store: backup: %w", err)
	}
	return BackupStats{Bytes: cw.n}, nil
}

// countWriter counts what passes and stops the stream when ctx ends.
type countWriter struct {
	w   io.Writer
	ctx context.Context
	n   int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ErrNotEmpty refuses a restore over existing data.
var ErrNotEmpty = errors.New("data directory is not empty")

// ErrNotBackup is a restore from a file that Backup did not write.
var ErrNotBackup = errors.New("not an rsbridge backup")

// Restore loads a backup into a new store in opts.Dir, which must be empty or
// absent. On failure the directory holds a partial store: remove it before
// trying again.
func Restore(ctx context.Context, opts Options, r io.Reader) error {
	if !opts.InMemory {
		entries, err := os.ReadDir(opts.Dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restore into %s: %w", opts.Dir, err)
		}
		if len(entries) > 0 {
			return fmt.Errorf("restore into %s: %w (restore needs an empty or new directory, so nothing is overwritten)", opts.Dir, ErrNotEmpty)
		}
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(r, 1<<20))
	if err != nil {
		return fmt.Errorf("restore: %w (%v)", ErrNotBackup, err)
	}
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(zr, magic); err != nil || string(magic) != backupMagic {
		return fmt.Errorf("restore: %w (the header is missing)", ErrNotBackup)
	}
	db, err := Open(opts)
	if err != nil {
		return err
	}
	empty := true
	if err := db.View(ctx, func(s *Snap) error {
		return scan(s.txn, nil, false, func([]byte, []byte) error { empty = false; return errStop })
	}); err != nil && !errors.Is(err, errStop) {
		db.Close()
		return err
	}
	if !empty {
		db.Close()
		return fmt.Errorf("restore into %s: %w", opts.Dir, ErrNotEmpty)
	}
	if err := db.bdb.Load(&ctxReader{r: zr, ctx: ctx}, 64); err != nil {
		db.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("restore: %w", err)
	}
	if err := db.Sync(); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

type ctxReader struct {
	r   io.Reader
	ctx context.Context
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Size is the store's size on disk: the LSM tree (tables, manifest,
// memtable files) and the value log, as the file system allocates them.
// Badger's own DB.Size reads metrics, which are off (they cost on every
// read), and always said 0 (issue 21, item 10); value-log files are sparse,
// so their allocated blocks, not their length, are what the disk holds. An
// in-memory store has no size on disk.
func (db *DB) Size() (lsm, vlog int64) {
	if db.dir == "" || db.space.inMemory {
		return 0, 0
	}
	entries, err := os.ReadDir(db.dir)
	if err != nil {
		return 0, 0
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		n := info.Size()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n = st.Blocks * 512
		}
		switch filepath.Ext(e.Name()) {
		case ".vlog":
			vlog += n
		case ".sst", ".mem", "":
			lsm += n // tables, memtables, MANIFEST, KEYREGISTRY, DISCARD
		}
	}
	return lsm, vlog
}
