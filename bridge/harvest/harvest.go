// Package bridge is the rsbridge service. Its ingest half harvests OAI-PMH into
// the store (harvest.go, ingest.go, classify.go, reconcile.go, landing.go,
// scheduler.go); its publishing half serves the store as a ResourceSync 1.1
// source (server.go, urls.go, documents.go, pages.go, gzip.go). It is the only
// package that knows all the others.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// Version is reported in the User-Agent.
const Version = "0.1.0"

// maxTokenRestarts bounds how often one harvest restarts a list after
// badResumptionToken, so an endpoint whose tokens always expire cannot loop.
const maxTokenRestarts = 3

// Progress is reported after every committed page.
type Progress struct {
	Repo, Prefix string
	Pages        int64 // of the current list, parts read before a resume included
	Records      int64 // of the current list, parts read before a resume included
	RunRecords   int64 // read by this run
	Total        int64 // completeListSize of the current list, -1 if unknown
	Elapsed      time.Duration
	Done         bool
}

// Harvester harvests one repository. Harvest and Reconcile of one Harvester never
// overlap: the second waits for the first (or, with IfIdle, does not run).
type Harvester struct {
	cfg      *config.Config
	repo     config.Repository
	settings config.Settings
	db       *store.DB
	client   *oaipmh.Client
	log      *slog.Logger
	now      func() time.Time
	progress func(Progress)
	changed  func(repo, prefix string)
	metrics  *Metrics
	pacer    *Pacer
	host     string

	busy chan struct{} // holds a token while a harvest or reconciliation runs
	act  activity
}

// ErrBusy reports a run refused because another run of the repository is
// going (HarvestOptions.IfIdle).
var ErrBusy = errors.New("a harvest or reconciliation of this repository is running")

// acquire waits until no other run of the repository is going, or ctx ends;
// with ifIdle it does not wait but returns ErrBusy.
func (h *Harvester) acquire(ctx context.Context, ifIdle bool) error {
	if ifIdle {
		select {
		case h.busy <- struct{}{}:
			return nil
		default:
			return ErrBusy
		}
	}
	select {
	case h.busy <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("harvest %s: waiting for the running harvest: %w", h.repo.Name, ctx.Err())
	}
}

// HarvesterOptions are the optional parts of NewHarvester.
type HarvesterOptions struct {
	Logger   *slog.Logger
	Progress func(Progress)
	Now      func() time.Time // clock for first-seen times; events use the store's clock
	// Client settings tests override (nil = real ones).
	ClientOptions func(*oaipmh.Options)
	// Changed is called after each committed page that made change events
	// (the dumper and the notifier look for work); it must not block.
	Changed func(repo, prefix string)
	// Metrics counts runs, pages, records, events and upstream requests
	// (nil: none).
	Metrics *Metrics
	// Pacer makes runs pause after each page while the server is busy
	// (nil: never).
	Pacer *Pacer
}

// UserAgent names rsbridge and, when configured, the operator's contact.
func UserAgent(contact string) string {
	ua := "rsbridge/" + Version + " (+https://github.com/rsbridge/rsbridge"
	if contact != "" {
		ua += "; " + contact
	}
	return ua + ")"
}

// NewHarvester prepares a harvester for one configured repository.
func NewHarvester(cfg *config.Config, repo config.Repository, db *store.DB, o HarvesterOptions) (*Harvester, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Progress == nil {
		o.Progress = func(Progress) {}
	}
	if o.Changed == nil {
		o.Changed = func(string, string) {}
	}
	s := cfg.Resolved(repo)
	log := o.Logger.With("repo", repo.Name)
	ua := s.UserAgent
	if ua == "" {
		ua = UserAgent(cfg.Contact)
	}
	co := oaipmh.Options{
		Repository:     repo.Name,
		BaseURL:        repo.BaseURL,
		SecretParams:   s.SecretParams,
		UserAgent:      ua,
		Headers:        s.Headers,
		Timeout:        s.Timeout,
		ConnectTimeout: s.ConnectTimeout,
		Delay:          s.Delay,
		MaxRetries:     s.MaxRetries,
		BackoffBase:    s.BackoffBase,
		BackoffMax:     s.BackoffMax,
		MaxRetryAfter:  s.MaxRetryAfter,
		MaxBodyBytes:   s.MaxBodyBytes,
		MaxRecordBytes: int(s.MaxRecordBytes),
		Logger:         o.Logger,
		Observe:        o.Metrics.upstream(repo.Name),
	}
	if o.ClientOptions != nil {
		o.ClientOptions(&co)
	}
	client, err := oaipmh.NewClient(co)
	if err != nil {
		return nil, err
	}
	host := ""
	if u, err := url.Parse(repo.BaseURL); err == nil {
		host = u.Hostname()
	}
	return &Harvester{cfg: cfg, repo: repo, settings: s, db: db, client: client, log: log, now: o.Now, progress: o.Progress, changed: o.Changed, metrics: o.Metrics, pacer: o.Pacer, host: host,
		busy: make(chan struct{}, 1)}, nil
}

