package harvest

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/rsbridge/rsbridge/bridge/ore"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// outcome is what classification decided about one record.
type outcome uint8

const (
	skipped     outcome = iota // unusable: no identifier, or live without metadata
	created                    // new, or back after a deletion: a created event
	updated                    // content hash or set membership changed: an updated event
	deleted                    // a live record deleted upstream or unseen by reconciliation
	unchanged                  // nothing a destination sees; upstream facts may still be kept
	tombstone                  // deleted on first sight: stored, no event
	stale                      // an older datestamp than the stored one: ignored
	fetch                      // reconciliation listed an identifier the store lacks
	quarantined                // the decoder could not use the record (oaipmh.RecordError)
)

// decision is what to do about one record: the state to store (nil: nothing),
// the metadata bytes to store (nil keeps the stored ones) and the event to
// append (nil: none). Apply it with store.Batch.Apply.
type decision struct {
	outcome  outcome
	next     *store.Record
	metadata []byte
	event    *store.Event
	why      string // why a record was skipped
}

// classify turns one harvested record into a decision against the stored state
// old (nil if never seen), without I/O (oaipmh-and-irdb.md §D):
//   - an unseen identifier is created; one first seen deleted is kept as a
//     tombstone and makes no event;
//   - a known live one whose content hash or expanded set membership differs is
//     updated; the same hash and sets make no event, only a new datestamp (or
//     membership written differently) is kept;
//   - status="deleted" of a live record is deleted;
//   - a deleted record that comes back is created;
//   - a datestamp older than the stored one is stale and ignored.
//
// Classifying the same record against its own result is unchanged with nothing
// to write, which makes replaying a page after a crash or a retried body safe.
// host is the repository's host, preferred for landing pages; now is the
// first-seen time of a new record.
func classify(old *store.Record, rec *oaipmh.Record, host string, now time.Time) decision {
	h := rec.Header
	if rec.Err != nil && !(h.Deleted && h.Identifier != "") {
		// A deleted record needs only its header; anything else the decoder
		// could not use waits in quarantine.
		return decision{outcome: quarantined, why: rec.Err.Reason}
	}
	switch {
	case h.Identifier == "":
		return decision{outcome: skipped, why: "record without identifier"}
	case !h.Deleted && rec.Metadata == nil:
		return decision{outcome: skipped, why: "record without metadata"}
	case old != nil && !h.Datestamp.IsZero() && h.Datestamp.Before(old.Datestamp):
		return decision{outcome: stale}
	}
	sets := normaliseSets(h.SetSpecs)
	raw := ""
	if h.Datestamp.IsZero() {
		raw = h.DatestampRaw
	}
	if h.Deleted {
		switch {
		case old == nil:
			return decision{outcome: tombstone, next: &store.Record{Identifier: h.Identifier, Datestamp: h.Datestamp,
				DatestampRaw: raw, Sets: sets, Deleted: true, FirstSeen: now}}
		case old.Deleted:
			if old.Datestamp.Equal(h.Datestamp) {
				return decision{outcome: unchanged}
			}
			next := *old
			next.Datestamp, next.DatestampRaw = h.Datestamp, raw
			return decision{outcome: unchanged, next: &next}
		}
		return remove(old, h.Datestamp)
	}
	md := md5.Sum(rec.Metadata)
	sh := sha256.Sum256(rec.Metadata)
	next := &store.Record{
		Identifier:   h.Identifier,
		Datestamp:    h.Datestamp,
		DatestampRaw: raw,
		Sets:         sets,
		Namespace:    rec.MetadataNamespace,
		Length:       int64(len(rec.Metadata)),
		MD5:          hex.EncodeToString(md[:]),
		SHA256:       hex.EncodeToString(sh[:]),
		// Zero: a record first stored now is first seen at its created
		// event's time (Batch.Apply), which its state then need not repeat.
	}
	if old != nil {
		next.FirstSeen, next.Landing = old.FirstSeen, old.Landing
	}
	if old == nil || old.SHA256 != next.SHA256 {
		next.Landing = landingPage(rec.Metadata, host)
	}
	switch {
	case old == nil || old.Deleted:
		return decision{outcome: created, next: next, metadata: rec.Metadata, event: &store.Event{
			Identifier: h.Identifier, Change: store.Created, SetsAfter: next.Members(),
			SHA256: next.SHA256, MD5: next.MD5, Length: next.Length, Datestamp: h.Datestamp}}
	case old.SHA256 != next.SHA256 || !slices.Equal(old.Members(), next.Members()):
		meta := rec.Metadata
		if old.SHA256 == next.SHA256 {
			meta = nil // a set move: the bytes are already stored
		}
		return decision{outcome: updated, next: next, metadata: meta, event: &store.Event{
			Identifier: h.Identifier, Change: store.Updated, SetsBefore: old.Members(), SetsAfter: next.Members(),
			SHA256: next.SHA256, MD5: next.MD5, Length: next.Length, Datestamp: h.Datestamp}}
	case old.Datestamp.Equal(next.Datestamp) && slices.Equal(old.Sets, next.Sets) && old.DatestampRaw == next.DatestampRaw:
		return decision{outcome: unchanged}
	}
	// A datestamp bump (or the same membership written differently): keep the
	// new upstream facts, no event, no new bytes.
	next.Modified, next.Seq = old.Modified, old.Seq
	return decision{outcome: unchanged, next: next}
}

