package store

import (
	"encoding/json"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// Record quality (issue 20): what IRDB's checks find in each stored record
// of a format, kept beside the records and never in their way:
//
//	u/repo·prefix·id   the issues of one live record that has any (JSON)
//	U/repo·prefix      the format's quality: checker cursor and summary

// QualityIssue is one finding of a check: its level (record-error,
// item-error, warning, normalised) and its reason code.
type QualityIssue struct {
	Level string `json:"l"`
	Code  string `json:"c"`
}

// Quality is a format's checking state and summary.
type Quality struct {
	// Version is the checker's; Seq the last change event checked.
	Version string `json:"version"`
	Seq     uint64 `json:"seq"`
	// Checked counts the live records checked; Records the records with
	// at least one issue of each level; Codes the records with each
	// reason code (as of the last completed pass).
	Checked int64            `json:"checked"`
	Records map[string]int64 `json:"records,omitempty"`
	Codes   map[string]int64 `json:"codes,omitempty"`
}

func qualityKey(repo, prefix, id string) []byte    { return key('u', repo, prefix, id) }
func qualitySummaryKey(repo, prefix string) []byte { return key('U', repo, prefix) }

// Quality reads a format's quality state (zero before the first check).
func (s *Snap) Quality(repo, prefix string) (Quality, error) {
	var q Quality
	if _, err := getJSON(s.txn, qualitySummaryKey(repo, prefix), &q); err != nil {
		return Quality{}, fmt.Errorf("store: quality %s/%s: %w", repo, prefix, err)
	}
	return q, nil
}

// QualityIssues calls fn with the issues of every record of (repo, prefix)
// that has any, in identifier order, from start on.
func (s *Snap) QualityIssues(repo, prefix, start string, fn func(id string, issues []QualityIssue) error) error {
	p := prefixKey('u', repo, prefix)
	err := scanFrom(s.txn, p, qualityKey(repo, prefix, start), func(k, v []byte) error {
		var issues []QualityIssue
		if err := json.Unmarshal(v, &issues); err != nil {
			return err
		}
		return fn(string(k[len(p):]), issues)
	})
	if err != nil {
		return fmt.Errorf("store: quality %s/%s: %w", repo, prefix, err)
	}
	return nil
}

// PutQuality commits, in one transaction, the issues of checked records
// (none: the record's entry goes) and the format's quality state.
func (db *DB) PutQuality(repo, prefix string, issues map[string][]QualityIssue, q Quality) error {
	err := db.update(func(txn *badger.Txn) error {
		for id, list := range issues {
			if len(list) == 0 {
				if err := txn.Delete(qualityKey(repo, prefix, id)); err != nil {
					return err
				}
				continue
			}
			if err := setJSON(txn, qualityKey(repo, prefix, id), list); err != nil {
				return err
			}
		}
		return setJSON(txn, qualitySummaryKey(repo, prefix), q)
	})
	if err != nil {
		return fmt.Errorf("store: quality %s/%s: %w", repo, prefix, err)
	}
	return nil
}
