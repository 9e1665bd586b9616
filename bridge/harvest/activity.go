package harvest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// Run kinds, as the status and the admin API name them.
const (
	KindHarvest     = "harvest"
	KindFullHarvest = "full-harvest"
	KindReconcile   = "reconcile"
)

// Activity is what a repository's harvester is doing now.
type Activity struct {
	Kind string `json:"kind"`
	// Started is when the run was asked for (it names the run: it does not
	// change when a queued run gets its slot); Began when it got the slot.
	Started time.Time `json:"started"`
	Began   time.Time `json:"began,omitzero"`
	// Waiting: the run waits in the scheduler's queue for a slot (since
	// Started, Position-th in line); it has not begun yet.
	Waiting    bool          `json:"waiting,omitempty"`
	Position   int           `json:"position,omitempty"`
	Prefix     string        `json:"prefix,omitempty"`
	Pages      int64         `json:"pages"`       // of the current list, resumed parts included
	Records    int64         `json:"records"`     // of the current list, resumed parts included
	Total      int64         `json:"total"`       // completeListSize, -1 if unknown
	RunRecords int64         `json:"run_records"` // read by this run
	Rate       float64       `json:"rate"`        // records/s of this run
	ETA        time.Duration `json:"eta_ns,omitempty"`
}

// activity tracks the harvester's current run; its zero value is idle.
type activity struct {
	mu      sync.Mutex
	cur     *Activity
	cancel  context.CancelFunc
	lastLog time.Time
}

func (a *activity) start(kind string, now time.Time, cancel context.CancelFunc, queued bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur = &Activity{Kind: kind, Started: now, Total: -1, Waiting: queued}
	if !queued {
		a.cur.Began = now
	}
	a.cancel = cancel
	a.lastLog = now
}

// running marks a run that waited for a slot as started.
func (a *activity) running(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur != nil && a.cur.Waiting {
		a.cur.Waiting, a.cur.Began = false, now
		a.lastLog = now
	}
}

func (a *activity) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur, a.cancel = nil, nil
}

// progress notes a committed page and reports whether a progress line is
// due in the log (every 30 s of a long run).
func (a *activity) progress(p Progress, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil {
		return false
	}
	c := a.cur
	c.Prefix, c.Pages, c.Records, c.Total, c.RunRecords = p.Prefix, p.Pages, p.Records, p.Total, p.RunRecords
	if s := p.Elapsed.Seconds(); s > 0 {
		c.Rate = float64(p.RunRecords) / s
	}
	c.ETA = 0
	if c.Total > c.Records && c.Rate > 0 {
		c.ETA = time.Duration(float64(c.Total-c.Records) / c.Rate * float64(time.Second))
	}
	if now.Sub(a.lastLog) >= 30*time.Second {
		a.lastLog = now
		return true
	}
	return false
}

// Activity returns a copy of the current run, or nil when idle.
func (h *Harvester) Activity() *Activity {
	h.act.mu.Lock()
	defer h.act.mu.Unlock()
	if h.act.cur == nil {
		return nil
	}
	c := *h.act.cur
	return &c
}

// Cancel stops the running harvest or reconciliation (after its last
// committed page); it reports whether one was running.
func (h *Harvester) Cancel() bool {
	h.act.mu.Lock()
	defer h.act.mu.Unlock()
	if h.act.cancel == nil {
		return false
	}
	h.act.cancel()
	return true
}

// start takes the repository for a run (waiting for the running one, or
// with ifIdle returning ErrBusy) and starts tracking it: the returned
// context is cancelled by Cancel, and end gives the repository back. A
// queued run shows as waiting until the scheduler grants it a slot.
func (h *Harvester) start(ctx context.Context, kind string, ifIdle, queued bool) (context.Context, func(), error) {
	if err := h.acquire(ctx, ifIdle); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	h.act.start(kind, h.now().UTC(), cancel, queued)
	return ctx, func() { h.act.end(); cancel(); <-h.busy }, nil
}

// recordOutcome keeps what the run did as the repository's last success or
// last failure (an interrupted run is neither).
func (h *Harvester) recordOutcome(kind string, started time.Time, results []Result, err error) {
	now := h.now().UTC()
	h.obs.RunEnded(h.repo.Name, kind, now.Sub(started), now, err)
	if Interrupted(err) {
		return
	}
	rec := &store.RunRecord{Kind: kind, Started: started, Ended: now}
	for _, r := range results {
		c := r.Counts
		rec.Pages += c.Pages
		rec.Records += c.Records
		rec.Created += c.Created
		rec.Updated += c.Updated
		rec.Deleted += c.Deleted
		rec.Quarantined += c.Quarantined
		rec.Repaired += c.Repaired
	}
	if err != nil {
		rec.Error = err.Error()
	}
	if uerr := h.db.UpdateRepoInfo(h.repo.Name, func(ri *store.RepoInfo) {
		if err != nil {
			ri.LastFailure = rec
		} else {
			ri.LastSuccess = rec
		}
		if kind == KindReconcile {
			if err == nil {
				ri.LastReconcile = now
			}
			return
		}
		ri.LastHarvest = now
		ri.LastHarvestOK = err == nil
		ri.LastError = rec.Error
	}); uerr != nil {
		if errors.Is(uerr, store.ErrDiskFull) {
			// The run's own error says the disk is full, and says it better.
			h.log.Debug("the run's outcome is not stored: the disk is full", "err", uerr)
			return
		}
		h.log.Error("cannot record the run's outcome", "err", uerr)
	}
}

// committed reports a committed batch to the observer.
func (h *Harvester) committed(prefix string, c Counts) { h.obs.Committed(h.repo.Name, prefix, c) }