// classifyListed compares one header of a complete ListIdentifiers pass (a
// reconciliation) with the stored state: a deleted header of a live record
// deletes it; an identifier the store lacks (or holds deleted) is to be
// fetched; changed setSpecs without a datestamp change (OAI-PMH does not
// require one) are a set move with the stored bytes.
func classifyListed(old *store.Record, h *oaipmh.Header) decision {
	switch {
	case h.Identifier == "":
		return decision{outcome: skipped, why: "header without identifier"}
	case h.Deleted:
		if old != nil && !old.Deleted {
			return classify(old, &oaipmh.Record{Header: *h}, "", time.Time{})
		}
		return decision{outcome: unchanged}
	case old == nil || old.Deleted:
		return decision{outcome: fetch}
	case !slices.Equal(old.Members(), store.ExpandSets(h.SetSpecs)):
		next := *old
		next.Sets = normaliseSets(h.SetSpecs)
		return decision{outcome: updated, next: &next, event: &store.Event{
			Identifier: old.Identifier, Change: store.Updated, SetsBefore: old.Members(), SetsAfter: next.Members(),
			SHA256: old.SHA256, MD5: old.MD5, Length: old.Length, Datestamp: h.Datestamp}}
	}
	return decision{outcome: unchanged}
}

// classifyUnseen is the reconciliation delete: a live record that a complete
// identifier list did not name is gone.
func classifyUnseen(old *store.Record) decision {
	if old == nil || old.Deleted {
		return decision{outcome: unchanged}
	}
	return remove(old, old.Datestamp)
}

// remove turns a live record into a tombstone with a deleted event.
func remove(old *store.Record, datestamp time.Time) decision {
	next := *old
	next.Deleted = true
	next.Datestamp = datestamp
	return decision{outcome: deleted, next: &next, event: &store.Event{
		Identifier: old.Identifier, Change: store.Deleted, SetsBefore: old.Members(), Datestamp: datestamp}}
}

// landingPage is the landing page the metadata names (rel="describes"), or
// "": JPCOAR jpcoar:identifier[@identifierType="URI"] among the root's direct
// children, preferring the repository's host; junii2 URI; otherwise the first
// http(s) dc:identifier. The rules live with the rest of the extraction in
// package ore.
func landingPage(metadata []byte, repoHost string) string {
	return ore.Landing(metadata, repoHost)
}

func normaliseSets(specs []string) []string {
	if len(specs) == 0 {
		return nil
	}
	out := slices.Clone(specs)
	slices.Sort(out)
	return slices.Compact(out)
}

// Counts tallies what a harvest or reconciliation did.
type Counts struct {
	Pages      int64 `json:"pages"`
	Records    int64 `json:"records"`
	Created    int64 `json:"created"`
	Updated    int64 `json:"updated"`
	Deleted    int64 `json:"deleted"`
	Unchanged  int64 `json:"unchanged"`
	Tombstones int64 `json:"tombstones"` // deleted on first sight: stored, no event
	Stale      int64 `json:"stale"`      // older datestamp than the stored one: ignored
	Skipped    int64 `json:"skipped"`    // unusable records (no identifier, no metadata)
	// Quarantined records could not be used (malformed, too large, a bad
	// identifier); Repaired ones were stored after a safe repair (U+FFFD);
	// BadDatestamps had no usable datestamp.
	Quarantined   int64 `json:"quarantined"`
	Repaired      int64 `json:"repaired"`
	BadDatestamps int64 `json:"bad_datestamps"`
}

// Changes is how many change events the counts stand for.
func (c Counts) Changes() int64 { return c.Created + c.Updated + c.Deleted }

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Pages += o.Pages
	c.Records += o.Records
	c.Created += o.Created
	c.Updated += o.Updated
	c.Deleted += o.Deleted
	c.Unchanged += o.Unchanged
	c.Tombstones += o.Tombstones
	c.Stale += o.Stale
	c.Skipped += o.Skipped
	c.Quarantined += o.Quarantined
	c.Repaired += o.Repaired
	c.BadDatestamps += o.BadDatestamps
}

// count tallies one decision (fetch is counted when the fetched record is).
func (c *Counts) count(o outcome) {
	switch o {
	case skipped:
		c.Skipped++
	case created:
		c.Created++
	case updated:
		c.Updated++
	case deleted:
		c.Deleted++
	case unchanged:
		c.Unchanged++
	case tombstone:
		c.Tombstones++
	case stale:
		c.Stale++
	case quarantined:
		c.Quarantined++
	}
}
