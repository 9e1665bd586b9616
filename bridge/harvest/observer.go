package harvest

import (
	"context"
	"errors"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh"
)

// Observer learns what harvests do. Its methods are called on the harvest's
// goroutine and must return quickly. Metrics count through it; the dumper
// and the notifier wake through it (OnChange).
type Observer interface {
	// Attempt is one OAI-PMH request attempt of a repository.
	Attempt(repo string, a oaipmh.Attempt)
	// Progress follows every committed page of a run.
	Progress(p Progress)
	// Committed is one committed batch of (repo, prefix) and what it did;
	// c.Changes() > 0 means it stored change events.
	Committed(repo, prefix string, c Counts)
	// RunEnded is a run that ended, with its error (nil: success;
	// Interrupted(err): asked to stop).
	RunEnded(repo, kind string, took time.Duration, end time.Time, err error)
}

// NopObserver ignores everything; embed it to observe only some events.
type NopObserver struct{}

func (NopObserver) Attempt(string, oaipmh.Attempt)                           {}
func (NopObserver) Progress(Progress)                                        {}
func (NopObserver) Committed(string, string, Counts)                         {}
func (NopObserver) RunEnded(string, string, time.Duration, time.Time, error) {}

// Observers tells each of its observers, in order.
type Observers []Observer

func (os Observers) Attempt(repo string, a oaipmh.Attempt) {
	for _, o := range os {
		o.Attempt(repo, a)
	}
}

func (os Observers) Progress(p Progress) {
	for _, o := range os {
		o.Progress(p)
	}
}

func (os Observers) Committed(repo, prefix string, c Counts) {
	for _, o := range os {
		o.Committed(repo, prefix, c)
	}
}

func (os Observers) RunEnded(repo, kind string, took time.Duration, end time.Time, err error) {
	for _, o := range os {
		o.RunEnded(repo, kind, took, end, err)
	}
}

// Waker is woken when there may be new work (dumps.Dumper, notify.Notifier).
type Waker interface{ Changed() }

// OnChange observes commits that stored change events, and wakes w.
func OnChange(w Waker) Observer { return onChange{w: w} }

type onChange struct {
	NopObserver
	w Waker
}

func (o onChange) Committed(_, _ string, c Counts) {
	if c.Changes() > 0 {
		o.w.Changed()
	}
}

// ProgressFunc observes the progress of runs only.
type ProgressFunc func(Progress)

func (ProgressFunc) Attempt(string, oaipmh.Attempt)                           {}
func (f ProgressFunc) Progress(p Progress)                                    { f(p) }
func (ProgressFunc) Committed(string, string, Counts)                         {}
func (ProgressFunc) RunEnded(string, string, time.Duration, time.Time, error) {}

// Interrupted reports an error that means the run was asked to stop.
func Interrupted(err error) bool { return errors.Is(err, context.Canceled) }
