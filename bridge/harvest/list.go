package harvest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// listRun is one ListRecords list of one prefix, page by page: each page's
// records are applied to one batch that commits with the checkpoint, so a
// crash or a stop resumes at the first page not committed.
type listRun struct {
	h      *Harvester
	ctx    context.Context
	prefix string
	log    *slog.Logger
	gran   oaipmh.Granularity
	cp     store.Checkpoint
	q      oaipmh.Query
	guard  oaipmh.Guard
	f      *fetcher
	res    Result
	began  time.Time
	// The pacer pauses for the time the harvest worked on the last page:
	// applying and committing it, not waiting for the repository.
	pageStart time.Time
	waited    time.Duration
	// The list's pages and records after the last page, for progress.
	listPages, listRecords int64
}

// harvestPrefix harvests the list of one prefix: resumed from the
// checkpoint's token, or started from the high-water mark (less one granule)
// or from the beginning.
func (h *Harvester) harvestPrefix(ctx context.Context, prefix string, id *oaipmh.Identify, opts HarvestOptions) Result {
	l := &listRun{h: h, ctx: ctx, prefix: prefix, log: h.log.With("prefix", prefix), gran: id.Granularity,
		res: Result{Prefix: prefix}, guard: oaipmh.Guard{MaxEmptyPages: h.settings.MaxEmptyPages}}
	if err := l.open(opts); err != nil {
		return h.fail(l.res, "harvest", "read checkpoint", err)
	}
	l.began = h.now()
	l.f = h.fetch(ctx, l.q)
	defer func() { l.f.stop() }()
	l.pageStart = time.Now()
	for {
		if err := h.pacer.yield(ctx, time.Since(l.pageStart)-l.waited); err != nil {
			return h.fail(l.res, "harvest", "stopped", err)
		}
		l.pageStart, l.waited = time.Now(), 0
		if err := ctx.Err(); err != nil {
			return h.fail(l.res, "harvest", "stopped", err)
		}
		done, err := l.page()
		if err != nil {
			return l.res
		}
		if done {
			l.finish()
			return l.res
		}
	}
}

// open reads the checkpoint and chooses where the list starts.
func (l *listRun) open(opts HarvestOptions) error {
	h := l.h
	err := h.db.View(l.ctx, func(s *store.Snap) error {
		var err error
		l.cp, err = s.Checkpoint(h.repo.Name, l.prefix)
		return err
	})
	if err != nil {
		return err
	}
	cp := l.cp
	if cp.InProgress && cp.Token != "" && !opts.Full {
		l.res.Resumed, l.cp.SeqResumed = true, true
		l.q = oaipmh.Query{Token: cp.Token}
		l.log.Info("resuming list from checkpoint", "pages_done", cp.SeqPages, "records_done", cp.SeqRecords)
		return nil
	}
	from := time.Time{}
	switch {
	case cp.FullNext && !opts.Full:
		l.log.Warn("harvesting the full list: the previous one ended with fewer records than the repository announced")
	case !opts.Full && !cp.HighWater.IsZero():
		// One granule of overlap: records at the boundary come again and,
		// being unchanged, make no events.
		from = l.gran.Truncate(cp.HighWater).Add(-l.gran.Unit())
	}
	l.cp = store.Checkpoint{InProgress: true, SeqFrom: from, SeqStarted: h.now().UTC(),
		HighWater: cp.HighWater, Granularity: l.gran.String(), LastComplete: cp.LastComplete}
	l.q = l.start()
	l.log.Info("starting list", "from", fmtTime(from, l.gran), "full", from.IsZero())
	return nil
}

// start is the list's first request, with its original arguments.
func (l *listRun) start() oaipmh.Query {
	return oaipmh.Query{MetadataPrefix: l.prefix, From: l.cp.SeqFrom, Granularity: l.gran}
}

// next is the fetcher's next hand-over, timing the wait for the pacer.
func (l *listRun) next() (pipeItem, bool) {
	t := time.Now()
	it, ok := l.f.next()
	l.waited += time.Since(t)
	return it, ok
}

// page applies and commits one page. done reports the list's end; an error
// has been recorded in l.res. A rejected resumption token restarts the list
// (at most maxTokenRestarts times) and is not an error.
func (l *listRun) page() (done bool, err error) {
	h := l.h
	// The page's start, its records as they are decoded, its end.
	it, ok := l.next()
	if !ok || !it.start {
		l.res = h.fail(l.res, "harvest", "list records", fmt.Errorf("the page fetcher stopped: %w", context.Cause(l.ctx)))
		return false, l.res.Err
	}
	l.q = it.query
	batch, err := h.db.NewBatch(h.repo.Name, l.prefix)
	if err != nil {
		l.res = h.fail(l.res, "harvest", "open batch", err)
		return false, err
	}
	var pc Counts
	in := h.ingest(batch, &pc, l.prefix, h.client.RequestURL("ListRecords", l.q))
	page, err := l.apply(in)
	if err == nil {
		err = l.guard.Check(l.q.Token, page)
	}
	if err != nil {
		batch.Discard()
		return false, l.failed(err)
	}
	l.advance(page, in, &pc)
	if err := batch.SetCheckpoint(l.cp); err != nil {
		batch.Discard()
		l.res = h.fail(l.res, "harvest", "write checkpoint", err)
		return false, err
	}
	if err := batch.Commit(); err != nil {
		batch.Discard()
		l.res = h.fail(l.res, "harvest", "commit page", err)
		return false, err
	}
	l.committed(page, pc)
	return page.Done(), nil
}

