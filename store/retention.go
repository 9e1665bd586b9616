package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Pruned says what one Prune removed.
type Pruned struct {
	Lists    int      // closed Change Lists, over all sets
	Entries  int      // per-set Change List entries
	Filled   int      // per-set entries of kept lists written in full, their events removed
	Events   int      // change events
	Versions int      // kept versions of superseded bytes
	Files    []string // Change Dump files now queued for removal
}

// Prune removes the change history of (repo, prefix) older than cutoff
// (GW-RS-04): every closed Change List that closed at or before cutoff, with
// its entries and its Change Dump package (queued for removal after grace),
// events detected before cutoff, and kept versions superseded before the
// first event that remains. The newest list of a set always stays, so the
// Change List Index never goes empty. Deletes go through Badger write batches
// (bounded transactions); a crash midway leaves a consistent store that the
// next Prune finishes.
func (db *DB) Prune(ctx context.Context, repo, prefix string, cutoff, now time.Time, grace time.Duration) (Pruned, error) {
	var out Pruned
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.readOnly {
		return out, &SpaceError{Dir: db.dir, ReadOnly: true}
	}
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	hnow, held := db.horizon.read() // lists are closed as readers see them
	horizonAt := at(hnow, held, repo, prefix)
	err := db.bdb.View(func(txn *badger.Txn) error {
		// The sets that have Change Lists: their pointer keys.
		var sets []string
		lp := prefixKey('L', repo, prefix)
		if err := scan(txn, lp, false, func(k, _ []byte) error { sets = append(sets, string(k[len(lp):])); return nil }); err != nil {
			return err
		}
		// The all-records set's Change Lists are read from the events
		// themselves (it has no entries of its own): its lists that stay keep
		// their events, whatever their age. Another set's lists that stay
		// have their entries written in full when the events go (kept).
		keep := uint64(math.MaxUint64)
		kept := map[string]uint64{}
		for _, set := range sets {
			first, err := db.pruneSet(ctx, txn, wb, repo, prefix, set, cutoff, horizonAt, now, grace, &out)
			if err != nil {
				return err
			}
			if set == AllSet {
				keep = first
			} else if first != math.MaxUint64 {
				kept[set] = first
			}
		}
		firstKept, err := db.pruneEvents(ctx, txn, wb, repo, prefix, cutoff, keep, kept, &out)
		if err != nil {
			return err
		}
		return db.pruneVersions(ctx, txn, wb, repo, prefix, firstKept, &out)
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return out, fmt.Errorf("store: prune %s/%s: %w", repo, prefix, err)
	}
	return out, nil
}

// pruneSet removes the set's Change Lists that closed at or before cutoff,
// with their entries and packages, and returns the sequence number of the
// first event a remaining list holds (MaxUint64: they hold none).
func (db *DB) pruneSet(ctx context.Context, txn *badger.Txn, wb *badger.WriteBatch, repo, prefix, set string, cutoff, at, now time.Time, grace time.Duration, out *Pruned) (uint64, error) {
	p := prefixKey('l', repo, prefix, set)
	var lists []ChangeListInfo
	err := scan(txn, p, true, func(k, v []byte) error {
		l := ChangeListInfo{Set: set, ID: string(k[len(p):])}
		if err := json.Unmarshal(v, &l); err != nil {
			return err
		}
		lists = append(lists, l)
		return nil
	})
	if err != nil {
		return 0, err
	}
	keep := uint64(math.MaxUint64)
	for i, l := range lists {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		l.Succeeded = i < len(lists)-1
		until := l.Until(at)
		if i == len(lists)-1 || until.IsZero() || until.After(cutoff) {
			// Lists close in order: the rest are newer. Only the newest can
			// be empty (FirstSeq is set by its first entry).
			if l.Count > 0 {
				keep = l.FirstSeq
			}
			break
		}
		if err := wb.Delete(key('l', repo, prefix, set, l.ID)); err != nil {
			return 0, err
		}
		xp := prefixKey('x', repo, prefix, set)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: xp})
		for it.Seek(seqKey('x', l.FirstSeq, repo, prefix, set)); it.ValidForPrefix(xp) && seqOf(it.Item().Key()) <= l.LastSeq; it.Next() {
			if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
				it.Close()
				return 0, err
			}
			out.Entries++
		}
		it.Close()
		var pkg Package
		if found, err := getJSON(txn, key('Q', repo, prefix, set, l.ID), &pkg); err != nil {
			return 0, err
		} else if found {
			if err := wb.Delete(key('Q', repo, prefix, set, l.ID)); err != nil {
				return 0, err
			}
			for _, f := range []string{pkg.File, pkg.Manifest} {
				g, _ := json.Marshal(Garbage{File: f, RemoveAfter: now.Add(grace)})
				if err := wb.Set(key('G', f), g); err != nil {
					return 0, err
				}
				out.Files = append(out.Files, f)
			}
		}
		out.Lists++
	}
	return keep, nil
}

