package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	h.mu.Lock()
	defer h.mu.Unlock()
	id, err := h.identify(ctx)
	if err != nil {
		return nil, err
	}
	if id.DeletedRecord == "persistent" && !opts.Force {
		h.log.Info("reconciliation skipped: the repository keeps deletions persistently")
		return nil, nil
	}
	results, err := h.eachPrefix(ctx, func(prefix string) Result { return h.reconcilePrefix(ctx, prefix, id, opts) })
	if err == nil {
		now := h.now().UTC()
		if uerr := h.db.UpdateRepoInfo(h.repo.Name, func(ri *store.RepoInfo) { ri.LastReconcile = now }); uerr != nil {
			h.log.Error("cannot record reconciliation", "err", uerr)
		}
	}
	return results, err
}

func (h *Harvester) reconcilePrefix(ctx context.Context, prefix string, id *oaipmh.Identify, opts ReconcileOptions) (res Result) {
	res.Prefix = prefix
	log := h.log.With("prefix", prefix, "pass", "reconcile")
	fail := func(what string, err error) Result {
		res.Err = fmt.Errorf("reconcile %s %s: %s: %w", h.repo.Name, prefix, what, err)
		return res
	}
	if err := h.db.ClearSeen(h.repo.Name, prefix); err != nil {
		return fail("clear previous pass", err)
	}
	q := oaipmh.Query{MetadataPrefix: prefix, Granularity: id.Granularity}
	guard := oaipmh.Guard{MaxEmptyPages: h.settings.MaxEmptyPages}
	var listed, firstSize int64
	for {
		batch, err := h.db.NewBatch(h.repo.Name, prefix)
		if err != nil {
			return fail("open batch", err)
		}
		var pc Counts
		ap := &applier{batch: batch, counts: &pc, now: h.now, log: log, url: h.client.URL(nil), host: h.host}
		var unknown []string
		page, err := h.client.ListIdentifiers(ctx, q, func(hd *oaipmh.Header) error {
			if hd.Identifier == "" {
				return nil
			}
			listed++
			batch.MarkSeen(hd.Identifier)
			if err := reconcileHeader(ap, batch, hd, &unknown, &pc); err != nil {
				return err
			}
			return batch.EndRecord()
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
			return fail("list identifiers (the pass is incomplete, nothing was deleted)", err)
		}
		res.Counts.add(pc)
		res.Counts.Pages++
		// Identifiers the store does not hold: fetch them.
		for _, oid := range unknown {
			if err := h.fetchOne(ctx, prefix, oid, &res.Counts); err != nil {
				return fail("get record "+oid, err)
			}
		}
		if page.Done() {
			break
		}
		q = oaipmh.Query{Token: page.Token.Value}
	}
	return h.finishReconcile(ctx, prefix, listed, firstSize, opts, res)
}

// reconcileHeader compares one listed header with the store.
func reconcileHeader(ap *applier, batch *store.Batch, hd *oaipmh.Header, unknown *[]string, pc *Counts) error {
	old, err := batch.Get(hd.Identifier)
	if err != nil {
		return err
	}
	switch {
	case hd.Deleted:
		if old != nil && !old.Deleted {
			return ap.applyRecord(&oaipmh.Record{Header: *hd})
		}
	case old == nil || old.Deleted:
		*unknown = append(*unknown, hd.Identifier)
	case !slices.Equal(old.Members(), store.ExpandSets(hd.SetSpecs)):
		// Membership changed without a datestamp change (OAI-PMH does not
		// require one): a set move with the stored bytes.
		next := *old
		next.Sets = normaliseSets(hd.SetSpecs)
		ev := &store.Event{Identifier: old.Identifier, Change: store.Updated, SetsBefore: old.Members(), SetsAfter: next.Members(),
			SHA256: old.SHA256, MD5: old.MD5, Length: old.Length, Datestamp: hd.Datestamp}
		pc.Updated++
		return ap.write(ev, &next, nil)
	}
	return nil
}

// finishReconcile deletes what a complete pass did not list, within the safety
// limits.
func (h *Harvester) finishReconcile(ctx context.Context, prefix string, listed, firstSize int64, opts ReconcileOptions, res Result) Result {
	log := h.log.With("prefix", prefix, "pass", "reconcile")
	fail := func(what string, err error) Result {
		res.Err = fmt.Errorf("reconcile %s %s: %s: %w", h.repo.Name, prefix, what, err)
		return res
	}
	// The pass is complete: what was not seen is gone.
	ctr, err := h.db.Counter(h.repo.Name, prefix)
	if err != nil {
		return fail("read counter", err)
	}
	var missing int64
	if err := h.db.Unseen(ctx, h.repo.Name, prefix, func(*store.Record) error { missing++; return nil }); err != nil {
		return fail("find unseen records", err)
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
		return fail("safety limit", fmt.Errorf("%w: %s; if the repository really deleted them run `rsbridge reconcile -force`", ErrReconcileRefused, why))
	}
	if missing > 0 {
		if err := h.deleteUnseen(ctx, prefix, &res.Counts); err != nil {
			return fail("delete unseen records", err)
		}
	}
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
	ap := &applier{batch: batch, counts: counts, now: h.now, log: h.log, host: h.host}
	if err := ap.apply(rec); err != nil {
		return err
	}
	return batch.Commit()
}

// deleteUnseen writes deleted events for unseen records, a few hundred per
// transaction, while a read snapshot iterates them.
func (h *Harvester) deleteUnseen(ctx context.Context, prefix string, counts *Counts) error {
	const per = 500
	var batch *store.Batch
	n := 0
	flush := func() error {
		if batch == nil {
			return nil
		}
		err := batch.Commit()
		batch.Discard()
		batch, n = nil, 0
		return err
	}
	err := h.db.Unseen(ctx, h.repo.Name, prefix, func(r *store.Record) error {
		if batch == nil {
			var err error
			if batch, err = h.db.NewBatch(h.repo.Name, prefix); err != nil {
				return err
			}
		}
		ap := &applier{batch: batch, counts: counts, now: h.now, log: h.log, host: h.host}
		cur, err := batch.Get(r.Identifier)
		if err != nil || cur == nil || cur.Deleted {
			return err
		}
		if err := ap.remove(cur, cur.Datestamp); err != nil {
			return err
		}
		if err := batch.EndRecord(); err != nil {
			return err
		}
		if n++; n >= per {
			return flush()
		}
		return nil
	})
	if err != nil {
		if batch != nil {
			batch.Discard()
		}
		return err
	}
	return flush()
}