// HarvestOptions select what one run does.
type HarvestOptions struct {
	// Full ignores the high-water mark and any list in progress and harvests
	// everything again (unchanged records make no events).
	Full bool
	// IfIdle returns ErrBusy at once when another run of the repository is
	// going, instead of waiting for it (scheduled ticks skip).
	IfIdle bool
}

// Result is what one run did, per metadata prefix.
type Result struct {
	Prefix   string
	Counts   Counts
	Restarts int // lists restarted after badResumptionToken
	Resumed  bool
	// Incomplete: the list ended short of its completeListSize after a
	// resume or a guard; the high-water mark was kept and the next run is full.
	Incomplete bool
	Err        error
}

// Harvest runs one harvest of every configured metadata prefix: Identify, ListSets,
// then ListRecords page by page, each page committed atomically with its events
// and the checkpoint. cannotDisseminateFormat for one prefix does not stop the
// others; the returned error joins every prefix's failure.
func (h *Harvester) Harvest(ctx context.Context, opts HarvestOptions) ([]Result, error) {
	kind := KindHarvest
	if opts.Full {
		kind = KindFullHarvest
	}
	ctx, end, err := h.start(ctx, kind, opts.IfIdle)
	if err != nil {
		return nil, err
	}
	defer end()
	return h.harvest(ctx, kind, opts)
}

// harvest is Harvest once the run holds the repository.
func (h *Harvester) harvest(ctx context.Context, kind string, opts HarvestOptions) ([]Result, error) {
	started := h.now().UTC()
	id, err := h.identify(ctx)
	if err != nil {
		h.recordOutcome(kind, started, nil, err)
		return nil, err
	}
	h.refreshSets(ctx)
	results, err := h.eachPrefix(ctx, func(prefix string) Result { return h.harvestPrefix(ctx, prefix, id, opts) })
	// What the run committed is durable when it returns (with group commit
	// the last second of it may not be yet).
	if serr := h.db.Sync(); serr != nil {
		err = errors.Join(err, fmt.Errorf("harvest %s: %w", h.repo.Name, serr))
	}
	h.recordOutcome(kind, started, results, err)
	return results, err
}

