package harvest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rsbridge/rsbridge/bridge/crosswalk"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// Derived formats (config derive, issue 20). A repository that offers
// junii2 but not jpcoar_2.0 can publish jpcoar_2.0 too: every junii2
// record is converted (bridge/crosswalk) and stored as a record of the
// derived format, with its own change events, so it is published exactly
// like a harvested format. Derivation follows the source format's change
// events from a cursor kept in the derived format's checkpoint, committed
// with each batch: a crash redoes a batch, and a record whose derived
// bytes did not change makes no event. When the converter's version
// changes, every record is converted again; only those whose bytes change
// are updated, and one that can no longer be derived is deleted from the
// derived format and quarantined there with the reasons.

// Conversion derives one metadata format from another.
type Conversion struct {
	From, To string
	// Version changes whenever the output for some input changes.
	Version string
	// Namespace is the namespace of the derived records' root element.
	Namespace string
	// Convert returns the derived metadata of a record, or nil and why it
	// cannot be derived.
	Convert func(metadata []byte, id string) (derived []byte, reasons []string)
}

// Conversions are the conversions rsbridge has (config.Derivable lists
// the same pairs): junii2 → JPCOAR 2.0 by bridge/crosswalk, set as the
// crosswalk: block says. Its version is the crosswalk's fingerprint (its
// version and the options that change output). The crosswalk's warnings
// are not kept here: the record checks find what matters of them.
func Conversions(c config.Crosswalk) []Conversion {
	opts := crosswalk.Options{StrictDialect: c.StrictDialect, IRDBStrict: c.IRDBStrict, StrictXLSXTitles: c.StrictXLSXTitles,
		DescriptionAsAbstract: c.DescriptionAsAbstract, DeriveOpenAccess: c.DeriveOpenAccess, NoLatinGuess: !c.GuessLatin()}
	return []Conversion{{
		From: "junii2", To: "jpcoar_2.0", Version: opts.Fingerprint(), Namespace: config.DerivedProfile("jpcoar_2.0"),
		Convert: func(metadata []byte, _ string) ([]byte, []string) {
			res, err := opts.Junii2ToJPCOAR2(metadata)
			if err != nil {
				return nil, []string{"crosswalk failure: " + err.Error()}
			}
			if res.Record == nil {
				var reasons []string
				for _, q := range res.Quarantine {
					reasons = append(reasons, q.Code)
				}
				return nil, reasons
			}
			return res.Record, nil
		},
	}}
}

// deriveBatch is how many records one derivation transaction converts.
const deriveBatch = 500

// errGap reports that the source's change events after the cursor were
// pruned: derivation starts again from every record.
var errGap = errors.New("source change events pruned")

// derive brings every derived format of the repository up to date with
// its source; the harvest and the reconciliation end with it.
func (h *Harvester) derive(ctx context.Context) []Result {
	var results []Result
	for _, target := range h.repo.MetadataPrefixes {
		from, ok := h.repo.DerivedFrom(target)
		if !ok {
			continue
		}
		conv, ok := h.convs[target]
		if !ok || conv.From != from {
			results = append(results, h.fail(Result{Prefix: target}, "derive", "from "+from,
				errors.New("this rsbridge has no such conversion")))
			continue
		}
		results = append(results, h.deriveFormat(ctx, conv))
	}
	return results
}

