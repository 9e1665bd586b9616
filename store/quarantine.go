package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// Records a harvest could not use (malformed XML, an identifier too long to
// be a key, a record over max_record_bytes) are quarantined, not stored:
//
//	z/repo·prefix·id   Quarantined
//
// Later runs fetch them again (GetRecord) and release them when they parse.

// Quarantined is a record a harvest skipped, and why.
type Quarantined struct {
	Identifier string    `json:"-"`
	Reason     string    `json:"reason"`
	URL        string    `json:"url"` // the request the record came in
	First      time.Time `json:"first"`
	Last       time.Time `json:"last"`
	Times      int       `json:"times"` // how often it was found unusable
}

// Quarantine records that the record id could not be used, in the batch (so
// it commits with the page it came in).
func (b *Batch) Quarantine(q Quarantined) error {
	k := key('z', b.repo, b.prefix, q.Identifier)
	var old Quarantined
	found, err := getJSON(b.txn, k, &old)
	if err != nil {
		return fmt.Errorf("store: quarantine %s/%s/%q: %w", b.repo, b.prefix, q.Identifier, err)
	}
	if found {
		q.First, q.Times = old.First, old.Times
	}
	q.Times++
	v, err := json.Marshal(q)
	if err != nil {
		return err
	}
	b.stage(k, v)
	return b.endRecord()
}

// Release takes a record out of quarantine.
func (b *Batch) Release(id string) error {
	b.stageDel(key('z', b.repo, b.prefix, id))
	return b.endRecord()
}

// Quarantine calls fn for the quarantined records of (repo, prefix), at most
// limit of them, in identifier order, and returns how many there are.
func (s *Snap) Quarantine(repo, prefix string, limit int, fn func(Quarantined) error) (int, error) {
	p := prefixKey('z', repo, prefix)
	n := 0
	err := scan(s.txn, p, true, func(k, v []byte) error {
		n++
		if n > limit {
			return nil
		}
		q := Quarantined{Identifier: string(k[len(p):])}
		if err := json.Unmarshal(v, &q); err != nil {
			return fmt.Errorf("store: quarantine %s/%s: %w", repo, prefix, err)
		}
		return fn(q)
	})
	return n, err
}
