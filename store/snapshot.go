package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Snap is a consistent read-only view of the store: everything one served
// document needs is read through one Snap.
type Snap struct {
	txn  *badger.Txn
	ctx  context.Context
	db   *DB
	now  time.Time                // the store's clock when the snapshot was opened
	held map[counterKey]time.Time // horizons behind the clock (horizon.go)
}

// View runs fn on a snapshot.
func (db *DB) View(ctx context.Context, fn func(*Snap) error) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	// The horizons are read before the snapshot is opened (horizon.go).
	now, held := db.horizon.read()
	return db.bdb.View(func(txn *badger.Txn) error { return fn(&Snap{txn: txn, ctx: ctx, db: db, now: now, held: held}) })
}

// At is the snapshot's horizon for (repo, prefix): every change event of it
// timed before At is in the snapshot; events timed at or after it may or
// may not be. It is the honest at of a document of (repo, prefix) read from
// the snapshot, and its newest Change List closes when its end is by At.
func (s *Snap) At(repo, prefix string) time.Time { return at(s.now, s.held, repo, prefix) }

// Now is the store's clock when the snapshot was opened: no event in it is
// timed later, so it is the honest completed of a document read from it.
func (s *Snap) Now() time.Time { return s.now }

// Record returns a record's state, or nil.
func (s *Snap) Record(repo, prefix, id string) (*Record, error) {
	st, err := s.db.stems(s.txn, repo, prefix)
	if err != nil {
		return nil, err
	}
	r := &Record{Repo: repo, Prefix: prefix, Identifier: id}
	found, err := getRecord(s.txn, key('r', repo, prefix, id), r, st)
	if err != nil || !found {
		return nil, wrapKey(err, repo, prefix, id)
	}
	return r, nil
}

