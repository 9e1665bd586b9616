package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	badger "github.com/dgraph-io/badger/v4"
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
	// Long holds the start of an identifier too long to be a key (and to
	// be published), which is kept under LongKey of the whole identifier;
	// LongBytes is its length.
	Long      string `json:"long,omitempty"`
	LongBytes int    `json:"long_bytes,omitempty"`
}

// LongKey is the key a record whose identifier is too long for a key is
// quarantined under: no identifier starts with a space (they are trimmed).
func LongKey(full string) string {
	sum := sha256.Sum256([]byte(full))
	return " long:" + hex.EncodeToString(sum[:])
}

// LongQuarantine is the entry of a record refused for the length of its
// identifier full.
func LongQuarantine(full, reason, url string, now time.Time) Quarantined {
	cut := min(len(full), 200)
	for cut > 0 && cut < len(full) && !utf8.RuneStart(full[cut]) {
		cut--
	}
	return Quarantined{Identifier: LongKey(full), Long: full[:cut], LongBytes: len(full), Reason: reason, URL: url, First: now, Last: now}
}

// Shown is the identifier as pages show it: a long one cut, with its length.
func (q Quarantined) Shown() string {
	if q.LongBytes == 0 {
		return q.Identifier
	}
	return fmt.Sprintf("%s… (%d bytes)", q.Long, q.LongBytes)
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

// IsQuarantined reports whether a record of (repo, prefix) is in quarantine.
func (s *Snap) IsQuarantined(repo, prefix, id string) (bool, error) {
	_, err := s.txn.Get(key('z', repo, prefix, id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}