// deriveFormat derives one format: from the source's events since the
// cursor, or from every record when the converter changed or events were
// pruned.
func (h *Harvester) deriveFormat(ctx context.Context, conv Conversion) Result {
	res := Result{Prefix: conv.To}
	var cp store.Checkpoint
	var head store.Counter
	err := h.db.View(ctx, func(snap *store.Snap) error {
		var err error
		if cp, err = snap.Checkpoint(h.repo.Name, conv.To); err != nil {
			return err
		}
		head, err = snap.Counter(h.repo.Name, conv.From)
		return err
	})
	if err != nil {
		return h.fail(res, "derive", "from "+conv.From, err)
	}
	d := &derivation{h: h, conv: conv, cp: cp, counts: &res.Counts, url: source.GetRecordURL(h.cfg.PublicBaseURL(h.repo), conv.From)("")}
	if cp.DerivedVersion == conv.Version && cp.DerivedFrom == conv.From {
		err = d.events(ctx, head.Seq)
	}
	if cp.DerivedVersion != conv.Version || cp.DerivedFrom != conv.From || errors.Is(err, errGap) {
		h.log.Info("deriving every record", "prefix", conv.To, "from", conv.From, "version", conv.Version,
			"why", map[bool]string{true: "the source's change events since the last derivation were pruned", false: "the converter is new or changed"}[errors.Is(err, errGap)])
		err = d.everything(ctx, head.Seq)
	}
	if err != nil {
		return h.fail(res, "derive", "from "+conv.From, err)
	}
	return res
}

// derivation is one derived format being brought up to date.
type derivation struct {
	h      *Harvester
	conv   Conversion
	cp     store.Checkpoint
	counts *Counts
	url    string // the source's GetRecord URL, less the identifier
}

// events converts the records of the source's events after the cursor, up
// to head, deriveBatch events a transaction.
func (d *derivation) events(ctx context.Context, head uint64) error {
	for d.cp.DerivedSeq < head {
		ids, last, err := d.nextEvents(ctx, head)
		if err != nil {
			return err
		}
		d.cp.DerivedSeq = last
		if err := d.commit(ctx, ids); err != nil {
			return err
		}
	}
	return nil
}

// nextEvents reads the next deriveBatch events of the source after the
// cursor (up to head): the identifiers they name, once each, and the last
// event's sequence number. errGap: events after the cursor were pruned.
func (d *derivation) nextEvents(ctx context.Context, head uint64) (ids []string, last uint64, err error) {
	seen := map[string]bool{}
	last = d.cp.DerivedSeq
	err = d.h.db.View(ctx, func(snap *store.Snap) error {
		first := true
		err := snap.Events(d.h.repo.Name, d.conv.From, d.cp.DerivedSeq, func(ev *store.Event) error {
			if first && ev.Seq != d.cp.DerivedSeq+1 {
				return errGap
			}
			first = false
			if ev.Seq > head || len(ids) == deriveBatch {
				return errStop
			}
			last = ev.Seq
			if !seen[ev.Identifier] {
				seen[ev.Identifier] = true
				ids = append(ids, ev.Identifier)
			}
			return nil
		})
		if first && err == nil {
			return errGap // the counter is ahead, but no event is left
		}
		if errors.Is(err, errStop) {
			err = nil
		}
		return err
	})
	return ids, last, err
}

var errStop = errors.New("stop")

