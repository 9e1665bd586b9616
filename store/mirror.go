package store

import (
	"bytes"
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
// Keys: r/set·uri → MirrorResource; s/set → MirrorSet; g/ → MirrorLog;
// a/name·value → an audit's marks (MirrorMarks), while it runs.
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
	return m.ResourcesAfter(ctx, set, "", 0, fn)
}

// ResourcesAfter calls fn for up to limit (0: all) resources of a set
// whose URIs sort after the given one ("": from the first), in URI order,
// from one snapshot. A pass that writes what it finds reads page by page
// this way, so that no read transaction stays open across its writes.
func (m *MirrorDB) ResourcesAfter(ctx context.Context, set, after string, limit int, fn func(*MirrorResource) error) error {
	prefix := key('r', set, "")
	start := prefix
	if after != "" {
		// The smallest key above the URI's own.
		start = append(key('r', set, after), 0)
	}
	n := 0
	return m.db.View(func(txn *badger.Txn) error {
		return scanFrom(txn, prefix, start, func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if limit > 0 && n == limit {
				return errStop
			}
			n++
			var r MirrorResource
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("mirror state: resource %q of set %s: %w (the state is damaged: a mirror run with a new -state directory takes the baseline again)", k[len(prefix):], set, err)
			}
			return fn(&r)
		})
	})
}

// MirrorMarks is a set of strings an audit keeps in the state's store
// instead of in memory (the URIs a Resource List named, the paths the
// states hold), so that checking a copy of millions of resources takes no
// more memory than checking a few. Add buffers a page and writes it when it
// is full, in one transaction that commits before Add returns (Badger's
// WriteBatch commits behind the caller's back, and every read opened
// meanwhile waits for those commits); after Flush, Has sees everything
// added; Drop removes the marks. Starting marks of a name drops what a
// killed audit left under it.
type MirrorMarks struct {
	m       *MirrorDB
	name    string
	pending [][]byte
}

// Marks starts an empty set of marks under name.
func (m *MirrorDB) Marks(name string) (*MirrorMarks, error) {
	k := &MirrorMarks{m: m, name: name}
	if err := k.drop(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *MirrorMarks) key(v string) []byte { return key('a', k.name, v) }

// Add marks v.
func (k *MirrorMarks) Add(v string) error {
	if k.pending = append(k.pending, k.key(v)); len(k.pending) < marksPage {
		return nil
	}
	return k.Flush()
}

// Flush writes what Add buffered.
func (k *MirrorMarks) Flush() error {
	err := k.m.writeKeys(k.pending, false)
	k.pending = k.pending[:0]
	if err != nil {
		return fmt.Errorf("mirror state: marks %s: %w", k.name, err)
	}
	return nil
}

// Has says whether v was added and flushed.
func (k *MirrorMarks) Has(v string) (bool, error) {
	var has bool
	err := k.Check([]string{v}, func(_ string, ok bool) error { has = ok; return nil })
	return has, err
}

// Check calls fn with each of vs and whether it was added and flushed,
// all looked up in one read.
func (k *MirrorMarks) Check(vs []string, fn func(v string, ok bool) error) error {
	// View returns what its function returns: fn's errors as they are.
	return k.m.db.View(func(txn *badger.Txn) error {
		for _, v := range vs {
			_, err := txn.Get(k.key(v))
			if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
				return fmt.Errorf("mirror state: marks %s: %w", k.name, err)
			}
			if err := fn(v, err == nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// Each calls fn with every flushed mark, in order, reading a page of them
// at a time: fn may write to the state, and no read stays open across.
func (k *MirrorMarks) Each(ctx context.Context, fn func(v string) error) error {
	prefix := append(key('a', k.name), 0)
	start := prefix
	for {
		var page []string
		err := k.m.db.View(func(txn *badger.Txn) error {
			err := scanAt(txn, prefix, start, false, func(key, _ []byte) error {
				if len(page) == marksPage {
					return errStop
				}
				page = append(page, string(key[len(prefix):]))
				return nil
			})
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("mirror state: marks %s: %w", k.name, err)
		}
		for _, v := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		if len(page) < marksPage {
			return nil
		}
		start = append(append(append([]byte(nil), prefix...), page[len(page)-1]...), 0)
	}
}

// Drop removes the marks, flushed or not.
func (k *MirrorMarks) Drop() error {
	k.pending = k.pending[:0]
	return k.drop()
}

// drop deletes the marks a page of keys at a time, each page read in a
// transaction of its own and deleted after it closes: no read stays open
// across the deletes (Badger keeps what committed transactions wrote until
// the oldest reader ends), and no DropPrefix, which stops every write and
// flushes the memtable, once per set audited.
func (k *MirrorMarks) drop() error {
	prefix := append(key('a', k.name), 0)
	for {
		var page [][]byte
		err := k.m.db.View(func(txn *badger.Txn) error {
			err := scanAt(txn, prefix, prefix, false, func(key, _ []byte) error {
				if len(page) == marksPage {
					return errStop
				}
				page = append(page, bytes.Clone(key))
				return nil
			})
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		})
		if err == nil && len(page) > 0 {
			err = k.m.writeKeys(page, true)
		}
		if err != nil {
			return fmt.Errorf("mirror state: dropping the marks %s: %w", k.name, err)
		}
		if len(page) < marksPage {
			return nil
		}
	}
}

// writeKeys sets the keys with no value, or deletes them, committing
// before it returns.
func (m *MirrorDB) writeKeys(keys [][]byte, del bool) error {
	return m.commitSplit(len(keys), func(txn *badger.Txn, i int) error {
		if del {
			return txn.Delete(keys[i])
		}
		return txn.Set(keys[i], nil)
	})
}

// marksPage is how many marks Add buffers, and drop and Each read, at a
// time.
const marksPage = 10000

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
	err := b.m.commitSplit(len(keys), func(txn *badger.Txn, i int) error {
		return txn.Set([]byte(keys[i]), b.puts[keys[i]])
	})
	if err != nil {
		return fmt.Errorf("mirror state: %w", err)
	}
	b.puts, b.keys = map[string][]byte{}, nil
	return nil
}

// commitSplit runs op for 0..n-1 in a transaction and commits it before
// it returns; when Badger finds the transaction too big, what it holds
// commits and the rest goes on in a new one.
func (m *MirrorDB) commitSplit(n int, op func(txn *badger.Txn, i int) error) error {
	txn := m.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	for i := range n {
		err := op(txn, i)
		if errors.Is(err, badger.ErrTxnTooBig) {
			if err = txn.Commit(); err == nil {
				txn = m.db.NewTransaction(true)
				err = op(txn, i)
			}
		}
		if err != nil {
			return err
		}
	}
	return txn.Commit()
}
