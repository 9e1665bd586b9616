package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Batch is one atomic unit of harvest work for (repo, prefix): the records,
// events and checkpoint of one OAI-PMH page. Reads through the batch see its own
// writes. If Badger refuses the transaction as too big, the batch commits what it
// has and carries on in a new transaction; the checkpoint, written last, lands in
// the final one, so a crash between the parts replays the page, and replaying a
// page is idempotent.
type Batch struct {
	db           *DB
	repo, prefix string
	txn          *badger.Txn
	ctr          Counter
	ctrDirty     bool
	parts        int
}

// NewBatch starts a batch.
func (db *DB) NewBatch(repo, prefix string) (*Batch, error) {
	b := &Batch{db: db, repo: repo, prefix: prefix, txn: db.bdb.NewTransaction(true)}
	if _, err := getJSON(b.txn, key('n', repo, prefix), &b.ctr); err != nil {
		b.txn.Discard()
		return nil, fmt.Errorf("store: counter %s/%s: %w", repo, prefix, err)
	}
	return b, nil
}

// Parts is the number of transactions the batch needed so far beyond the first.
func (b *Batch) Parts() int { return b.parts }

func (b *Batch) set(k, v []byte) error {
	err := b.txn.Set(k, v)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err := b.flush(); err != nil {
			return err
		}
		b.parts++
		b.txn = b.db.bdb.NewTransaction(true)
		err = b.txn.Set(k, v)
	}
	return err
}

func (b *Batch) del(k []byte) error {
	err := b.txn.Delete(k)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err := b.flush(); err != nil {
			return err
		}
		b.parts++
		b.txn = b.db.bdb.NewTransaction(true)
		err = b.txn.Delete(k)
	}
	return err
}

// flush writes the counter and commits the current transaction.
func (b *Batch) flush() error {
	if b.ctrDirty {
		v, err := json.Marshal(b.ctr)
		if err != nil {
			return err
		}
		if err := b.txn.Set(key('n', b.repo, b.prefix), v); err != nil {
			return err
		}
	}
	if err := b.txn.Commit(); err != nil {
		return fmt.Errorf("store: commit %s/%s: %w", b.repo, b.prefix, err)
	}
	return nil
}

// Get returns the record as the batch sees it, or nil.
func (b *Batch) Get(id string) (*Record, error) {
	r := &Record{Repo: b.repo, Prefix: b.prefix, Identifier: id}
	found, err := getJSON(b.txn, key('r', b.repo, b.prefix, id), r)
	if err != nil {
		return nil, wrapKey(err, b.repo, b.prefix, id)
	}
	if !found {
		return nil, nil
	}
	return r, nil
}

// Put writes the record's state and, for a live record, its metadata bytes (nil
// keeps the stored bytes). It maintains set membership and the record counts.
func (b *Batch) Put(rec *Record, metadata []byte) error {
	old, err := b.Get(rec.Identifier)
	if err != nil {
		return err
	}
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	id := rec.Identifier
	if err := b.set(key('r', b.repo, b.prefix, id), v); err != nil {
		return wrapKey(err, b.repo, b.prefix, id)
	}
	if rec.Deleted {
		if err := b.del(key('d', b.repo, b.prefix, id)); err != nil {
			return wrapKey(err, b.repo, b.prefix, id)
		}
	} else if metadata != nil {
		if err := b.set(key('d', b.repo, b.prefix, id), metadata); err != nil {
			return wrapKey(err, b.repo, b.prefix, id)
		}
	}
	before, after := old.Members(), rec.Members()
	for _, s := range before {
		if !containsString(after, s) {
			if err := b.del(key('m', b.repo, b.prefix, s, id)); err != nil {
				return wrapKey(err, b.repo, b.prefix, id)
			}
		}
	}
	for _, s := range after {
		if !containsString(before, s) {
			if err := b.set(key('m', b.repo, b.prefix, s, id), nil); err != nil {
				return wrapKey(err, b.repo, b.prefix, id)
			}
		}
	}
	wasLive, isLive := old != nil && !old.Deleted, !rec.Deleted
	wasTomb, isTomb := old != nil && old.Deleted, rec.Deleted
	if wasLive != isLive || wasTomb != isTomb {
		b.ctr.Live += btoi(isLive) - btoi(wasLive)
		b.ctr.Deleted += btoi(isTomb) - btoi(wasTomb)
		b.ctrDirty = true
	}
	return nil
}

func btoi(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Append assigns the event the next sequence number and a detection time strictly
// after the previous event's (microsecond steps), and writes it with its per-set
// index entries.
func (b *Batch) Append(ev *Event) error {
	now := b.db.now().UTC().Truncate(time.Microsecond)
	if !now.After(b.ctr.LastTime) {
		now = b.ctr.LastTime.Add(time.Microsecond)
	}
	b.ctr.Seq++
	b.ctr.LastTime = now
	b.ctrDirty = true
	ev.Seq, ev.Time, ev.Repo, ev.Prefix = b.ctr.Seq, now, b.repo, b.prefix
	v, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if err := b.set(seqKey('e', ev.Seq, b.repo, b.prefix), v); err != nil {
		return fmt.Errorf("store: event %s/%s/%d: %w", b.repo, b.prefix, ev.Seq, err)
	}
	for _, s := range unionSets(ev.SetsBefore, ev.SetsAfter) {
		if c := ev.SetChange(s); c != 0 {
			if err := b.set(seqKey('x', ev.Seq, b.repo, b.prefix, s), []byte{byte(c)}); err != nil {
				return fmt.Errorf("store: event %s/%s/%d: %w", b.repo, b.prefix, ev.Seq, err)
			}
		}
	}
	return nil
}

func unionSets(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !containsString(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// SetCheckpoint stores the checkpoint; call it after the page's records.
func (b *Batch) SetCheckpoint(cp Checkpoint) error {
	v, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	return b.set(key('c', b.repo, b.prefix), v)
}

// MarkSeen records that a reconciliation pass saw the identifier.
func (b *Batch) MarkSeen(id string) error {
	return b.set(key('p', b.repo, b.prefix, id), nil)
}

// Commit makes everything in the batch durable.
func (b *Batch) Commit() error { return b.flush() }

// Discard drops what was not committed; safe after Commit.
func (b *Batch) Discard() { b.txn.Discard() }