// eachPrefix runs one pass per configured metadata prefix; one prefix failing
// does not stop the others (unless the run is being stopped), and the error joins
// every prefix's failure.
func (h *Harvester) eachPrefix(ctx context.Context, pass func(prefix string) Result) ([]Result, error) {
	var results []Result
	var errs []error
	for _, prefix := range h.repo.MetadataPrefixes {
		r := pass(prefix)
		results = append(results, r)
		if r.Err != nil {
			errs = append(errs, r.Err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return results, errors.Join(errs...)
}

func (h *Harvester) identify(ctx context.Context) (*oaipmh.Identify, error) {
	id, err := h.client.Identify(ctx)
	if err != nil {
		return nil, fmt.Errorf("harvest %s: identify: %w", h.repo.Name, err)
	}
	for _, w := range id.Warnings {
		h.log.Warn("Identify: "+w, "url", h.cfg.PublicBaseURL(h.repo))
	}
	err = h.db.UpdateRepoInfo(h.repo.Name, func(ri *store.RepoInfo) {
		ri.Name = h.repo.Name
		ri.BaseURL = h.cfg.PublicBaseURL(h.repo)
		ri.RepositoryName = id.RepositoryName
		ri.ProtocolVersion = id.ProtocolVersion
		ri.EarliestDatestamp = id.EarliestRaw
		ri.DeletedRecord = id.DeletedRecord
		ri.Granularity = id.Granularity.String()
		ri.AdminEmails = id.AdminEmails
		ri.RepositoryIdentifier = id.RepositoryIdentifier
		ri.Identified = h.now().UTC()
	})
	if err != nil {
		return nil, fmt.Errorf("harvest %s: store Identify: %w", h.repo.Name, err)
	}
	return id, nil
}

// refreshSets stores set names and descriptions. They are for display only, so a
// failure is logged and the harvest goes on (membership comes from the headers).
func (h *Harvester) refreshSets(ctx context.Context) {
	var sets []store.SetInfo
	err := h.client.ListSets(ctx, h.settings.MaxEmptyPages, func(s oaipmh.Set) error {
		sets = append(sets, store.SetInfo{Spec: s.Spec, Name: s.Name, Description: s.Description})
		return nil
	})
	if err == nil {
		err = h.db.ReplaceSets(h.repo.Name, sets)
	}
	if err != nil {
		h.log.Warn("ListSets failed; set names are not refreshed", "err", err)
	}
}

// fail ends one prefix's pass with an error that names the pass, the
// repository, the prefix and the step that failed.
func (h *Harvester) fail(res Result, pass, what string, err error) Result {
	res.Err = fmt.Errorf("%s %s %s: %s: %w", pass, h.repo.Name, res.Prefix, what, err)
	return res
}

func (h *Harvester) harvestPrefix(ctx context.Context, prefix string, id *oaipmh.Identify, opts HarvestOptions) (res Result) {
	res.Prefix = prefix
	log := h.log.With("prefix", prefix)
	var cp store.Checkpoint
	err := h.db.View(ctx, func(s *store.Snap) error {
		var err error
		cp, err = s.Checkpoint(h.repo.Name, prefix)
		return err
	})
	if err != nil {
		return h.fail(res, "harvest", "read checkpoint", err)
	}
	gran := id.Granularity
	start := func() oaipmh.Query {
		q := oaipmh.Query{MetadataPrefix: prefix, From: cp.SeqFrom, Granularity: gran}
		return q
	}
	var q oaipmh.Query
	if cp.InProgress && cp.Token != "" && !opts.Full {
		res.Resumed = true
		cp.SeqResumed = true
		q = oaipmh.Query{Token: cp.Token}
		log.Info("resuming list from checkpoint", "pages_done", cp.SeqPages, "records_done", cp.SeqRecords)
	} else {
		from := time.Time{}
		switch {
		case cp.FullNext && !opts.Full:
			log.Warn("harvesting the full list: the previous one ended with fewer records than the repository announced")
		case !opts.Full && !cp.HighWater.IsZero():
			// One granule of overlap: records at the boundary come again and,
			// being unchanged, make no events.
			from = gran.Truncate(cp.HighWater).Add(-gran.Unit())
		}
		cp = store.Checkpoint{InProgress: true, SeqFrom: from, SeqStarted: h.now().UTC(),
			HighWater: cp.HighWater, Granularity: gran.String(), LastComplete: cp.LastComplete}
		q = start()
		log.Info("starting list", "from", fmtTime(from, gran), "full", from.IsZero())
	}

	guard := oaipmh.Guard{MaxEmptyPages: h.settings.MaxEmptyPages}
	began := h.now()
	f := h.fetch(ctx, q)
	defer func() { f.stop() }()
	// The pacer pauses for the time the harvest worked on the last page:
	// applying and committing it, not waiting for the repository.
	pageStart, waited := time.Now(), time.Duration(0)
	next := func() (pipeItem, bool) {
		t := time.Now()
		it, ok := f.next()
		waited += time.Since(t)
		return it, ok
	}
	for {
		if err := h.pacer.yield(ctx, time.Since(pageStart)-waited); err != nil {
			return h.fail(res, "harvest", "stopped", err)
		}
		pageStart, waited = time.Now(), 0
		if err := ctx.Err(); err != nil {
			return h.fail(res, "harvest", "stopped", err)
		}
		// The page's start, its records as they are decoded, its end.
		it, ok := next()
		if !ok || !it.start {
			return h.fail(res, "harvest", "list records", fmt.Errorf("the page fetcher stopped: %w", context.Cause(ctx)))
		}
		q = it.query
		batch, err := h.db.NewBatch(h.repo.Name, prefix)
		if err != nil {
			return h.fail(res, "harvest", "open batch", err)
		}
		var pc Counts
		in := h.ingest(batch, &pc, prefix, h.client.RequestURL("ListRecords", q))
		var page *oaipmh.Page
		for err == nil && page == nil {
			it, ok := next()
			switch {
			case !ok:
				err = fmt.Errorf("the page fetcher stopped: %w", context.Cause(ctx))
			case it.rec != nil:
				err = in.record(it.rec)
				f.applied(it.rec)
			default:
				page, err = it.page, it.err
			}
		}
		if err == nil {
			err = guard.Check(q.Token, page)
		}
		if err != nil {
			batch.Discard()
			if oaipmh.IsCode(err, oaipmh.BadResumptionToken) && q.Token != "" && res.Restarts < maxTokenRestarts {
				res.Restarts++
				log.Warn("resumption token rejected; restarting the list with its original arguments", "from", fmtTime(cp.SeqFrom, gran), "err", err)
				q = start()
				guard = oaipmh.Guard{MaxEmptyPages: h.settings.MaxEmptyPages}
				cp.SeqRecords = 0 // the list is read again from its start
				f.stop()
				f = h.fetch(ctx, q)
				continue
			}
			if _, ok := errors.AsType[*oaipmh.GuardError](err); ok && !cp.SeqGuarded {
				// The committed pages stay; the list they belong to is suspect.
				cp.SeqGuarded = true
				if perr := h.db.PutCheckpoint(h.repo.Name, prefix, cp); perr != nil {
					log.Error("cannot record that a guard stopped the list", "err", perr)
				}
			}
			if oaipmh.IsCode(err, oaipmh.CannotDisseminateFormat) {
				return h.fail(res, "harvest", "the repository cannot disseminate this format (check metadata_prefixes against ListMetadataFormats)", err)
			}
			return h.fail(res, "harvest", fmt.Sprintf("list records (page %d)", cp.SeqPages+1), err)
		}
		if cp.SeqPages == 0 || cp.SeqResponseDate.IsZero() {
			cp.SeqResponseDate = page.ResponseDate
		}
		if in.maxDS.After(cp.SeqMaxDatestamp) {
			cp.SeqMaxDatestamp = in.maxDS
		}
		cp.SeqPages++
		cp.SeqRecords += int64(page.Count)
		listPages, listRecords := cp.SeqPages, cp.SeqRecords // before completed() resets them
		if cp.SeqListSize <= 0 && page.Token.CompleteListSize > 0 {
			cp.SeqListSize = page.Token.CompleteListSize
		}
		pc.Pages = 1
		pc.BadDatestamps = int64(page.BadDatestamps)
		if page.Done() {
			if short := cp.SeqListSize - cp.SeqRecords; short > 0 && (cp.SeqResumed || cp.SeqGuarded) {
				// A list that was resumed, or stopped by a guard, ended short
				// of what it announced: records may be missing below any new
				// high-water mark, so keep the old one and read everything next time.
				log.Warn("list ended with fewer records than announced after a resume or a guard; the high-water mark stays and the next run harvests the full list",
					"records", cp.SeqRecords, "complete_list_size", cp.SeqListSize, "resumed", cp.SeqResumed, "guarded", cp.SeqGuarded)
				res.Incomplete = true
				cp = store.Checkpoint{HighWater: cp.HighWater, Granularity: cp.Granularity, LastComplete: cp.LastComplete, FullNext: true}
			} else {
				cp = completed(cp, h.now().UTC())
			}
		} else {
			cp.Token = page.Token.Value
		}
		if err := batch.SetCheckpoint(cp); err != nil {
			batch.Discard()
			return h.fail(res, "harvest", "write checkpoint", err)
		}
		if err := batch.Commit(); err != nil {
			batch.Discard()
			return h.fail(res, "harvest", "commit page", err)
		}
		res.Counts.add(pc)
		h.committed(prefix, pc)
		pr := Progress{Repo: h.repo.Name, Prefix: prefix, Pages: listPages, Records: listRecords, RunRecords: res.Counts.Records,
			Total: page.Token.CompleteListSize, Elapsed: h.now().Sub(began), Done: page.Done()}
		h.progress(pr)
		if h.act.progress(pr, h.now()) {
			log.Info("harvest progress", "pages", pr.Pages, "records", pr.Records, "of", pr.Total, "records_per_s", int(float64(pr.RunRecords)/pr.Elapsed.Seconds()))
		}
		if page.Done() {
			log.Info("list complete", "pages", res.Counts.Pages, "records", res.Counts.Records, "created", res.Counts.Created,
				"updated", res.Counts.Updated, "deleted", res.Counts.Deleted, "next_from", fmtTime(cp.HighWater.Add(-gran.Unit()), gran))
			if n := res.Counts.BadDatestamps; n > 0 {
				log.Warn("records without a usable datestamp (kept as sent, shown without one)", "count", n)
			}
			if err := h.retryQuarantine(ctx, prefix, &res.Counts); err != nil {
				log.Warn("cannot retry quarantined records", "err", err)
			}
			return res
		}
	}
}

// maxQuarantineRetries bounds the GetRecord requests one run spends on
// quarantined records (the repository's politeness delay applies to each).
const maxQuarantineRetries = 100

// retryQuarantine fetches quarantined records again, one GetRecord each: a
// record that now parses is applied and released, one that is gone is
// released, one still broken stays (its count and time move on).
func (h *Harvester) retryQuarantine(ctx context.Context, prefix string, counts *Counts) error {
	var ids []string
	err := h.db.View(ctx, func(s *store.Snap) error {
		_, err := s.Quarantine(h.repo.Name, prefix, maxQuarantineRetries, func(q store.Quarantined) error {
			if q.LongBytes == 0 { // a long identifier cannot be asked for (quarantineLong)
				ids = append(ids, q.Identifier)
			}
			return nil
		})
		return err
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	// What the retries do counts, except finding the same records unusable
	// again (the list already counted them).
	var rc Counts
	defer func() { rc.Quarantined = 0; counts.add(rc) }()
	released := 0
	for _, id := range ids {
		rec, err := h.client.GetRecord(ctx, id, prefix)
		gone := oaipmh.IsCode(err, oaipmh.IDDoesNotExist)
		var re *oaipmh.RecordError
		if err != nil && !gone && !errors.As(err, &re) {
			return err // the repository is not answering: try next run
		}
		batch, err := h.db.NewBatch(h.repo.Name, prefix)
		if err != nil {
			return err
		}
		in := h.ingest(batch, &rc, prefix, h.client.URL(url.Values{"verb": {"GetRecord"}, "identifier": {id}, "metadataPrefix": {prefix}}))
		switch {
		case gone:
			err = batch.Release(id)
		case re != nil:
			err = in.quarantine(id, re)
		default:
			if err = in.record(rec); err == nil && rec.Err == nil {
				err = batch.Release(id)
				released++
			}
		}
		if err == nil {
			err = batch.Commit()
		}
		batch.Discard()
		if err != nil {
			return err
		}
	}
	if released > 0 {
		h.log.Info("quarantined records now usable", "prefix", prefix, "released", released)
		h.changed(h.repo.Name, prefix)
	}
	return nil
}

// completed closes a finished list: the next incremental harvest starts at the
// responseDate of the list's first page (the repository's clock, PMH-024), or at
// the newest datestamp seen when the repository sent no usable responseDate.
func completed(cp store.Checkpoint, now time.Time) store.Checkpoint {
	hw := cp.SeqResponseDate
	if hw.IsZero() {
		hw = cp.SeqMaxDatestamp
	}
	if hw.IsZero() {
		hw = cp.HighWater
	}
	return store.Checkpoint{HighWater: hw, Granularity: cp.Granularity, LastComplete: now}
}

func fmtTime(t time.Time, g oaipmh.Granularity) string {
	if t.IsZero() {
		return ""
	}
	return g.Format(t)
}
