package harvest

import (
	"context"
	"sync/atomic"
	"time"
)

// Pacer lets harvests give way to serving. The server marks every request;
// while requests are in flight, or were within the last quiet period, a
// harvest that finished a page pauses so that it works at most share percent
// of the time (server.harvest_share). On a 2-core machine a harvest left
// alone takes both cores (decoding, Badger's writes and compactions), and
// readers would wait behind it. A nil *Pacer never pauses.
type Pacer struct {
	share    int // percent of the time harvests may work while serving
	inflight atomic.Int64
	last     atomic.Int64 // UnixNano of the last request's end
	now      func() time.Time
}

// quiet is how long after the last request the server counts as idle.
const quiet = 250 * time.Millisecond

// maxPause bounds one pause, so a harvest never stalls for long.
const maxPause = 2 * time.Second

// NewPacer paces harvests to sharePercent while serving (100: never pause).
func NewPacer(sharePercent int) *Pacer {
	return &Pacer{share: min(max(sharePercent, 1), 100), now: time.Now}
}

// Begin marks a request the server started; End it when it is done.
func (p *Pacer) Begin() {
	if p != nil {
		p.inflight.Add(1)
	}
}

// End marks the end of a request Begin marked.
func (p *Pacer) End() {
	if p != nil {
		p.last.Store(p.now().UnixNano())
		p.inflight.Add(-1)
	}
}

// Serving reports requests in flight or served within the last quiet
// period: what makes harvests pause.
func (p *Pacer) Serving() bool { return p != nil && p.serving() }

// serving reports requests in flight or recently served.
func (p *Pacer) serving() bool {
	return p.inflight.Load() > 0 || p.now().UnixNano()-p.last.Load() < int64(quiet)
}

// pause is what a harvest that worked for worked waits while serving.
func (p *Pacer) pause(worked time.Duration) time.Duration {
	if p == nil || p.share >= 100 || worked <= 0 || !p.serving() {
		return 0
	}
	return min(worked*time.Duration(100-p.share)/time.Duration(p.share), maxPause)
}

// yield waits the pause, or until ctx ends.
func (p *Pacer) yield(ctx context.Context, worked time.Duration) error {
	d := p.pause(worked)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
