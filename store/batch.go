package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Batch is one atomic unit of harvest work for (repo, prefix): the records,
// events and checkpoint of one OAI-PMH page. Reads through the batch see its own
// writes.
//
// Everything one record produces (event, per-set entries, Change List catalog,
// counter, state, bytes, membership) is staged in memory by Apply and written
// to the transaction as a unit before Apply returns. When the next record would not fit in the
// transaction (the estimate replicates Badger's own), the transaction is
// committed first, so a split falls between records, never inside one, and every
// committed part is consistent. The checkpoint is staged last by SetCheckpoint and
// applied by Commit, so a crash between parts replays the page, which is
// idempotent record by record.
type Batch struct {
	db           *DB
	repo, prefix string
	txn          *badger.Txn
	txnSize      int64
	txnCount     int64
	parts        int

	staged   []op
	ctr      Counter
	ctrDirty bool
	lists    map[string]*ChangeListInfo // latest list per set, as staged
	day      *DayCount                  // the current day's event counts, as staged
	dayDirty bool
	dirty    map[string]bool
	released bool // the read lock on db.mu taken by NewBatch was given back

	// stems are the namespace's (stems.go) as stored; seen holds the
	// landing page and identifier of the last record this batch saw while
	// a stem was still missing.
	stems stems
	seen  struct{ landing, id string }

	// got is the state Get last read from the transaction. A record's
	// state is asked for three times before it is written (by the caller,
	// keepVersion and put), and in a first harvest each is a miss that
	// looks through every level of the tree. endRecord, the only writer
	// to the transaction, forgets it.
	got struct {
		id    string
		rec   *Record // nil: no such record
		valid bool
	}
}

type op struct {
	k, v []byte
	del  bool
}

// NewBatch starts a batch; it is refused with a *SpaceError when the disk is
// (nearly) full. Every batch ends with Commit or Discard.
func (db *DB) NewBatch(repo, prefix string) (*Batch, error) {
	db.mu.RLock()
	if err := db.writable(); err != nil {
		db.mu.RUnlock()
		return nil, err
	}
	b := &Batch{db: db, repo: repo, prefix: prefix, txn: db.bdb.NewTransaction(true),
		lists: map[string]*ChangeListInfo{}, dirty: map[string]bool{}}
	if _, err := getJSON(b.txn, key('n', repo, prefix), &b.ctr); err != nil {
		b.Discard()
		return nil, fmt.Errorf("store: counter %s/%s: %w", repo, prefix, err)
	}
	var err error
	if b.stems, err = db.stems(b.txn, repo, prefix); err != nil {
		b.Discard()
		return nil, err
	}
	if b.ctr.Began.IsZero() {
		// The first batch anchors the first Change List of every set.
		b.ctr.Began = db.now().UTC().Truncate(time.Second)
		b.ctrDirty = true
	}
	return b, nil
}

// commitTxn commits the current transaction unless the disk is (nearly) full.
func (b *Batch) commitTxn() error {
	if err := b.db.space.check(); err != nil {
		return err
	}
	err := b.txn.Commit()
	// Committed, the events are visible to every snapshot opened from now
	// on; failed, they never will be. Either way they no longer hold the
	// horizon back.
	b.db.horizon.settled(b)
	if err != nil {
		return fmt.Errorf("store: commit %s/%s: %w", b.repo, b.prefix, err)
	}
	b.db.written.Store(true)
	return nil
}

// Parts is the number of transactions the batch needed beyond the first.
func (b *Batch) Parts() int { return b.parts }

func (b *Batch) stage(k, v []byte) { b.staged = append(b.staged, op{k: k, v: v}) }
func (b *Batch) stageDel(k []byte) { b.staged = append(b.staged, op{k: k, del: true}) }

// estimate is Badger's own size estimate for one write (txn.checkSize).
func (b *Batch) estimate(o op) int64 {
	v := int64(len(o.v))
	if v >= b.db.valueThreshold {
		v = 12
	}
	return int64(len(o.k)) + v + 2 + 10
}

