package store

import (
	"bytes"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// eventReader reads the change events of one repository and format in a
// transaction, a short one (codec.go) through the record state it stands
// for. The states are read by an iterator of its own that walks forward
// when the identifiers follow each other, as a first harvest's mostly do,
// and seeks otherwise: a point lookup an event made a cold 50,000-entry
// Change List take twice as long. Close it when done.
type eventReader struct {
	db           *DB
	txn          *badger.Txn
	repo, prefix string
	rp, want     []byte
	states       *badger.Iterator // opened at the first short event
	stems        *stems           // read at the first short event
}

func (db *DB) newEventReader(txn *badger.Txn, repo, prefix string) *eventReader {
	return &eventReader{db: db, txn: txn, repo: repo, prefix: prefix, rp: prefixKey('r', repo, prefix)}
}

// stemsOf returns the namespace's stems, read once.
func (er *eventReader) stemsOf() (stems, error) {
	if er.stems == nil {
		st, err := er.db.stems(er.txn, er.repo, er.prefix)
		if err != nil {
			return stems{}, err
		}
		er.stems = &st
	}
	return *er.stems, nil
}

// Close closes the states' iterator.
func (er *eventReader) Close() {
	if er.states != nil {
		er.states.Close()
	}
}

// read reads the event at item (sequence number seq) into ev.
func (er *eventReader) read(item *badger.Item, seq uint64, ev *Event) error {
	*ev = Event{Seq: seq, Repo: er.repo, Prefix: er.prefix}
	var short bool
	err := item.Value(func(v []byte) (err error) {
		var st stems
		if len(v) > 0 && v[0] == eventShortRel {
			if st, err = er.stemsOf(); err != nil {
				return err
			}
		}
		short, err = decodeEvent(v, ev, st)
		return err
	})
	if err != nil || !short {
		return err
	}
	r, err := er.state(ev.Identifier)
	switch {
	case err != nil:
		return err
	case r == nil || !r.eventShort || r.Seq != seq:
		return fmt.Errorf("%w: short event %d of %q, whose record state does not say it", errCorrupt, seq, ev.Identifier)
	}
	*ev = r.createdEvent()
	return nil
}

// state reads the record state of id, or nil.
func (er *eventReader) state(id string) (*Record, error) {
	er.want = append(append(er.want[:0], er.rp...), id...)
	switch {
	case er.states == nil:
		o := badger.DefaultIteratorOptions
		o.Prefix, o.PrefetchValues = er.rp, false
		er.states = er.txn.NewIterator(o)
		er.states.Seek(er.want)
	case !er.states.ValidForPrefix(er.rp) || bytes.Compare(er.states.Item().Key(), er.want) > 0:
		er.states.Seek(er.want) // behind it: seekForward only walks on
	}
	if !seekForward(er.states, er.rp, er.want) {
		return nil, nil
	}
	st, err := er.stemsOf()
	if err != nil {
		return nil, err
	}
	r := &Record{Repo: er.repo, Prefix: er.prefix, Identifier: id}
	if err := er.states.Item().Value(func(v []byte) error { return decodeRecord(v, r, st) }); err != nil {
		return nil, wrapKey(err, er.repo, er.prefix, id)
	}
	return r, nil
}