// everything converts every record of the source again, and deletes the
// derived records whose source is no longer live; the cursor then stands at
// head (events after it are derived again next time, which changes nothing).
func (d *derivation) everything(ctx context.Context, head uint64) error {
	d.cp.DerivedFrom, d.cp.DerivedSeq = d.conv.From, 0
	d.cp.DerivedVersion = "" // until the pass is done
	for _, prefix := range []string{d.conv.From, d.conv.To} {
		start := ""
		for {
			var ids []string
			var next string
			err := d.h.db.View(ctx, func(snap *store.Snap) error {
				n := 0
				return snap.Resources(d.h.repo.Name, prefix, store.AllSet, start, "", deriveBatch+1, func(r *store.Record) error {
					if n++; n > deriveBatch {
						next = r.Identifier
						return nil
					}
					if prefix == d.conv.To { // derived records: only those whose source is gone
						src, err := snap.Record(d.h.repo.Name, d.conv.From, r.Identifier)
						if err != nil || src != nil && !src.Deleted {
							return err
						}
					}
					ids = append(ids, r.Identifier)
					return nil
				})
			})
			if err != nil {
				return err
			}
			more := next != ""
			start = next
			if err := d.commit(ctx, ids); err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	d.cp.DerivedVersion, d.cp.DerivedSeq = d.conv.Version, head
	return d.commit(ctx, nil)
}

// commit converts the records ids name in one transaction, with the
// cursor.
func (d *derivation) commit(ctx context.Context, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	batch, err := d.h.db.NewBatch(d.h.repo.Name, d.conv.To)
	if err != nil {
		return err
	}
	defer batch.Discard()
	var c Counts
	in := d.h.ingest(batch, &c, d.conv.To, d.url)
	err = d.h.db.View(ctx, func(snap *store.Snap) error {
		items, err := d.load(snap, ids)
		if err != nil {
			return err
		}
		d.convert(items)
		for i := range items {
			if err := d.apply(snap, in, &items[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.cp.LastComplete = d.h.now().UTC()
	if err := batch.SetCheckpoint(d.cp); err != nil {
		return err
	}
	if err := batch.Commit(); err != nil {
		return err
	}
	d.counts.Add(c)
	if c.Changes() > 0 || c.Quarantined > 0 {
		d.h.committed(d.conv.To, c)
	}
	return nil
}

// item is one record being derived: the source's state, and what the
// conversion made of it.
type item struct {
	id      string
	src     *store.Record // nil: never harvested
	meta    []byte        // nil: deleted at the source
	derived []byte
	reasons []string
}

// load reads the source records of a batch.
func (d *derivation) load(snap *store.Snap, ids []string) ([]item, error) {
	items := make([]item, len(ids))
	for i, id := range ids {
		src, err := snap.Record(d.h.repo.Name, d.conv.From, id)
		if err != nil {
			return nil, err
		}
		items[i] = item{id: id, src: src}
		if src != nil && !src.Deleted {
			if items[i].meta, err = snap.Metadata(d.h.repo.Name, d.conv.From, id); err != nil {
				return nil, err
			}
		}
	}
	return items, nil
}

// convert runs the conversion of a batch's live records on every core:
// it is pure, and the bigger half of a derivation's time.
func (d *derivation) convert(items []item) {
	workers := min(runtime.GOMAXPROCS(0), len(items))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(items); i = int(next.Add(1) - 1) {
				if it := &items[i]; it.meta != nil {
					it.derived, it.reasons = d.conv.Convert(it.meta, it.id)
				}
			}
		})
	}
	wg.Wait()
}

// apply stores what became of one record: the derived record, its
// deletion, or its quarantine.
func (d *derivation) apply(snap *store.Snap, in *ingest, it *item) error {
	if it.src == nil {
		return nil
	}
	hdr := oaipmh.Header{Identifier: it.id, Datestamp: it.src.Datestamp, DatestampRaw: it.src.DatestampRaw, SetSpecs: it.src.Sets}
	if it.meta == nil { // deleted at the source
		hdr.Deleted = true
		return in.record(&oaipmh.Record{Header: hdr})
	}
	quarantined, err := snap.IsQuarantined(d.h.repo.Name, d.conv.To, it.id)
	if err != nil {
		return err
	}
	if it.derived == nil {
		// No longer derivable: a derived record goes (deleted), and the
		// reasons wait in the derived format's quarantine.
		old, err := in.batch.Get(it.id)
		if err != nil {
			return err
		}
		if old != nil && !old.Deleted {
			del := hdr
			del.Deleted = true
			if err := in.record(&oaipmh.Record{Header: del}); err != nil {
				return err
			}
		}
		why := fmt.Sprintf("cannot be derived in %s from %s (crosswalk %s): %s", d.conv.To, d.conv.From, d.conv.Version, strings.Join(it.reasons, ", "))
		return in.quarantine(it.id, &oaipmh.RecordError{Identifier: source.Clip(it.id, 200), Reason: why})
	}
	if quarantined {
		if err := in.batch.Release(it.id); err != nil {
			return err
		}
	}
	return in.record(&oaipmh.Record{Header: hdr, Metadata: it.derived, MetadataNamespace: d.conv.Namespace})
}