// Apply writes one record's new state: the event (when ev is not nil: it gets
// the next sequence number and detection time, which become next.Seq and
// next.Modified, and next.FirstSeen when that is zero), the state, the
// metadata bytes (nil keeps the stored ones), set membership and counts, all
// as one unit that a transaction split never cuts.
func (b *Batch) Apply(next *Record, metadata []byte, ev *Event) error {
	short := false
	if ev != nil {
		if err := b.appendEvent(ev); err != nil {
			return err
		}
		next.Modified, next.Seq = ev.Time, ev.Seq
		if next.FirstSeen.IsZero() {
			next.FirstSeen = ev.Time
		}
		v := encodeEvent(ev)
		if short = next.sameEvent(ev); short {
			if err := b.learn("", ev.Identifier); err != nil {
				return err
			}
			v = shortEvent(ev.Identifier, b.stems)
		}
		b.stage(seqKey('e', ev.Seq, b.repo, b.prefix), v)
		if err := b.keepVersion(next, metadata, ev.Seq); err != nil {
			return err
		}
	}
	if err := b.put(next, metadata, short); err != nil {
		return err
	}
	b.ctr.Version++
	b.ctrDirty = true
	return b.endRecord()
}

// endRecord writes what the current record staged to the transaction,
// committing the transaction first when the record would not fit.
func (b *Batch) endRecord() error {
	b.got.valid = false
	if err := b.flushDay(); err != nil {
		return err
	}
	if b.ctrDirty {
		v, err := json.Marshal(b.ctr)
		if err != nil {
			return err
		}
		b.stage(key('n', b.repo, b.prefix), v)
		b.ctrDirty = false
	}
	for set := range b.dirty {
		l := b.lists[set]
		v, err := json.Marshal(l)
		if err != nil {
			return err
		}
		b.stage(key('l', b.repo, b.prefix, set, l.ID), v)
		if l.Count == 1 { // a new list: move the set's pointer to it
			b.stage(key('L', b.repo, b.prefix, set), []byte(l.ID))
		}
		delete(b.dirty, set)
	}
	if len(b.staged) == 0 {
		return nil
	}
	var size int64
	for _, o := range b.staged {
		size += b.estimate(o)
	}
	count := int64(len(b.staged))
	if b.txnCount > 0 && (b.txnCount+count >= b.db.maxBatchCount || b.txnSize+size >= b.db.maxBatchSize) {
		if err := b.commitTxn(); err != nil {
			return err
		}
		b.parts++
		b.txn = b.db.bdb.NewTransaction(true)
		b.txnSize, b.txnCount = 0, 0
	}
	for _, o := range b.staged {
		var err error
		if o.del {
			err = b.txn.Delete(o.k)
		} else {
			err = b.txn.Set(o.k, o.v)
		}
		if errors.Is(err, badger.ErrTxnTooBig) {
			return fmt.Errorf("store: one record of %s/%s needs more than a whole transaction (%d writes, ~%d bytes)", b.repo, b.prefix, count, size)
		}
		if err != nil {
			return fmt.Errorf("store: write %s/%s: %w", b.repo, b.prefix, err)
		}
	}
	b.txnSize += size
	b.txnCount += count
	b.staged = b.staged[:0]
	return nil
}

// Get returns the record as the batch sees it (including what the current
// record staged), or nil.
func (b *Batch) Get(id string) (*Record, error) {
	k := key('r', b.repo, b.prefix, id)
	r := &Record{Repo: b.repo, Prefix: b.prefix, Identifier: id}
	for i := len(b.staged) - 1; i >= 0; i-- {
		if string(b.staged[i].k) == string(k) {
			if b.staged[i].del {
				return nil, nil
			}
			return r, wrapKey(decodeRecord(b.staged[i].v, r, b.stems), b.repo, b.prefix, id)
		}
	}
	if b.got.valid && b.got.id == id {
		return b.got.rec.clone(), nil
	}
	found, err := getRecord(b.txn, k, r, b.stems)
	if err != nil {
		return nil, wrapKey(err, b.repo, b.prefix, id)
	}
	if !found {
		r = nil
	}
	b.got.id, b.got.rec, b.got.valid = id, r, true
	return r.clone(), nil
}

