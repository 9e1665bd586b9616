package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// MirrorDB is a destination's state (rsbridge mirror): what it holds of
// each resource and how far each resource set is applied. Files and state
// commit in that order, batch by batch, so a crash loses nothing committed
// and the next run redoes only the batch it cut short. One process holds a
// state directory at a time.
//
// Keys: r/set·uri → MirrorResource; s/set → MirrorSet; g/ → MirrorLog.
type MirrorDB struct {
	db   *badger.DB
	lock *os.File
}

// MirrorResource is one resource as the copy holds it.
type MirrorResource struct {
	URI     string    `json:"uri"`
	Path    string    `json:"path"` // below the copy's directory
	Length  int64     `json:"length"`
	MD5     string    `json:"md5,omitempty"`
	SHA256  string    `json:"sha256,omitempty"`
	LastMod time.Time `json:"lastmod,omitzero"`
	// From says where the bytes came from: dump, list (a GET guided by a
	// Resource List), change (a GET guided by a Change List), change-dump.
	From    string    `json:"from"`
	Deleted bool      `json:"deleted,omitempty"` // the source deleted it (the file is gone with -delete)
	Applied time.Time `json:"applied"`           // when the copy took it
}

// MirrorSet is how far one resource set (its Capability List) is applied.
type MirrorSet struct {
	// BaselineAt is the at of the Resource Dump or Resource List the
	// baseline copied; changes after it are applied from Change Lists.
	BaselineAt time.Time `json:"baseline_at,omitzero"`
	// BaselineDone: every resource the baseline named is in the copy.
	BaselineDone bool `json:"baseline_done,omitempty"`
	// Packages are the dump packages (URLs) whose files are all applied.
	Packages []string `json:"packages,omitempty"`
	// Through: every change up to this datetime is applied.
	Through time.Time `json:"through,omitzero"`
	// Lists are closed Change Lists (URL → their until) applied whole.
	Lists map[string]time.Time `json:"lists,omitempty"`
	// OpenETag and OpenList remember the open Change List last read, for
	// a conditional GET next time.
	OpenList string `json:"open_list,omitempty"`
	OpenETag string `json:"open_etag,omitempty"`
}

// MirrorLog is how many bytes of the change log are committed: a run
// truncates the log to it first, so a line written before a crash cut its
// batch short is written once, by the batch that redoes it.
type MirrorLog struct {
	Bytes int64 `json:"bytes"`
}

// OpenMirror opens (creating if needed) the state in dir.
func OpenMirror(dir string, log *slog.Logger) (*MirrorDB, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mirror state %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	state := filepath.Join(dir, "state")
	// A mirror killed while Badger created a log file leaves it empty, and
	// Badger will not open with it (as in the source's store, open.go).
	if err := os.MkdirAll(state, 0o755); err == nil {
		err = removeEmptyLogs(state, log)
	}
	if err != nil {
		syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		lock.Close()
		return nil, fmt.Errorf("mirror state %s: %w", dir, err)
	}
	bo := badger.DefaultOptions(state).WithLogger(badgerLogger{log.With("component", "badger")}).
		// Small: a mirror's state is a few hundred bytes per resource, and
		// the mirror's memory must not follow the source's size.
		WithMemTableSize(4 << 20).WithNumMemtables(3).WithBlockCacheSize(4 << 20).WithIndexCacheSize(4 << 20).
		WithNumCompactors(2).WithValueThreshold(1 << 10).WithValueLogFileSize(64 << 20)
	db, err := badger.Open(bo)
	if err != nil {
		syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		lock.Close()
		return nil, fmt.Errorf("mirror state %s: %w", dir, err)
	}
	return &MirrorDB{db: db, lock: lock}, nil
}

// Close syncs and closes the state and releases the directory.
func (m *MirrorDB) Close() error {
	err := m.db.Close()
	syscall.Flock(int(m.lock.Fd()), syscall.LOCK_UN)
	m.lock.Close()
	return err
}

func mirrorResourceKey(set, uri string) []byte { return key('r', set, uri) }
func mirrorSetKey(set string) []byte           { return key('s', set) }

