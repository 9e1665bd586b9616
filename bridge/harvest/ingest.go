package harvest

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// ingest is the write side of one store batch: every record takes one route,
// read the stored state → classify (pure) → Batch.Apply, and is counted.
type ingest struct {
	batch  *store.Batch
	counts *Counts
	log    *slog.Logger
	url    string // the request the records came from, for warnings
	host   string // the repository's host, preferred for landing pages
	now    func() time.Time
	maxDS  time.Time // newest datestamp seen
	// locBase is the length of the URLs rsbridge serves this format's
	// records at, less the identifier.
	locBase int
	// unidentified counts quarantined items without a usable identifier.
	unidentified int
}

// ingest starts the write side of a batch of (repository, prefix).
func (h *Harvester) ingest(batch *store.Batch, counts *Counts, prefix, url string) *ingest {
	return &ingest{batch: batch, counts: counts, log: h.log.With("prefix", prefix), url: url, host: h.host, now: h.now,
		locBase: h.locBase[prefix]}
}

// publishable reports why an identifier cannot be published, or "": the
// URL rsbridge serves it at must fit a sitemap <loc> (2,048 characters).
func (in *ingest) publishable(id string) string {
	if n := in.locBase + len(source.Segment(id)); n > rsync.MaxLoc {
		return fmt.Sprintf("identifier too long to publish: its URL would be %d characters, a sitemap <loc> holds at most %d (shorten base_url or the repository name, or ask the repository to use shorter identifiers)", n, rsync.MaxLoc)
	}
	return ""
}

// record applies one harvested record (ListRecords or GetRecord).
func (in *ingest) record(rec *oaipmh.Record) error {
	in.counts.Records++
	var old *store.Record
	if id := rec.Header.Identifier; id != "" {
		var err error
		if old, err = in.batch.Get(id); err != nil {
			return err
		}
	}
	d := classify(old, rec, in.host, in.now().UTC())
	if id := rec.Header.Identifier; id != "" && d.outcome != quarantined {
		if why := in.publishable(id); why != "" {
			return in.quarantine(id, &oaipmh.RecordError{Identifier: source.Clip(id, 200), Reason: why})
		}
	}
	switch {
	case d.outcome == quarantined && rec.Header.Identifier == "" && rec.LongIdentifier != "":
		return in.quarantineLong(rec.LongIdentifier, rec.Err)
	case d.outcome == quarantined:
		return in.quarantine(rec.Header.Identifier, rec.Err)
	case len(rec.Repairs) > 0 && d.outcome != skipped:
		// The stored bytes, and the hashes published for them, differ from
		// what the repository sent: say so.
		in.counts.Repaired++
		in.log.Warn("record repaired before storing", "url", in.url, "oai_id", rec.Header.Identifier, "repairs", strings.Join(rec.Repairs, "; "))
	}
	if ds := rec.Header.Datestamp; d.outcome != skipped && ds.After(in.maxDS) {
		in.maxDS = ds
	}
	return in.apply(d, rec.Header.Identifier)
}

// quarantine notes a record the decoder could not use: counted, logged with
// the request and the reason, and kept in the store (when it has an
// identifier) so later runs fetch it again.
func (in *ingest) quarantine(id string, e *oaipmh.RecordError) error {
	in.counts.Quarantined++
	in.log.Warn("record quarantined: skipped, the harvest goes on", "url", in.url, "oai_id", e.Identifier, "reason", e.Reason)
	if id == "" {
		in.unidentified++
		return nil
	}
	now := in.now().UTC()
	return in.batch.Quarantine(store.Quarantined{Identifier: id, Reason: e.Reason, URL: in.url, First: now, Last: now})
}

// quarantineLong notes a record refused for the length of its identifier:
// kept, counted and shown like any other quarantined record (under
// store.LongKey, since the identifier cannot be a key). It is not fetched
// again: an identifier this long could not be published either (a sitemap
// <loc> holds 2,048 characters), so only the repository can fix it; the
// lists that carry it again update it.
func (in *ingest) quarantineLong(full string, e *oaipmh.RecordError) error {
	in.counts.Quarantined++
	in.log.Warn("record quarantined: skipped, the harvest goes on", "url", in.url, "oai_id", e.Identifier, "reason", e.Reason)
	why := e.Reason + "; no URL could publish it (a sitemap <loc> holds 2,048 characters): the repository must shorten it"
	return in.batch.Quarantine(store.LongQuarantine(full, why, in.url, in.now().UTC()))
}

// listed marks one header of a reconciliation pass as seen and applies what it
// shows; it reports whether the record must be fetched.
func (in *ingest) listed(hd *oaipmh.Header) (needFetch bool, err error) {
	if hd.Err != nil && hd.Identifier == "" {
		// Some record was listed but cannot be named: deleting what the
		// pass did not see is no longer safe (finishReconcile refuses).
		in.counts.Quarantined++
		in.unidentified++
		in.log.Warn("listed header quarantined", "url", in.url, "oai_id", hd.Err.Identifier, "reason", hd.Err.Reason)
		return false, nil
	}
	if hd.Identifier == "" {
		return false, nil
	}
	if err := in.batch.MarkSeen(hd.Identifier); err != nil {
		return false, err
	}
	if hd.Err != nil {
		in.counts.Quarantined++
		in.log.Warn("listed header quarantined (marked seen)", "url", in.url, "oai_id", hd.Identifier, "reason", hd.Err.Reason)
		return false, nil
	}
	old, err := in.batch.Get(hd.Identifier)
	if err != nil {
		return false, err
	}
	d := classifyListed(old, hd)
	if d.outcome == fetch {
		return true, nil
	}
	if d.outcome == unchanged {
		return false, nil
	}
	return false, in.apply(d, hd.Identifier)
}

// unseen deletes a live record that a complete reconciliation pass did not list.
func (in *ingest) unseen(id string) error {
	old, err := in.batch.Get(id)
	if err != nil {
		return err
	}
	return in.apply(classifyUnseen(old), id)
}

func (in *ingest) apply(d decision, id string) error {
	in.counts.count(d.outcome)
	if d.outcome == skipped {
		in.log.Warn(d.why+" skipped", "url", in.url, "oai_id", id)
	}
	if d.next == nil {
		return nil
	}
	if err := in.batch.Apply(d.next, d.metadata, d.event); err != nil {
		return fmt.Errorf("record %q: %w", id, err)
	}
	return nil
}
