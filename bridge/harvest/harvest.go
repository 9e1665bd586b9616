// Package harvest copies OAI-PMH repositories into the store: scheduled
// and requested runs (Scheduler), one repository's harvests and
// reconciliations (Harvester), the page pipeline, and the pure
// classification of each record into a change event. It reports what it
// does through an Observer and knows nothing of HTTP.
//
// A record's route: oaipmh.Client.ListRecords decodes it → the pipeline
// hands it over → ingest reads the stored state → classify decides (pure) →
// store.Batch.Apply writes state, bytes and event; the page's checkpoint
// commits with them, and the Observer hears of the commit.
package harvest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
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
	obs      Observer
	pacer    *Pacer
	host     string                // of the base URL, preferred for landing pages
	polite   string                // the upstream host scheduler.per_host counts it under (config.Scheduler.PolitenessHost)
	locBase  map[string]int        // per prefix: the length of the record URLs rsbridge serves, less the identifier
	convs    map[string]Conversion // by derived format
	checks   map[string]Check      // by format

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

// Options are the optional parts of New and NewScheduler.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time // clock for first-seen times; events use the store's clock
	// Client settings tests override (nil = real ones).
	ClientOptions func(*oaipmh.Options)
	// Observer hears of requests, progress, commits and ended runs
	// (metrics; the dumper and the notifier through OnChange). nil: nobody.
	Observer Observer
	// Pacer makes runs pause after each page while the server is busy
	// (nil: never).
	Pacer *Pacer
	// Conversions derive the formats config derive asks for (derive.go;
	// nil: Conversions(cfg.Crosswalk)); a repository that derives one none provides
	// fails to start.
	Conversions []Conversion
	// Checks check the records of the formats they name (check.go; nil:
	// Checks(); empty: none).
	Checks map[string]Check
}

// UserAgent names rsbridge and, when configured, the operator's contact.
func UserAgent(contact string) string {
	ua := "rsbridge/" + Version + " (+https://github.com/rsbridge/rsbridge"
	if contact != "" {
		ua += "; " + contact
	}
	return ua + ")"
}

// New prepares a harvester for one configured repository.
func New(cfg *config.Config, repo config.Repository, db *store.DB, o Options) (*Harvester, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer == nil {
		o.Observer = NopObserver{}
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
		Observe:        func(a oaipmh.Attempt) { o.Observer.Attempt(repo.Name, a) },
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
	locBase := map[string]int{}
	for _, p := range repo.MetadataPrefixes {
		locBase[p] = len(source.ResourceURL(strings.TrimRight(cfg.BaseURL, "/"), repo.Name, p, ""))
	}
	convs := map[string]Conversion{}
	if o.Conversions == nil {
		o.Conversions = Conversions(cfg.Crosswalk)
	}
	if o.Checks == nil {
		o.Checks = Checks()
	}
	for _, c := range o.Conversions {
		convs[c.To] = c
	}
	for _, p := range repo.MetadataPrefixes {
		if from, ok := repo.DerivedFrom(p); ok && convs[p].From != from {
			return nil, fmt.Errorf("repository %s: derive %s from %s: this rsbridge has no such conversion", repo.Name, p, from)
		}
	}
	return &Harvester{cfg: cfg, repo: repo, settings: s, db: db, client: client, log: log, now: o.Now, obs: o.Observer, pacer: o.Pacer, host: host, polite: cfg.Scheduler.PolitenessHost(host),
		locBase: locBase, convs: convs, checks: o.Checks, busy: make(chan struct{}, 1)}, nil
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
	ctx, end, err := h.start(ctx, kind, opts.IfIdle, false)
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
	results, err = h.deriveAfter(ctx, results, err)
	// What the run committed is durable when it returns (with group commit
	// the last second of it may not be yet).
	if serr := h.db.Sync(); serr != nil {
		err = errors.Join(err, fmt.Errorf("harvest %s: %w", h.repo.Name, serr))
	}
	h.recordOutcome(kind, started, results, err)
	return results, err
}

// deriveAfter derives the derived formats after a run's passes, then
// checks the records that changed (unless the run is being stopped),
// adding their results and failures.
func (h *Harvester) deriveAfter(ctx context.Context, results []Result, err error) ([]Result, error) {
	if ctx.Err() != nil {
		return results, err
	}
	errs := []error{err}
	for _, r := range h.derive(ctx) {
		results = append(results, r)
		errs = append(errs, r.Err)
	}
	if ctx.Err() == nil {
		errs = append(errs, h.checkAll(ctx))
	}
	return results, errors.Join(errs...)
}

// eachPrefix runs one pass per harvested metadata prefix; one prefix failing
// does not stop the others (unless the run is being stopped), and the error joins
// every prefix's failure.
func (h *Harvester) eachPrefix(ctx context.Context, pass func(prefix string) Result) ([]Result, error) {
	var results []Result
	var errs []error
	for _, prefix := range h.repo.Harvested() {
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
	defer func() { rc.Quarantined = 0; counts.Add(rc) }()
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
		h.obs.Committed(h.repo.Name, prefix, Counts{Created: rc.Created, Updated: rc.Updated, Deleted: rc.Deleted})
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