// pruneEvents deletes events detected before cutoff, up to (not including)
// sequence number keep, and returns the sequence number of the first event
// kept (or the next one to come). kept holds, for each set other than all
// records, the first sequence number its remaining lists hold: an event
// going that such a list holds has the set's entry written in full first,
// so whatever part of the write batch a crash leaves, no entry names a
// missing event.
func (db *DB) pruneEvents(ctx context.Context, txn *badger.Txn, wb *badger.WriteBatch, repo, prefix string, cutoff time.Time, keep uint64, kept map[string]uint64, out *Pruned) (uint64, error) {
	p := prefixKey('e', repo, prefix)
	// No prefetch: most passes stop at the first event, and an event's
	// value is read when the loop reaches it.
	it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
	defer it.Close()
	er := db.newEventReader(txn, repo, prefix)
	defer er.Close()
	var ctr Counter
	if _, err := getJSON(txn, key('n', repo, prefix), &ctr); err != nil {
		return 0, err
	}
	for it.Seek(p); it.ValidForPrefix(p); it.Next() {
		if out.Events%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		seq := seqOf(it.Item().Key())
		var ev Event
		if err := er.read(it.Item(), seq, &ev); err != nil {
			return 0, fmt.Errorf("store: change event %s/%s/%d: %w", repo, prefix, seq, err)
		}
		if seq >= keep || !ev.Time.Before(cutoff) {
			return seq, nil
		}
		for _, set := range unionSets(ev.SetsBefore, ev.SetsAfter) {
			if first, ok := kept[set]; !ok || seq < first || ev.SetChange(set) == 0 {
				continue
			}
			se := ev.setEvent(set)
			if err := wb.Set(seqKey('x', seq, repo, prefix, set), encodeSetEvent(&se)); err != nil {
				return 0, err
			}
			out.Filled++
		}
		if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
			return 0, err
		}
		out.Events++
	}
	return ctr.Seq + 1, nil
}

// pruneVersions deletes kept bytes superseded before the first kept event:
// every event that could name them is older still, and gone.
func (db *DB) pruneVersions(ctx context.Context, txn *badger.Txn, wb *badger.WriteBatch, repo, prefix string, firstKept uint64, out *Pruned) error {
	p := prefixKey('V', repo, prefix)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
	defer it.Close()
	for it.Seek(p); it.ValidForPrefix(p); it.Next() {
		k := it.Item().Key()
		if len(k) < len(p)+9 {
			return errCorrupt
		}
		if seq := seqOf(k[:len(p)+8]); seq >= firstKept {
			return nil
		}
		if out.Versions%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// V/…seq·id·sha -> v/…id·sha
		rest := k[len(p)+9:]
		i := slices.Index(rest, 0)
		if i < 0 {
			return errCorrupt
		}
		if err := wb.Delete(versionKey(repo, prefix, string(rest[:i]), string(rest[i+1:]))); err != nil {
			return err
		}
		if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
			return err
		}
		out.Versions++
	}
	return nil
}

// Oldest returns when the retained change history of (repo, prefix, set)
// begins: the From of its oldest Change List (zero if it has none).
func (s *Snap) Oldest(repo, prefix, set string) (time.Time, error) {
	p := prefixKey('l', repo, prefix, set)
	var from time.Time
	it := s.txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true, PrefetchSize: 1})
	defer it.Close()
	it.Seek(p)
	if !it.ValidForPrefix(p) {
		return from, nil
	}
	var l ChangeListInfo
	err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &l) })
	return l.From, err
}