// put stages the record's state and, for a live record, its metadata bytes (nil
// keeps the stored bytes). It maintains set membership (keys only: a set's
// Resource List reads the states from r/, Snap.Resources) and the record
// counts. short says the record's event at rec.Seq was just stored short.
//
// A short event is read through the state, so a state that stops saying it
// (a new event, a datestamp bump) has it written in full first, in the same
// unit: no snapshot sees the one without the other.
func (b *Batch) put(rec *Record, metadata []byte, short bool) error {
	old, err := b.Get(rec.Identifier)
	if err != nil {
		return err
	}
	rec.eventShort = short
	if old != nil && old.eventShort {
		was := old.createdEvent()
		if !short && rec.sameEvent(&was) {
			rec.eventShort = true // the same event, which the state still says
		} else if err := b.fillEvent(&was); err != nil {
			return err
		}
	}
	if err := b.learn(rec.Landing, ""); err != nil {
		return err
	}
	v := encodeRecord(rec, b.stems)
	id := rec.Identifier
	b.stage(key('r', b.repo, b.prefix, id), v)
	if rec.Deleted {
		b.stageDel(key('d', b.repo, b.prefix, id))
	} else if metadata != nil {
		b.stage(key('d', b.repo, b.prefix, id), metadata)
	}
	before, after := old.Members(), rec.Members()
	for _, s := range before {
		if !slices.Contains(after, s) {
			b.stageDel(key('m', b.repo, b.prefix, s, id))
		}
	}
	for _, s := range after {
		if !slices.Contains(before, s) {
			b.stage(key('m', b.repo, b.prefix, s, id), nil)
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

// learn stores the namespace's landing stem, and its identifier stem,
// when the store has none yet (stems.go): from two records that share it,
// landing and id against the last ones the batch saw, so one record unlike
// the rest (the first a repository lists may be a landing page elsewhere)
// does not choose it. Only a stem found writes a transaction.
func (b *Batch) learn(landing, id string) error {
	var l, i string
	if landing != "" && b.stems.Landing == "" {
		l = landingStem(commonPrefix(b.seen.landing, landing))
		b.seen.landing = landing
	}
	if id != "" && b.stems.ID == "" {
		i = idStem(commonPrefix(b.seen.id, id))
		b.seen.id = id
	}
	if l == "" && i == "" {
		return nil
	}
	st, err := b.db.learnStems(b.repo, b.prefix, l, i)
	if err != nil {
		return err
	}
	b.stems = st
	return nil
}

// fillEvent stages ev, stored short so far, in full; an event Prune removed
// stays removed. (A Prune that removes it while this batch is open cannot be
// seen here: the full event then outlives it, older than the cutoff and in no
// kept list, until the next Prune.)
func (b *Batch) fillEvent(ev *Event) error {
	k := seqKey('e', ev.Seq, b.repo, b.prefix)
	if _, err := b.txn.Get(k); errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("store: change event %s/%s/%d: %w", b.repo, b.prefix, ev.Seq, err)
	}
	b.stage(k, encodeEvent(ev))
	return nil
}

func btoi(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// appendEvent assigns the event the next sequence number and a detection time strictly
// after the previous event's (microsecond steps), and stages its entry in each
// resource set it concerns (all records, and every set it joins, stays in or
// leaves) and those sets' Change List catalog; Apply stages the event itself.
// Until the transaction commits, the event holds the store's horizon at its
// time (horizon.go).
func (b *Batch) appendEvent(ev *Event) error {
	now := b.db.horizon.stamp(b, b.ctr.LastTime)
	b.ctr.Seq++
	b.ctr.LastTime = now
	b.ctrDirty = true
	ev.Seq, ev.Time, ev.Repo, ev.Prefix = b.ctr.Seq, now, b.repo, b.prefix
	if err := b.countDay(ev); err != nil {
		return err
	}
	sets := append([]string{AllSet}, unionSets(ev.SetsBefore, ev.SetsAfter)...)
	for _, s := range sets {
		c := ev.Change
		if s != AllSet {
			c = ev.SetChange(s)
		}
		if c == 0 {
			continue
		}
		// The all-records set's entries are the events themselves, and
		// another set's entry is its key alone: what the set sees follows
		// from the event (Snap.SetEvents), and a copy would only add to what
		// compactions rewrite. Prune writes the entry in full when it removes
		// an event a kept list still holds.
		if s != AllSet {
			b.stage(seqKey('x', ev.Seq, b.repo, b.prefix, s), nil)
		}
		if err := b.catalog(s, ev); err != nil {
			return err
		}
	}
	return nil
}

// catalog counts the event into the set's current Change List, starting a new
// list when the period changed, the current one is full, or the event's entry
// would take it past the byte limit (the current list then closes at its last
// entry, written here since the batch keeps only the newest list per set).
func (b *Batch) catalog(set string, ev *Event) error {
	cur, ok := b.lists[set]
	if !ok {
		var err error
		if cur, err = b.lastList(set); err != nil {
			return err
		}
		b.lists[set] = cur
	}
	var size int64
	if b.db.entryBytes != nil && b.db.clBytes > 0 {
		size = b.db.entryBytes(b.repo, b.prefix, ev.Identifier)
		if cur != nil && cur.Count > 0 && !cur.full() && cur.Covers(ev.Time) && cur.Bytes+size > b.db.clBytes {
			cur.Full = true
			v, err := json.Marshal(cur)
			if err != nil {
				return err
			}
			b.stage(key('l', b.repo, b.prefix, set, cur.ID), v)
		}
	}
	if cur == nil || !cur.Covers(ev.Time) {
		next := NextList(cur, b.ctr.Began, b.db.clPeriod, b.db.clLimit)
		next.Set = set
		cur = &next
	}
	if cur.Count == 0 {
		// The list's period is its first change's: it closes when that
		// period ends. Until then (empty) it was open under its From.
		cur.Period = ev.Time.Truncate(cur.Dur)
		cur.FirstSeq = ev.Seq
	}
	cur.Count++
	cur.Bytes += size
	cur.LastSeq = ev.Seq
	cur.LastTime = ev.Time
	b.lists[set] = cur
	b.dirty[set] = true
	return nil
}

// lastList reads the newest catalog entry of a set, or nil: the set's pointer
// key names it, so this is two point reads rather than an iterator.
func (b *Batch) lastList(set string) (*ChangeListInfo, error) {
	it, err := b.txn.Get(key('L', b.repo, b.prefix, set))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: change list pointer %s/%s/%q: %w", b.repo, b.prefix, set, err)
	}
	id, err := it.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	l := &ChangeListInfo{Set: set, ID: string(id)}
	found, err := getJSON(b.txn, key('l', b.repo, b.prefix, set, l.ID), l)
	if err != nil || !found {
		return nil, fmt.Errorf("store: change list catalog %s/%s/%q/%s missing: %v", b.repo, b.prefix, set, l.ID, err)
	}
	return l, nil
}

func unionSets(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// SetCheckpoint stages the checkpoint; Commit applies it after everything else.
func (b *Batch) SetCheckpoint(cp Checkpoint) error {
	if err := b.endRecord(); err != nil {
		return err
	}
	v, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	b.stage(key('c', b.repo, b.prefix), v)
	return nil
}

// MarkSeen records that a reconciliation pass saw the identifier.
func (b *Batch) MarkSeen(id string) error {
	b.stage(key('p', b.repo, b.prefix, id), nil)
	return b.endRecord()
}

// Commit makes everything in the batch durable.
// Commit ends the batch, whether it succeeds or not.
func (b *Batch) Commit() error {
	defer b.Discard()
	if err := b.endRecord(); err != nil {
		return err
	}
	return b.commitTxn()
}

// Discard drops what was not committed and ends the batch; it is safe after
// Commit and more than once.
func (b *Batch) Discard() {
	b.txn.Discard()
	b.db.horizon.settled(b)
	if !b.released {
		b.released = true
		b.db.mu.RUnlock()
	}
}