// Metadata returns the bytes of a live record, or nil.
func (s *Snap) Metadata(repo, prefix, id string) ([]byte, error) {
	it, err := s.txn.Get(key('d', repo, prefix, id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapKey(err, repo, prefix, id)
	}
	b, err := it.ValueCopy(nil)
	return b, wrapKey(err, repo, prefix, id)
}

// setPrefix is where the live records of a resource set are listed: the record
// table for all records (tombstones are skipped while reading), the membership
// table for a set.
func setPrefix(repo, prefix, set string) []byte {
	if set == AllSet {
		return prefixKey('r', repo, prefix)
	}
	return prefixKey('m', repo, prefix, set)
}

// Resources calls fn for up to limit live records of the set in identifier
// order, from the identifier start ("" = the first) to before end ("" = no
// end). fn receives the record state; it stops early by returning an error.
//
// A set's members are keys (m/) in the order of the record states (r/): the
// states are read by a second iterator that walks forward to each member,
// stepping over a few records, seeking past more. (Stores written before
// kept a copy of the state in each membership; it is not read.)
func (s *Snap) Resources(repo, prefix, set, start, end string, limit int, fn func(*Record) error) error {
	st, err := s.db.stems(s.txn, repo, prefix)
	if err != nil {
		return err
	}
	p := setPrefix(repo, prefix, set)
	o := badger.DefaultIteratorOptions
	o.Prefix = p
	o.PrefetchSize = 256
	var states *badger.Iterator
	var rp, want []byte
	if set != AllSet {
		o.PrefetchValues = false
		rp = prefixKey('r', repo, prefix)
		ro := badger.DefaultIteratorOptions
		ro.Prefix, ro.PrefetchValues = rp, false
		states = s.txn.NewIterator(ro)
		defer states.Close()
		states.Seek(append(append([]byte(nil), rp...), start...))
	}
	it := s.txn.NewIterator(o)
	defer it.Close()
	n, i := 0, 0
	for it.Seek(append(append([]byte(nil), p...), start...)); it.ValidForPrefix(p) && n < limit; it.Next() {
		id := it.Item().Key()[len(p):]
		if end != "" && string(id) >= end {
			break
		}
		if i++; i%1024 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		item := it.Item()
		if states != nil {
			want = append(append(want[:0], rp...), id...)
			if !seekForward(states, rp, want) {
				continue // no state for a member: not written by rsbridge, skipped
			}
			item = states.Item()
		}
		r := &Record{Repo: repo, Prefix: prefix, Identifier: string(id)}
		if err := item.Value(func(v []byte) error { return decodeRecord(v, r, st) }); err != nil {
			return fmt.Errorf("store: resource %s/%s/%q: %w", repo, prefix, r.Identifier, err)
		}
		if r.Deleted {
			continue
		}
		n++
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// seekForward moves it, which is at or before k, to k, and reports whether
// k is there: a few steps first (a set's members are often close together),
// then a seek.
func seekForward(it *badger.Iterator, prefix, k []byte) bool {
	for step := 0; it.ValidForPrefix(prefix); step++ {
		c := bytes.Compare(it.Item().Key(), k)
		if c >= 0 {
			return c == 0
		}
		if step == 8 {
			it.Seek(k)
			return it.ValidForPrefix(prefix) && bytes.Equal(it.Item().Key(), k)
		}
		it.Next()
	}
	return false
}

// Pages counts the live records of a set and calls page with the first
// identifier of every run of limit records, in order. It reads keys only: the
// membership table for a set, the metadata table (which holds live records
// only) for all records.
func (s *Snap) Pages(repo, prefix, set string, limit int, page func(n int, first string) error) (int, error) {
	p := setPrefix(repo, prefix, set)
	if set == AllSet {
		p = prefixKey('d', repo, prefix)
	}
	o := badger.DefaultIteratorOptions
	o.Prefix = p
	o.PrefetchValues = false
	it := s.txn.NewIterator(o)
	defer it.Close()
	count := 0
	for it.Seek(p); it.ValidForPrefix(p); it.Next() {
		if count%4096 == 0 {
			if err := s.ctx.Err(); err != nil {
				return count, err
			}
		}
		item := it.Item()
		if count%limit == 0 {
			if err := page(count/limit+1, string(item.Key()[len(p):])); err != nil {
				return count, err
			}
		}
		count++
	}
	return count, nil
}

// ChangeLists returns a set's Change Lists in time order with the open one
// last, as they are at the snapshot's horizon: the catalog, plus, when its
// newest list is closed (or there is none yet), the empty open list the next
// change will go to, computed with the rule Batch uses, so its ID and From are
// what the catalog will say later.
func (s *Snap) ChangeLists(repo, prefix, set string) ([]ChangeListInfo, error) {
	p := prefixKey('l', repo, prefix, set)
	var out []ChangeListInfo
	err := scan(s.txn, p, true, func(k, v []byte) error {
		l := ChangeListInfo{Set: set, ID: string(k[len(p):])}
		if err := json.Unmarshal(v, &l); err != nil {
			return fmt.Errorf("store: change list %s/%s/%q/%s: %w", repo, prefix, set, l.ID, err)
		}
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var last *ChangeListInfo
	for i := range out {
		// A list with a successor is closed whatever the horizon says: the
		// successor was started by an event past its end, and every event
		// before that one committed with it or earlier.
		out[i].Succeeded = i < len(out)-1
	}
	if len(out) > 0 {
		last = &out[len(out)-1]
	}
	if last == nil || !last.Until(s.At(repo, prefix)).IsZero() {
		open, err := s.openList(repo, prefix, set, last)
		if err != nil {
			return nil, err
		}
		out = append(out, open)
	}
	return out, nil
}

// openList is the empty list that follows last (nil: the set's first list).
func (s *Snap) openList(repo, prefix, set string, last *ChangeListInfo) (ChangeListInfo, error) {
	c, err := s.Counter(repo, prefix)
	if err != nil {
		return ChangeListInfo{}, err
	}
	began := c.Began
	if began.IsZero() {
		// A store from before Began was kept, not harvested since: the
		// next batch sets it.
		began = s.At(repo, prefix).Truncate(s.db.clPeriod)
	}
	open := NextList(last, began, s.db.clPeriod, s.db.clLimit)
	open.Set = set
	return open, nil
}

// SetEvents calls fn for the set's change entries with sequence numbers in
// [first, last], in order.
func (s *Snap) SetEvents(repo, prefix, set string, first, last uint64, fn func(*SetEvent) error) error {
	if set == AllSet {
		return s.allEvents(repo, prefix, first, last, fn)
	}
	return s.setEntries(repo, prefix, set, first, last, fn)
}

// LastSetEvent is a resource set's newest change entry after seq after, as
// SetEvents gives it, or nil when there is none: one seek back, and one
// entry read.
func (s *Snap) LastSetEvent(repo, prefix, set string, after uint64) (*SetEvent, error) {
	newest := s.newestSeq(prefixKey('x', repo, prefix, set))
	if set == AllSet {
		newest = max(newest, s.newestSeq(prefixKey('e', repo, prefix)))
	}
	if newest <= after {
		return nil, nil
	}
	var last *SetEvent
	err := s.SetEvents(repo, prefix, set, newest, newest, func(se *SetEvent) error { last = se; return nil })
	if err == nil && last == nil {
		err = fmt.Errorf("store: change entry %s/%s/%q/%d: %w: listed, then not read", repo, prefix, set, newest, errCorrupt)
	}
	return last, err
}

// newestSeq is the largest sequence number of the keys under p (keys
// ending in one), 0 when there are none.
func (s *Snap) newestSeq(p []byte) uint64 {
	o := badger.DefaultIteratorOptions
	o.Prefix, o.Reverse, o.PrefetchValues = p, true, false
	it := s.txn.NewIterator(o)
	defer it.Close()
	// In reverse, Seek finds the largest key at or before its argument: past
	// every sequence number under p.
	it.Seek(append(slices.Clone(p), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
	if !it.ValidForPrefix(p) {
		return 0
	}
	return seqOf(it.Item().Key())
}

// setEntries reads the per-set change entries (x/) in [first, last]. An
// entry is its key alone while its event is stored (the event, as the set
// sees it, read beside it by a second iterator), or the entry in full.
func (s *Snap) setEntries(repo, prefix, set string, first, last uint64, fn func(*SetEvent) error) error {
	p := prefixKey('x', repo, prefix, set)
	o := badger.DefaultIteratorOptions
	o.Prefix = p
	o.PrefetchSize = 256
	it := s.txn.NewIterator(o)
	defer it.Close()
	var events *badger.Iterator // opened at the first key-only entry
	er := s.db.newEventReader(s.txn, repo, prefix)
	defer func() {
		if events != nil {
			events.Close()
		}
		er.Close()
	}()
	ep := prefixKey('e', repo, prefix)
	n := 0
	for it.Seek(seqKey('x', first, repo, prefix, set)); it.ValidForPrefix(p); it.Next() {
		seq := seqOf(it.Item().Key())
		if seq > last {
			break
		}
		if n++; n%1024 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		se := &SetEvent{Seq: seq}
		var err error
		if it.Item().ValueSize() > 0 {
			err = it.Item().Value(func(v []byte) error { return decodeSetEvent(v, se) })
		} else {
			if events == nil {
				eo := badger.DefaultIteratorOptions
				eo.Prefix = ep
				eo.PrefetchValues = false // a set sees some of the events only
				events = s.txn.NewIterator(eo)
				events.Seek(seqKey('e', seq, repo, prefix))
			}
			se, err = entryOf(er, events, ep, set, seq)
		}
		if err != nil {
			return fmt.Errorf("store: change entry %s/%s/%q/%d: %w", repo, prefix, set, seq, err)
		}
		if err := fn(se); err != nil {
			return err
		}
	}
	return nil
}

// entryOf reads the event seq with it (an iterator over the events, at or
// before it) and returns it as the set sees it.
func entryOf(er *eventReader, it *badger.Iterator, ep []byte, set string, seq uint64) (*SetEvent, error) {
	if !seekForward(it, ep, seqKey('e', seq, er.repo, er.prefix)) {
		return nil, fmt.Errorf("%w: the event it names is missing", errCorrupt)
	}
	var ev Event
	if err := er.read(it.Item(), seq, &ev); err != nil {
		return nil, err
	}
	se := ev.setEvent(set)
	if se.Change == 0 {
		return nil, fmt.Errorf("%w: the event it names does not concern the set", errCorrupt)
	}
	return &se, nil
}

// allEvents gives the all-records set's change entries in [first, last]:
// the events themselves, which every change is in. Stores written by earlier
// versions also kept a copy of each as a per-set entry (x/), and their
// pruning could remove events that a kept list still held while keeping the
// copy: where events are missing, the copies are read in their place.
func (s *Snap) allEvents(repo, prefix string, first, last uint64, fn func(*SetEvent) error) error {
	p := prefixKey('e', repo, prefix)
	o := badger.DefaultIteratorOptions
	o.Prefix = p
	o.PrefetchSize = 256
	it := s.txn.NewIterator(o)
	defer it.Close()
	er := s.db.newEventReader(s.txn, repo, prefix)
	defer er.Close()
	from, n := first, 0 // from: the first sequence number not yet given
	for it.Seek(seqKey('e', first, repo, prefix)); it.ValidForPrefix(p); it.Next() {
		seq := seqOf(it.Item().Key())
		if seq > last {
			break
		}
		if seq > from { // events missing: their copies, if any
			if err := s.setEntries(repo, prefix, AllSet, from, seq-1, fn); err != nil {
				return err
			}
		}
		if n++; n%1024 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		var ev Event
		if err := er.read(it.Item(), seq, &ev); err != nil {
			return fmt.Errorf("store: change event %s/%s/%d: %w", repo, prefix, seq, err)
		}
		se := ev.setEvent(AllSet)
		if err := fn(&se); err != nil {
			return err
		}
		from = seq + 1
	}
	if from > last || from == 0 {
		return nil
	}
	return s.setEntries(repo, prefix, AllSet, from, last, fn)
}

// Sets returns the stored set descriptions of a repository.
func (s *Snap) Sets(repo string) ([]SetInfo, error) {
	var out []SetInfo
	err := scan(s.txn, prefixKey('s', repo), true, func(k, v []byte) error {
		var si SetInfo
		if err := json.Unmarshal(v, &si); err != nil {
			return err
		}
		out = append(out, si)
		return nil
	})
	return out, err
}

// RepoInfo returns a repository description (zero if none).
func (s *Snap) RepoInfo(repo string) (RepoInfo, error) {
	var ri RepoInfo
	_, err := getJSON(s.txn, key('i', repo), &ri)
	return ri, err
}

// Counter returns the counter of (repo, prefix).
func (s *Snap) Counter(repo, prefix string) (Counter, error) {
	var c Counter
	_, err := getJSON(s.txn, key('n', repo, prefix), &c)
	return c, err
}

// ChangeList returns one Change List of a set at the snapshot's horizon: a
// catalog entry, or the open list that has no entry yet; nil if there is no
// such list.
func (s *Snap) ChangeList(repo, prefix, set, id string) (*ChangeListInfo, error) {
	l := &ChangeListInfo{Set: set, ID: id}
	found, err := getJSON(s.txn, key('l', repo, prefix, set, id), l)
	if err != nil {
		return nil, err
	}
	it, err := s.txn.Get(key('L', repo, prefix, set))
	var last *ChangeListInfo
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		if found {
			return l, nil
		}
	case err != nil:
		return nil, err
	default:
		newest, err := it.ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		if found {
			l.Succeeded = string(newest) != id // a newer list exists: this one is closed
			return l, nil
		}
		last = &ChangeListInfo{Set: set, ID: string(newest)}
		if _, err := getJSON(s.txn, key('l', repo, prefix, set, last.ID), last); err != nil {
			return nil, err
		}
		if last.Until(s.At(repo, prefix)).IsZero() {
			return nil, nil // the newest list is open, and it is not id
		}
	}
	open, err := s.openList(repo, prefix, set, last)
	if err != nil || open.ID != id {
		return nil, err
	}
	return &open, nil
}

// SetInfo returns one stored set description, or nil.
func (s *Snap) SetInfo(repo, spec string) (*SetInfo, error) {
	var si SetInfo
	found, err := getJSON(s.txn, key('s', repo, spec), &si)
	if err != nil || !found {
		return nil, err
	}
	return &si, nil
}

// LiveCursor answers "is this identifier live in that format?" for identifiers
// asked in increasing order, by walking that format's metadata keys alongside
// the list being written instead of looking each one up.
type LiveCursor struct {
	it     *badger.Iterator
	prefix []byte
}

// LiveCursor starts a cursor over the live records of (repo, prefix) at start.
func (s *Snap) LiveCursor(repo, prefix, start string) *LiveCursor {
	p := prefixKey('d', repo, prefix)
	o := badger.DefaultIteratorOptions
	o.Prefix = p
	o.PrefetchValues = false
	it := s.txn.NewIterator(o)
	it.Seek(append(append([]byte(nil), p...), start...))
	return &LiveCursor{it: it, prefix: p}
}

// Has reports whether id is live; ids must not decrease between calls. It
// steps forward a few keys, then seeks: a sparse list (a small set's
// members spread over the whole store) costs a seek per id, not a walk over
// every record between them.
func (c *LiveCursor) Has(id string) bool {
	const steps = 8
	for n := 0; c.it.ValidForPrefix(c.prefix); n++ {
		k := c.it.Item().Key()[len(c.prefix):]
		switch cmp := string(k); {
		case cmp == id:
			return true
		case cmp > id:
			return false
		}
		if n == steps {
			c.it.Seek(append(append([]byte(nil), c.prefix...), id...))
			continue
		}
		c.it.Next()
	}
	return false
}

// Close releases the cursor.
func (c *LiveCursor) Close() { c.it.Close() }

// Checkpoint returns the harvest checkpoint of (repo, prefix), zero if none.
func (s *Snap) Checkpoint(repo, prefix string) (Checkpoint, error) {
	var cp Checkpoint
	if _, err := getJSON(s.txn, key('c', repo, prefix), &cp); err != nil {
		return cp, fmt.Errorf("store: checkpoint %s/%s: %w", repo, prefix, err)
	}
	return cp, nil
}

// Events calls fn for every event of (repo, prefix) with a sequence number above
// after, in order.
func (s *Snap) Events(repo, prefix string, after uint64, fn func(*Event) error) error {
	p := prefixKey('e', repo, prefix)
	o := badger.DefaultIteratorOptions
	o.Prefix = p
	it := s.txn.NewIterator(o)
	defer it.Close()
	er := s.db.newEventReader(s.txn, repo, prefix)
	defer er.Close()
	n := 0
	for it.Seek(seqKey('e', after+1, repo, prefix)); it.ValidForPrefix(p); it.Next() {
		if n++; n%1024 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		ev := &Event{}
		if err := er.read(it.Item(), seqOf(it.Item().Key()), ev); err != nil {
			return fmt.Errorf("store: event %s/%s/%d: %w", repo, prefix, ev.Seq, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

// Unseen calls fn for every live record of (repo, prefix) that the current
// reconciliation pass did not mark as seen, in identifier order.
func (s *Snap) Unseen(repo, prefix string, fn func(*Record) error) error {
	st, err := s.db.stems(s.txn, repo, prefix)
	if err != nil {
		return err
	}
	p := prefixKey('r', repo, prefix)
	n := 0
	return scan(s.txn, p, true, func(k, v []byte) error {
		if n++; n%1024 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		id := string(k[len(p):])
		r := &Record{Repo: repo, Prefix: prefix, Identifier: id}
		if err := decodeRecord(v, r, st); err != nil {
			return fmt.Errorf("store: record %q: %w", id, err)
		}
		if r.Deleted {
			return nil
		}
		_, err := s.txn.Get(key('p', repo, prefix, id))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return fn(r)
		}
		return err
	})
}

// Ping reads from the store: nil when it serves reads.
func (db *DB) Ping(ctx context.Context) error {
	return db.View(ctx, func(s *Snap) error {
		_, err := s.txn.Get([]byte("i/"))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		return err
	})
}
