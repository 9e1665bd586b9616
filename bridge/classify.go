package bridge

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

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
}

func (c *Counts) add(o Counts) {
	c.Pages += o.Pages
	c.Records += o.Records
	c.Created += o.Created
	c.Updated += o.Updated
	c.Deleted += o.Deleted
	c.Unchanged += o.Unchanged
	c.Tombstones += o.Tombstones
	c.Stale += o.Stale
	c.Skipped += o.Skipped
}

// applier turns harvested records into record state and change events inside one
// store batch (oaipmh-and-irdb.md §D):
//   - an unseen identifier is created; one first seen deleted is kept as a
//     tombstone and makes no event;
//   - a known live one whose content hash or expanded set membership differs is
//     updated; the same hash and sets make no event, only the datestamp is kept;
//   - status="deleted" of a live record is deleted;
//   - a deleted record that comes back is created;
//   - a datestamp older than the stored one is stale and ignored.
//
// Applying the same record twice is a no-op, which is what makes replaying a page
// after a crash or a retried body safe.
type applier struct {
	batch  *store.Batch
	counts *Counts
	now    func() time.Time
	log    *slog.Logger
	url    string
	host   string // the repository's host, preferred for landing pages
	maxDS  time.Time
}

func (a *applier) apply(rec *oaipmh.Record) error {
	if err := a.applyRecord(rec); err != nil {
		return err
	}
	return a.batch.EndRecord()
}

func (a *applier) applyRecord(rec *oaipmh.Record) error {
	a.counts.Records++
	h := rec.Header
	if h.Identifier == "" {
		a.counts.Skipped++
		a.log.Warn("record without identifier skipped", "url", a.url)
		return nil
	}
	if !h.Deleted && rec.Metadata == nil {
		a.counts.Skipped++
		a.log.Warn("record without metadata skipped", "url", a.url, "oai_id", h.Identifier)
		return nil
	}
	if h.Datestamp.After(a.maxDS) {
		a.maxDS = h.Datestamp
	}
	old, err := a.batch.Get(h.Identifier)
	if err != nil {
		return err
	}
	if old != nil && !h.Datestamp.IsZero() && h.Datestamp.Before(old.Datestamp) {
		a.counts.Stale++
		return nil
	}
	sets := normaliseSets(h.SetSpecs)
	raw := ""
	if h.Datestamp.IsZero() {
		raw = h.DatestampRaw
	}
	if h.Deleted {
		return a.deleted(old, h, sets, raw)
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
		FirstSeen:    a.now().UTC(),
	}
	if old != nil {
		next.FirstSeen = old.FirstSeen
		next.Landing = old.Landing
	}
	if old == nil || old.SHA256 != next.SHA256 {
		next.Landing = landingPage(rec.Metadata, a.host)
	}
	switch {
	case old == nil || old.Deleted:
		ev := &store.Event{Identifier: h.Identifier, Change: store.Created, SetsAfter: next.Members(),
			SHA256: next.SHA256, MD5: next.MD5, Length: next.Length, Datestamp: h.Datestamp}
		a.counts.Created++
		return a.write(ev, next, rec.Metadata)
	case old.SHA256 != next.SHA256 || !slices.Equal(old.Members(), next.Members()):
		ev := &store.Event{Identifier: h.Identifier, Change: store.Updated, SetsBefore: old.Members(), SetsAfter: next.Members(),
			SHA256: next.SHA256, MD5: next.MD5, Length: next.Length, Datestamp: h.Datestamp}
		a.counts.Updated++
		meta := rec.Metadata
		if old.SHA256 == next.SHA256 {
			meta = nil // a set move: the bytes are already stored
		}
		return a.write(ev, next, meta)
	default:
		a.counts.Unchanged++
		if old.Datestamp.Equal(next.Datestamp) && slices.Equal(old.Sets, next.Sets) && old.DatestampRaw == next.DatestampRaw {
			return nil
		}
		// A datestamp bump (or the same membership written differently): keep
		// the new upstream facts, no event, no new bytes.
		next.Modified, next.Seq = old.Modified, old.Seq
		return a.batch.Put(next, nil)
	}
}

func (a *applier) deleted(old *store.Record, h oaipmh.Header, sets []string, raw string) error {
	switch {
	case old == nil:
		a.counts.Tombstones++
		now := a.now().UTC()
		return a.batch.Put(&store.Record{Identifier: h.Identifier, Datestamp: h.Datestamp, DatestampRaw: raw, Sets: sets, Deleted: true, FirstSeen: now}, nil)
	case old.Deleted:
		a.counts.Unchanged++
		if old.Datestamp.Equal(h.Datestamp) {
			return nil
		}
		old.Datestamp, old.DatestampRaw = h.Datestamp, raw
		return a.batch.Put(old, nil)
	}
	return a.remove(old, h.Datestamp)
}

// remove turns a live record into a tombstone with a deleted event.
func (a *applier) remove(old *store.Record, datestamp time.Time) error {
	ev := &store.Event{Identifier: old.Identifier, Change: store.Deleted, SetsBefore: old.Members(), Datestamp: datestamp}
	next := *old
	next.Deleted = true
	next.Datestamp = datestamp
	a.counts.Deleted++
	return a.write(ev, &next, nil)
}

func (a *applier) write(ev *store.Event, rec *store.Record, meta []byte) error {
	if err := a.batch.Append(ev); err != nil {
		return err
	}
	rec.Modified, rec.Seq = ev.Time, ev.Seq
	return a.batch.Put(rec, meta)
}

func normaliseSets(specs []string) []string {
	if len(specs) == 0 {
		return nil
	}
	out := slices.Clone(specs)
	slices.Sort(out)
	return slices.Compact(out)
}
