package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	badger "github.com/dgraph-io/badger/v4"
)

// Stems are the starts most records of one (repository, format) share: of
// their landing pages ("https://repo.example.ac.jp/records/") and of their
// identifiers ("oai:repo.example.ac.jp:"). A record state whose landing page
// begins with the landing stem stores the rest of it alone (flagLandingRel),
// and a short event whose identifier begins with the identifier stem stores
// the rest of that (eventShortRel). Each is 30-40 bytes a record and format
// that every compaction rewrote, a fifth of what the tree held: with 700
// repositories, 11 % fewer bytes written a record read and a lower cost a
// record at the end of a first harvest (docs/benchmarks.md).
//
// Each stem is learnt from the first two records of a batch that share it
// (Batch.learn), stored at P/repo·prefix in a transaction of its own before
// any state or event that uses it, and never changed after: every state and
// event written relative to it is read with it. A record that does not
// begin with the stem is stored whole, so a poor choice costs bytes, never
// correctness.
type stems struct {
	Landing string `json:"landing,omitempty"`
	ID      string `json:"id,omitempty"`
}

func stemsKey(repo, prefix string) []byte { return key('P', repo, prefix) }

func (s stems) complete() bool { return s.Landing != "" && s.ID != "" }

// landingStem is a landing page's URL up to and including its last '/', or
// "" when that leaves nothing to share (no '/', or nothing after the scheme).
func landingStem(u string) string {
	i := strings.LastIndexByte(u, '/')
	if i < 0 || strings.HasSuffix(u[:i+1], "//") {
		return ""
	}
	return u[:i+1]
}

// idStem is the repository's part of an OAI identifier ("oai:" + namespace
// identifier + ":", OAI-PMH's identifier format), or of any other
// identifier the part up to and including its last '/', or "".
func idStem(id string) string {
	if rest, ok := strings.CutPrefix(id, "oai:"); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			return id[:len("oai:")+i+1]
		}
	}
	if i := strings.LastIndexByte(id, '/'); i > 0 && !strings.HasSuffix(id[:i+1], "//") {
		return id[:i+1]
	}
	return ""
}

// commonPrefix is the longest start a and b share, whole UTF-8 characters
// or not: a stem is cut from it at an ASCII '/' or ':'.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}

// stemCache holds the stems of every (repository, format) whose two stems
// are both stored: they never change, so a cached pair is always right. A
// namespace with a stem still missing is read from the store each time,
// by the transaction that reads what may use it.
type stemCache struct {
	mu sync.RWMutex
	m  map[counterKey]stems
}

func (c *stemCache) get(k counterKey) (stems, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.m[k]
	return s, ok
}

func (c *stemCache) put(k counterKey, s stems) {
	if !s.complete() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[counterKey]stems{}
	}
	c.m[k] = s
}

// stems returns the stems of (repo, prefix) that txn sees. A stem is
// committed before anything written relative to it, so txn sees every stem
// that what it reads was written with.
func (db *DB) stems(txn *badger.Txn, repo, prefix string) (stems, error) {
	k := counterKey{repo, prefix}
	if s, ok := db.stemCache.get(k); ok {
		return s, nil
	}
	var s stems
	if _, err := getJSON(txn, stemsKey(repo, prefix), &s); err != nil {
		return stems{}, fmt.Errorf("store: stems of %s/%s: %w", repo, prefix, err)
	}
	db.stemCache.put(k, s)
	return s, nil
}

// learnStems stores whichever of the stems of (repo, prefix) is not stored
// yet from landing and id (either may be ""), in a transaction of its own,
// and returns the stems as stored: a stem already there wins. The caller
// holds db.mu (a Batch does, from NewBatch on).
func (db *DB) learnStems(repo, prefix, landing, id string) (stems, error) {
	db.updateMu.Lock()
	defer db.updateMu.Unlock()
	var s stems
	err := db.bdb.Update(func(txn *badger.Txn) error {
		if _, err := getJSON(txn, stemsKey(repo, prefix), &s); err != nil {
			return err
		}
		was := s
		if s.Landing == "" {
			s.Landing = landing
		}
		if s.ID == "" {
			s.ID = id
		}
		if s == was {
			return nil
		}
		v, err := json.Marshal(s)
		if err != nil {
			return err
		}
		return txn.Set(stemsKey(repo, prefix), v)
	})
	if err != nil {
		return stems{}, fmt.Errorf("store: stems of %s/%s: %w", repo, prefix, err)
	}
	db.written.Store(true)
	db.stemCache.put(counterKey{repo, prefix}, s)
	return s, nil
}
