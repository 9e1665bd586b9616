package harvest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// Scheduler runs each repository's harvest on its schedule and its
// reconciliation on its reconcile schedule, and runs what the admin API asks
// for. Runs of one repository never overlap (a tick that finds the previous
// run still going, or waiting for a slot, is skipped, and harvest and
// reconciliation share the repository's lock); a failed run is logged and
// tried again at the next tick without holding up the others.
//
// Runs wait in one queue for a slot: at most scheduler.concurrency at once,
// at most scheduler.per_host of them against one upstream host. Schedules
// are shifted by a per-repository offset (scheduler.jitter), so hundreds of
// repositories on one schedule do not all fire in the same second.
type Scheduler struct {
	cron       *cron.Cron
	queue      *queue
	transports oaipmh.Transports // shared by repositories with the same timeouts
	harvesters map[string]*Harvester
	names      []string
	scheds     map[string][2]cron.Schedule // harvest, reconcile (nil: none)
	started    atomic.Bool
	db         *store.DB
	log        *slog.Logger
	ctx        context.Context
	cancel     context.CancelFunc
	mu         sync.Mutex // orders Trigger's wg.Go before Stop's wg.Wait
	stopping   bool
	wg         sync.WaitGroup
}

// ErrUnknownRepository reports a repository the configuration does not name.
var ErrUnknownRepository = errors.New("no such repository")

// ErrUnknownKind reports a run kind Trigger does not know.
var ErrUnknownKind = errors.New("unknown run kind")

// NewScheduler prepares a harvester per repository and its cron entries.
func NewScheduler(cfg *config.Config, db *store.DB, o Options) (*Scheduler, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{harvesters: map[string]*Harvester{}, scheds: map[string][2]cron.Schedule{}, db: db, log: o.Logger, ctx: ctx, cancel: cancel,
		queue: newQueue(cfg.Scheduler.Concurrency, cfg.Scheduler.PerHost, o.Now)}
	if s.queue.now == nil {
		s.queue.now = time.Now
	}
	s.cron = cron.New(cron.WithChain(cron.Recover(cronLogger{o.Logger}), cron.SkipIfStillRunning(cronLogger{o.Logger})))
	o.ClientOptions = s.shareTransports(o.ClientOptions)
	for _, repo := range cfg.Repositories {
		if err := s.add(cfg, repo, db, o); err != nil {
			cancel()
			return nil, err
		}
	}
	return s, nil
}

// add prepares one repository's harvester and schedules.
func (s *Scheduler) add(cfg *config.Config, repo config.Repository, db *store.DB, o Options) error {
	h, err := New(cfg, repo, db, o)
	if err != nil {
		return err
	}
	s.harvesters[repo.Name] = h
	s.names = append(s.names, repo.Name)
	var scheds [2]cron.Schedule
	if scheds[0], err = jittered(repo.Schedule, repo.Name, cfg.Scheduler.Jitter); err != nil {
		return fmt.Errorf("repository %s: schedule %q: %w", repo.Name, repo.Schedule, err)
	}
	s.cron.Schedule(scheds[0], cron.FuncJob(func() { s.run(h, KindHarvest, false, true) }))
	if cfg.HasReconcile(repo) {
		// Reconciliations get another offset, so they do not follow a
		// harvest of the repository at once.
		if scheds[1], err = jittered(repo.Reconcile, repo.Name+"\x00reconcile", cfg.Scheduler.Jitter); err != nil {
			return fmt.Errorf("repository %s: reconcile %q: %w", repo.Name, repo.Reconcile, err)
		}
		s.cron.Schedule(scheds[1], cron.FuncJob(func() { s.run(h, KindReconcile, false, false) }))
	}
	s.scheds[repo.Name] = scheds
	return nil
}

// shareTransports gives repositories with the same timeouts one HTTP
// transport (and its connection pool), instead of one each: with hundreds of
// repositories, hundreds of pools would each keep idle connections.
func (s *Scheduler) shareTransports(user func(*oaipmh.Options)) func(*oaipmh.Options) {
	return func(co *oaipmh.Options) {
		if user != nil {
			user(co)
		}
		if co.Transport != nil {
			return
		}
		co.Transport = s.transports.For(co.ConnectTimeout, co.Timeout)
	}
}

// run does one run of a kind and logs how it went. ifIdle skips it when
// the repository is busy (scheduled harvest ticks).
func (s *Scheduler) run(h *Harvester, kind string, force, ifIdle bool) {
	ctx, end, err := h.start(s.ctx, kind, ifIdle, true)
	if errors.Is(err, ErrBusy) {
		s.log.Debug("tick skipped: the previous run is still going or waiting", "repo", h.repo.Name, "kind", kind)
		return
	}
	if err != nil {
		return // shutting down
	}
	defer end()
	s.runHeld(ctx, h, s.queue.enqueue(h.repo.Name, h.polite, kind), kind, force)
}

