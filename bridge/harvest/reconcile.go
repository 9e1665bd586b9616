package harvest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// ReconcileOptions tune a reconciliation.
type ReconcileOptions struct {
	// Force runs it even for deletedRecord=persistent and lifts the mass-deletion
	// safety limit.
	Force bool
}

// maxDeleteShare is one of the safety limits: a pass that would delete more than
// half of the live records (and more than a handful) is refused, since that is far
// more likely a misconfigured or broken endpoint than a real mass deletion. An
// empty list, or one that ends well short of the completeListSize it announced,
// is refused too.
const maxDeleteShare = 0.5

// ErrReconcileRefused is returned when the safety limit stops a reconciliation.
var ErrReconcileRefused = errors.New("reconciliation refused")

// Reconcile finds deletions an incremental harvest cannot see (deletedRecord is
// "no" or "transient"): a complete ListIdentifiers pass per prefix, with no set so
// records in no set are listed too. Held records no longer listed become deleted
// events; listed records unknown to the store are fetched with GetRecord; changed
// setSpecs become set moves. Nothing is deleted unless the pass was complete.
func (h *Harvester) Reconcile(ctx context.Context, opts ReconcileOptions) ([]Result, error) {
	ctx, end, err := h.start(ctx, KindReconcile, false, false)
	if err != nil {
		return nil, err
	}
	defer end()
	return h.reconcile(ctx, opts)
}

// reconcile is Reconcile once the run holds the repository.
func (h *Harvester) reconcile(ctx context.Context, opts ReconcileOptions) ([]Result, error) {
	started := h.now().UTC()
	id, err := h.identify(ctx)
	if err != nil {
		h.recordOutcome(KindReconcile, started, nil, err)
		return nil, err
	}
	if id.DeletedRecord == "persistent" && !opts.Force {
		h.log.Info("reconciliation skipped: the repository keeps deletions persistently")
		return nil, nil
	}
	results, err := h.eachPrefix(ctx, func(prefix string) Result { return h.reconcilePrefix(ctx, prefix, id, opts) })
	results, err = h.deriveAfter(ctx, results, err)
	if serr := h.db.Sync(); serr != nil {
		err = errors.Join(err, fmt.Errorf("reconcile %s: %w", h.repo.Name, serr))
	}
	h.recordOutcome(KindReconcile, started, results, err)
	return results, err
}

func (h *Harvester) reconcilePrefix(ctx context.Context, prefix string, id *oaipmh.Identify, opts ReconcileOptions) (res Result) {
	res.Prefix = prefix
	if err := h.db.ClearSeen(h.repo.Name, prefix); err != nil {
		return h.fail(res, "reconcile", "clear previous pass", err)
	}
	q := oaipmh.Query{MetadataPrefix: prefix, Granularity: id.Granularity}
	guard := oaipmh.Guard{MaxEmptyPages: h.settings.MaxEmptyPages}
	var listed, firstSize int64
	unidentified := 0
	pageStart := time.Now()
	for {
		if err := h.pacer.yield(ctx, time.Since(pageStart)); err != nil {
			return h.fail(res, "reconcile", "stopped", err)
		}
		pageStart = time.Now()
		batch, err := h.db.NewBatch(h.repo.Name, prefix)
		if err != nil {
			return h.fail(res, "reconcile", "open batch", err)
		}
		var pc Counts
		in := h.ingest(batch, &pc, prefix, h.client.RequestURL("ListIdentifiers", q))
		var unknown []string
		page, err := h.client.ListIdentifiers(ctx, q, func(hd *oaipmh.Header) error {
			if hd.Identifier != "" {
				listed++
			}
			fetch, err := in.listed(hd)
			if fetch {
				unknown = append(unknown, hd.Identifier)
			}
			return err
		})
		if err == nil {
			err = guard.Check(q.Token, page)
		}
		if err == nil && q.Token == "" {
			firstSize = page.Token.CompleteListSize
		}
		if err == nil {
			err = batch.Commit()
		}
		batch.Discard()
		if err != nil {
			return h.fail(res, "reconcile", "list identifiers (the pass is incomplete, nothing was deleted)", err)
		}
		pc.Pages = 1
		res.Counts.Add(pc)
		unidentified += in.unidentified
		h.committed(prefix, pc)
		// Identifiers the store does not hold: fetch them.
		for _, oid := range unknown {
			if err := h.fetchOne(ctx, prefix, oid, &res.Counts); err != nil {
				return h.fail(res, "reconcile", "get record "+oid, err)
			}
		}
		if page.Done() {
			break
		}
		q = oaipmh.Query{Token: page.Token.Value}
	}
	if unidentified > 0 && !opts.Force {
		return h.fail(res, "reconcile", "safety limit", fmt.Errorf("%w: %d listed headers could not be read, so records not seen may still exist; nothing was deleted (rsbridge reconcile -force deletes anyway)", ErrReconcileRefused, unidentified))
	}
	return h.finishReconcile(ctx, prefix, listed, firstSize, opts, res)
}

