package bridge

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh"
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
}

// ingest starts the write side of a batch of (repository, prefix).
func (h *Harvester) ingest(batch *store.Batch, counts *Counts, prefix, url string) *ingest {
	return &ingest{batch: batch, counts: counts, log: h.log.With("prefix", prefix), url: url, host: h.host, now: h.now}
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
	if ds := rec.Header.Datestamp; d.outcome != skipped && ds.After(in.maxDS) {
		in.maxDS = ds
	}
	return in.apply(d, rec.Header.Identifier)
}

// listed marks one header of a reconciliation pass as seen and applies what it
// shows; it reports whether the record must be fetched.
func (in *ingest) listed(hd *oaipmh.Header) (needFetch bool, err error) {
	if hd.Identifier == "" {
		return false, nil
	}
	if err := in.batch.MarkSeen(hd.Identifier); err != nil {
		return false, err
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