// runHeld waits for the queue to grant w, then does a run whose repository
// is already held.
func (s *Scheduler) runHeld(ctx context.Context, h *Harvester, w *waiter, kind string, force bool) {
	release, werr := s.queue.wait(ctx, w)
	if werr != nil {
		if s.ctx.Err() == nil { // not shutting down: somebody cancelled it
			s.log.Info("run cancelled while waiting for a slot", "repo", h.repo.Name, "kind", kind)
		}
		return
	}
	defer release()
	h.act.running(h.now().UTC())
	var res []Result
	var err error
	if kind == KindReconcile {
		res, err = h.reconcile(ctx, ReconcileOptions{Force: force})
	} else {
		res, err = h.harvest(ctx, kind, HarvestOptions{Full: kind == KindFullHarvest})
	}
	var c Counts
	for _, r := range res {
		c.Add(r.Counts)
	}
	switch {
	case Interrupted(err):
		s.log.Info("run interrupted; the next one resumes at the first page not committed", "repo", h.repo.Name, "kind", kind)
	case err != nil:
		s.log.Error("run failed; will retry at the next tick", "repo", h.repo.Name, "kind", kind, "err", err)
	default:
		s.log.Info("run done", "repo", h.repo.Name, "kind", kind, "records", c.Records, "created", c.Created,
			"updated", c.Updated, "deleted", c.Deleted, "quarantined", c.Quarantined)
	}
}

// Trigger starts a run of a repository now, in the background: a harvest, a
// full harvest or a reconciliation (force lifts its safety limit). It
// returns ErrBusy when a run of the repository is going or waiting; when it
// returns nil the run is queued, and starts when the queue grants it a slot
// (Activity reports it, waiting and then running).
func (s *Scheduler) Trigger(repo, kind string, force bool) error {
	h, ok := s.harvesters[repo]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownRepository, repo)
	}
	switch kind {
	case KindHarvest, KindFullHarvest, KindReconcile:
	default:
		return fmt.Errorf("%w %q (use %s, %s or %s)", ErrUnknownKind, kind, KindHarvest, KindFullHarvest, KindReconcile)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return ErrShuttingDown
	}
	ctx, end, err := h.start(s.ctx, kind, true, true)
	if err != nil {
		return err
	}
	w := s.queue.enqueue(h.repo.Name, h.polite, kind)
	s.wg.Go(func() {
		defer end()
		s.runHeld(ctx, h, w, kind, force)
	})
	return nil
}

// TriggerAll starts a run of each named repository (Trigger), skipping the
// busy ones; it reports which were queued and which were busy.
func (s *Scheduler) TriggerAll(names []string, kind string, force bool) (queued, busy []string, err error) {
	for _, name := range names {
		switch err := s.Trigger(name, kind, force); {
		case err == nil:
			queued = append(queued, name)
		case errors.Is(err, ErrBusy):
			busy = append(busy, name)
		default:
			return queued, busy, err
		}
	}
	return queued, busy, nil
}

// Queue is the scheduler's queue now.
func (s *Scheduler) Queue() QueueState { return s.queue.state() }

// Host is the upstream host a repository's runs count against for
// scheduler.per_host: its host group's domain, else its host name ("" if
// unknown).
func (s *Scheduler) Host(repo string) string {
	if h, ok := s.harvesters[repo]; ok {
		return h.polite
	}
	return ""
}

// ErrShuttingDown refuses work while the server stops.
var ErrShuttingDown = errors.New("rsbridge is shutting down")

// Cancel stops a repository's running run after its last committed page; it
// reports whether one was running.
func (s *Scheduler) Cancel(repo string) (bool, error) {
	h, ok := s.harvesters[repo]
	if !ok {
		return false, fmt.Errorf("%w: %q", ErrUnknownRepository, repo)
	}
	return h.Cancel(), nil
}

// Activity is the repository's running (or waiting) run, or nil.
func (s *Scheduler) Activity(repo string) *Activity {
	h, ok := s.harvesters[repo]
	if !ok {
		return nil
	}
	a := h.Activity()
	if a != nil && a.Waiting {
		a.Position = s.queue.position(repo)
	}
	return a
}

// Next is when the repository's next scheduled harvest and reconciliation
// start (zero: not scheduled, or the scheduler is not running). It asks the
// schedules, not cron: cron's Entry copies every entry (1,400 with 700
// repositories) for each call. Cron runs a job at Next(its previous run),
// which is Next(now) for any time before the run it computes.
func (s *Scheduler) Next(repo string) (harvest, reconcile time.Time) {
	if !s.started.Load() {
		return
	}
	now := s.queue.now().In(s.cron.Location()) // cron reads specs in its location
	scheds := s.scheds[repo]
	if scheds[0] != nil {
		harvest = scheds[0].Next(now)
	}
	if scheds[1] != nil {
		reconcile = scheds[1].Next(now)
	}
	return harvest, reconcile
}

// Repositories names the repositories in configuration order.
func (s *Scheduler) Repositories() []string { return slices.Clone(s.names) }

// Start begins the schedules and harvests every repository once right
// away: each is queued, in configuration order, and runs when a slot is free.
func (s *Scheduler) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return
	}
	for _, name := range s.names {
		h := s.harvesters[name]
		ctx, end, err := h.start(s.ctx, KindHarvest, true, true)
		if err != nil {
			continue // busy: a run is already under way
		}
		w := s.queue.enqueue(name, h.polite, KindHarvest)
		s.wg.Go(func() {
			defer end()
			s.runHeld(ctx, h, w, KindHarvest, false)
		})
	}
	s.cron.Start()
	s.started.Store(true)
}

// Stop cancels running harvests (each stops after its last committed page, so the
// checkpoint is where the next run resumes) and waits for them to return.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.started.Store(false)
	s.cancel()
	done := s.cron.Stop()
	waited := make(chan struct{})
	go func() {
		s.wg.Wait()
		<-done.Done()
		close(waited)
	}()
	defer s.transports.CloseIdle()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("scheduler: harvests still running at shutdown: %w", ctx.Err())
	}
}

// cronLogger adapts slog to cron's logger.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}