// finishReconcile deletes what a complete pass did not list, within the safety
// limits.
func (h *Harvester) finishReconcile(ctx context.Context, prefix string, listed, firstSize int64, opts ReconcileOptions, res Result) Result {
	// The pass is complete: what was not seen is gone.
	var ctr store.Counter
	var missing int64
	err := h.db.View(ctx, func(s *store.Snap) error {
		var err error
		if ctr, err = s.Counter(h.repo.Name, prefix); err != nil {
			return err
		}
		return s.Unseen(h.repo.Name, prefix, func(*store.Record) error { missing++; return nil })
	})
	if err != nil {
		return h.fail(res, "reconcile", "find unseen records", err)
	}
	var why string
	switch {
	case opts.Force || missing == 0:
	case listed == 0:
		why = fmt.Sprintf("the repository listed no identifiers at all but %d records are live", ctr.Live)
	case firstSize > 0 && float64(listed) < 0.9*float64(firstSize):
		why = fmt.Sprintf("the list ended after %d identifiers although it announced completeListSize=%d", listed, firstSize)
	case missing > 10 && float64(missing) > maxDeleteShare*float64(ctr.Live):
		why = fmt.Sprintf("the complete identifier list (%d identifiers) lacks %d of %d live records", listed, missing, ctr.Live)
	}
	if why != "" {
		return h.fail(res, "reconcile", "safety limit", fmt.Errorf("%w: %s; if the repository really deleted them run `rsbridge reconcile -force`", ErrReconcileRefused, why))
	}
	if missing > 0 {
		// Each batch of deletions is reported as it commits.
		if err := h.deleteUnseen(ctx, prefix, &res.Counts); err != nil {
			return h.fail(res, "reconcile", "delete unseen records", err)
		}
	}
	log := h.log.With("prefix", prefix, "pass", "reconcile")
	if err := h.db.ClearSeen(h.repo.Name, prefix); err != nil {
		log.Warn("cannot clear reconciliation marks", "err", err)
	}
	log.Info("reconciliation complete", "listed", listed, "deleted", res.Counts.Deleted, "fetched", res.Counts.Created, "moved", res.Counts.Updated)
	return res
}

func (h *Harvester) fetchOne(ctx context.Context, prefix, oid string, counts *Counts) error {
	rec, err := h.client.GetRecord(ctx, oid, prefix)
	if oaipmh.IsCode(err, oaipmh.IDDoesNotExist) || oaipmh.IsCode(err, oaipmh.CannotDisseminateFormat) {
		h.log.Warn("listed identifier cannot be fetched; skipped", "prefix", prefix, "oai_id", oid, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	batch, err := h.db.NewBatch(h.repo.Name, prefix)
	if err != nil {
		return err
	}
	defer batch.Discard()
	var c Counts
	if err := h.ingest(batch, &c, prefix, h.client.URL(nil)).record(rec); err != nil {
		return err
	}
	if err := batch.Commit(); err != nil {
		return err
	}
	counts.Add(c)
	h.committed(prefix, c)
	return nil
}

// deleteUnseen writes deleted events for unseen records, a few hundred per
// batch, while a read snapshot iterates them.
func (h *Harvester) deleteUnseen(ctx context.Context, prefix string, counts *Counts) error {
	const per = 500
	var batch *store.Batch
	var in *ingest
	var bc Counts // of the open batch
	n := 0
	flush := func() error {
		if batch == nil {
			return nil
		}
		err := batch.Commit()
		batch.Discard()
		if err == nil {
			counts.Add(bc)
			h.committed(prefix, bc)
		}
		batch, n, bc = nil, 0, Counts{}
		return err
	}
	err := h.db.View(ctx, func(s *store.Snap) error {
		return s.Unseen(h.repo.Name, prefix, func(r *store.Record) error {
			if batch == nil {
				var err error
				if batch, err = h.db.NewBatch(h.repo.Name, prefix); err != nil {
					return err
				}
				in = h.ingest(batch, &bc, prefix, "")
			}
			if err := in.unseen(r.Identifier); err != nil {
				return err
			}
			if n++; n >= per {
				return flush()
			}
			return nil
		})
	})
	if err != nil {
		if batch != nil {
			batch.Discard()
		}
		return err
	}
	return flush()
}