// apply hands each record of the page to ingest as it is decoded, and
// returns the page's end.
func (l *listRun) apply(in *ingest) (*oaipmh.Page, error) {
	for {
		it, ok := l.next()
		switch {
		case !ok:
			return nil, fmt.Errorf("the page fetcher stopped: %w", context.Cause(l.ctx))
		case it.rec != nil:
			err := in.record(it.rec)
			l.f.applied(it.rec)
			if err != nil {
				return nil, err
			}
		default:
			return it.page, it.err
		}
	}
}

// failed handles a page that failed: a rejected resumption token restarts
// the list (nil: go on); a guard marks the list suspect; anything else ends
// the pass with an error that says what to do.
func (l *listRun) failed(err error) error {
	h := l.h
	if oaipmh.IsCode(err, oaipmh.BadResumptionToken) && l.q.Token != "" && l.res.Restarts < maxTokenRestarts {
		l.res.Restarts++
		l.log.Warn("resumption token rejected; restarting the list with its original arguments", "from", fmtTime(l.cp.SeqFrom, l.gran), "err", err)
		l.q = l.start()
		l.guard = oaipmh.Guard{MaxEmptyPages: h.settings.MaxEmptyPages}
		l.cp.SeqRecords = 0 // the list is read again from its start
		l.f.stop()
		l.f = h.fetch(l.ctx, l.q)
		return nil
	}
	if _, ok := errors.AsType[*oaipmh.GuardError](err); ok && !l.cp.SeqGuarded {
		// The committed pages stay; the list they belong to is suspect.
		l.cp.SeqGuarded = true
		if perr := h.db.PutCheckpoint(h.repo.Name, l.prefix, l.cp); perr != nil {
			l.log.Error("cannot record that a guard stopped the list", "err", perr)
		}
	}
	if oaipmh.IsCode(err, oaipmh.CannotDisseminateFormat) {
		l.res = h.fail(l.res, "harvest", "the repository cannot disseminate this format (check metadata_prefixes against ListMetadataFormats)", err)
	} else {
		l.res = h.fail(l.res, "harvest", fmt.Sprintf("list records (page %d)", l.cp.SeqPages+1), err)
	}
	return l.res.Err
}

// advance moves the checkpoint past a page: the next token, or at the
// list's end the new high-water mark (or, for a resumed or guarded list
// that came up short, a full harvest next time).
func (l *listRun) advance(page *oaipmh.Page, in *ingest, pc *Counts) {
	cp := &l.cp
	if cp.SeqPages == 0 || cp.SeqResponseDate.IsZero() {
		cp.SeqResponseDate = page.ResponseDate
	}
	if in.maxDS.After(cp.SeqMaxDatestamp) {
		cp.SeqMaxDatestamp = in.maxDS
	}
	cp.SeqPages++
	cp.SeqRecords += int64(page.Count)
	if cp.SeqListSize <= 0 && page.Token.CompleteListSize > 0 {
		cp.SeqListSize = page.Token.CompleteListSize
	}
	pc.Pages = 1
	pc.BadDatestamps = int64(page.BadDatestamps)
	// Progress counts the list as it was before completed() resets it.
	l.listPages, l.listRecords = cp.SeqPages, cp.SeqRecords
	if !page.Done() {
		cp.Token = page.Token.Value
		return
	}
	if short := cp.SeqListSize - cp.SeqRecords; short > 0 && (cp.SeqResumed || cp.SeqGuarded) {
		// A list that was resumed, or stopped by a guard, ended short of
		// what it announced: records may be missing below any new
		// high-water mark, so keep the old one and read everything next time.
		l.log.Warn("list ended with fewer records than announced after a resume or a guard; the high-water mark stays and the next run harvests the full list",
			"records", cp.SeqRecords, "complete_list_size", cp.SeqListSize, "resumed", cp.SeqResumed, "guarded", cp.SeqGuarded)
		l.res.Incomplete = true
		*cp = store.Checkpoint{HighWater: cp.HighWater, Granularity: cp.Granularity, LastComplete: cp.LastComplete, FullNext: true}
		return
	}
	*cp = completed(*cp, l.h.now().UTC())
}

// committed reports a committed page: counts, the observer, progress.
func (l *listRun) committed(page *oaipmh.Page, pc Counts) {
	h := l.h
	l.res.Counts.Add(pc)
	h.committed(l.prefix, pc)
	pr := Progress{Repo: h.repo.Name, Prefix: l.prefix, Pages: l.listPages, Records: l.listRecords, RunRecords: l.res.Counts.Records,
		Total: page.Token.CompleteListSize, Elapsed: h.now().Sub(l.began), Done: page.Done()}
	h.obs.Progress(pr)
	if h.act.progress(pr, h.now()) {
		l.log.Info("harvest progress", "pages", pr.Pages, "records", pr.Records, "of", pr.Total, "records_per_s", int(float64(pr.RunRecords)/pr.Elapsed.Seconds()))
	}
}

// finish logs the list's end and retries the quarantined records.
func (l *listRun) finish() {
	c := &l.res.Counts
	l.log.Info("list complete", "pages", c.Pages, "records", c.Records, "created", c.Created,
		"updated", c.Updated, "deleted", c.Deleted, "next_from", fmtTime(l.cp.HighWater.Add(-l.gran.Unit()), l.gran))
	if n := c.BadDatestamps; n > 0 {
		l.log.Warn("records without a usable datestamp (kept as sent, shown without one)", "count", n)
	}
	if err := l.h.retryQuarantine(l.ctx, l.prefix, c); err != nil {
		l.log.Warn("cannot retry quarantined records", "err", err)
	}
}
