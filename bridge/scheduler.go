package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/robfig/cron/v3"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// Scheduler runs each repository's harvest on its schedule and its
// reconciliation on its reconcile schedule. Runs of one repository never
// overlap (a tick that finds the previous run still going is skipped, and
// harvest and reconciliation share the repository's lock); a failed run is
// logged and tried again at the next tick without holding up the others.
type Scheduler struct {
	cron       *cron.Cron
	harvesters map[string]*Harvester
	log        *slog.Logger
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

// NewScheduler prepares a harvester per repository and its cron entries.
func NewScheduler(cfg *config.Config, db *store.DB, o HarvesterOptions) (*Scheduler, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{harvesters: map[string]*Harvester{}, log: o.Logger, ctx: ctx, cancel: cancel}
	s.cron = cron.New(cron.WithChain(cron.Recover(cronLogger{o.Logger}), cron.SkipIfStillRunning(cronLogger{o.Logger})))
	for _, repo := range cfg.Repositories {
		h, err := NewHarvester(cfg, repo, db, o)
		if err != nil {
			cancel()
			return nil, err
		}
		s.harvesters[repo.Name] = h
		if _, err := s.cron.AddFunc(repo.Schedule, s.harvestJob(h)); err != nil {
			cancel()
			return nil, fmt.Errorf("repository %s: schedule %q: %w", repo.Name, repo.Schedule, err)
		}
		if cfg.HasReconcile(repo) {
			if _, err := s.cron.AddFunc(repo.Reconcile, s.reconcileJob(h)); err != nil {
				cancel()
				return nil, fmt.Errorf("repository %s: reconcile %q: %w", repo.Name, repo.Reconcile, err)
			}
		}
	}
	return s, nil
}

func (s *Scheduler) harvestJob(h *Harvester) func() {
	return func() {
		res, err := h.Harvest(s.ctx, HarvestOptions{IfIdle: true})
		if errors.Is(err, ErrBusy) {
			s.log.Debug("harvest tick skipped: the previous run is still going", "repo", h.repo.Name)
			return
		}
		var c Counts
		for _, r := range res {
			c.add(r.Counts)
		}
		if err != nil {
			s.log.Error("harvest failed; will retry at the next tick", "repo", h.repo.Name, "err", err)
			return
		}
		s.log.Info("harvest done", "repo", h.repo.Name, "records", c.Records, "created", c.Created, "updated", c.Updated, "deleted", c.Deleted)
	}
}

func (s *Scheduler) reconcileJob(h *Harvester) func() {
	return func() {
		res, err := h.Reconcile(s.ctx, ReconcileOptions{})
		if err != nil {
			s.log.Error("reconciliation failed; will retry at the next tick", "repo", h.repo.Name, "err", err)
			return
		}
		for _, r := range res {
			s.log.Info("reconciliation done", "repo", h.repo.Name, "prefix", r.Prefix, "deleted", r.Counts.Deleted)
		}
	}
}

// Start begins the schedules and harvests every repository once right away.
func (s *Scheduler) Start() {
	s.cron.Start()
	for _, h := range s.harvesters {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.harvestJob(h)()
		}()
	}
}

// Stop cancels running harvests (each stops after its last committed page, so the
// checkpoint is where the next run resumes) and waits for them to return.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.cancel()
	done := s.cron.Stop()
	waited := make(chan struct{})
	go func() {
		s.wg.Wait()
		<-done.Done()
		close(waited)
	}()
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