var mirrorLogKey = key('g')

// Resource returns what the copy holds of a resource, or nil.
func (m *MirrorDB) Resource(set, uri string) (*MirrorResource, error) {
	var r *MirrorResource
	err := m.db.View(func(txn *badger.Txn) error {
		var v MirrorResource
		ok, err := getJSON(txn, mirrorResourceKey(set, uri), &v)
		if ok {
			r = &v
		}
		return err
	})
	return r, err
}

// Set returns how far a resource set is applied.
func (m *MirrorDB) Set(set string) (MirrorSet, error) {
	var s MirrorSet
	err := m.db.View(func(txn *badger.Txn) error {
		_, err := getJSON(txn, mirrorSetKey(set), &s)
		return err
	})
	return s, err
}

// Log returns the committed length of the change log.
func (m *MirrorDB) Log() (MirrorLog, error) {
	var l MirrorLog
	err := m.db.View(func(txn *badger.Txn) error {
		_, err := getJSON(txn, mirrorLogKey, &l)
		return err
	})
	return l, err
}

// Resources calls fn for every resource of a set the copy knows, in URI
// order, from one snapshot.
func (m *MirrorDB) Resources(ctx context.Context, set string, fn func(*MirrorResource) error) error {
	return m.db.View(func(txn *badger.Txn) error {
		return scan(txn, key('r', set, ""), true, func(_, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var r MirrorResource
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			return fn(&r)
		})
	})
}

// Sets lists the resource sets (Capability List URLs) the state knows,
// whether or not the current run has them.
func (m *MirrorDB) Sets(ctx context.Context) ([]string, error) {
	var sets []string
	prefix := key('s', "")
	err := m.db.View(func(txn *badger.Txn) error {
		return scan(txn, prefix, false, func(k, _ []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			sets = append(sets, string(k[len(prefix):]))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("mirror state: listing its resource sets: %w", err)
	}
	return sets, nil
}

// MirrorBatch collects the state of one batch of files; Commit writes it
// at once.
type MirrorBatch struct {
	m    *MirrorDB
	puts map[string][]byte
	keys []string
}

// Batch starts a batch.
func (m *MirrorDB) Batch() *MirrorBatch { return &MirrorBatch{m: m, puts: map[string][]byte{}} }

func (b *MirrorBatch) put(k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, ok := b.puts[string(k)]; !ok {
		b.keys = append(b.keys, string(k))
	}
	b.puts[string(k)] = data
	return nil
}

// PutResource records a resource of a set.
func (b *MirrorBatch) PutResource(set string, r *MirrorResource) error {
	return b.put(mirrorResourceKey(set, r.URI), r)
}

// PutSet records how far a set is applied.
func (b *MirrorBatch) PutSet(set string, s MirrorSet) error { return b.put(mirrorSetKey(set), s) }

// PutLog records the committed length of the change log.
func (b *MirrorBatch) PutLog(l MirrorLog) error { return b.put(mirrorLogKey, l) }

// Len is the number of writes in the batch.
func (b *MirrorBatch) Len() int { return len(b.keys) }

// Commit writes the batch in one transaction (several if Badger finds it
// too big, the log length last so a split never commits it early) and
// starts an empty one.
func (b *MirrorBatch) Commit() error {
	keys := b.keys
	// The log length goes last.
	for i, k := range keys {
		if k == string(mirrorLogKey) && i != len(keys)-1 {
			keys = append(append(keys[:i:i], keys[i+1:]...), k)
			break
		}
	}
	txn := b.m.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	for _, k := range keys {
		err := txn.Set([]byte(k), b.puts[k])
		if errors.Is(err, badger.ErrTxnTooBig) {
			if err = txn.Commit(); err == nil {
				txn = b.m.db.NewTransaction(true)
				err = txn.Set([]byte(k), b.puts[k])
			}
		}
		if err != nil {
			return fmt.Errorf("mirror state: %w", err)
		}
	}
	if err := txn.Commit(); err != nil {
		return fmt.Errorf("mirror state: %w", err)
	}
	b.puts, b.keys = map[string][]byte{}, nil
	return nil
}
