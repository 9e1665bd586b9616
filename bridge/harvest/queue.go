package harvest

import (
	"context"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// QueueState is the scheduler's queue: the limits, the runs holding a
// slot and the runs waiting for one, oldest first.
type QueueState struct {
	Concurrency int          `json:"concurrency"`
	PerHost     int          `json:"per_host"`
	Running     []QueueEntry `json:"running"`
	Waiting     []QueueEntry `json:"waiting"`
}

// QueueEntry is one run in the queue.
type QueueEntry struct {
	Repository string    `json:"repository"`
	Host       string    `json:"host"`
	Kind       string    `json:"kind"`
	Since      time.Time `json:"since"` // when it started waiting, or running
}

// queue grants run slots: at most limit runs at once, at most perHost of
// them against one host. Waiting runs are granted oldest first, except that
// a run whose host is full does not hold up a later one for another host.
type queue struct {
	limit, perHost int
	now            func() time.Time

	mu      sync.Mutex
	running []QueueEntry
	hosts   map[string]int
	waiting []*waiter
}

type waiter struct {
	QueueEntry
	ready   chan struct{} // closed when granted
	granted bool
}

func newQueue(limit, perHost int, now func() time.Time) *queue {
	return &queue{limit: max(limit, 1), perHost: max(perHost, 1), now: now, hosts: map[string]int{}}
}

// enqueue puts a run of repo against host in line; wait then waits for
// its slot.
func (q *queue) enqueue(repo, host, kind string) *waiter {
	w := &waiter{QueueEntry: QueueEntry{Repository: repo, Host: host, Kind: kind, Since: q.now().UTC()}, ready: make(chan struct{})}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, w)
	q.grantLocked()
	return w
}

// wait waits for w's slot; release gives it back. It returns ctx's error,
// and takes w out of line, if ctx ends first.
func (q *queue) wait(ctx context.Context, w *waiter) (release func(), err error) {
	select {
	case <-w.ready:
	case <-ctx.Done():
		q.mu.Lock()
		if !w.granted {
			q.waiting = slices.DeleteFunc(q.waiting, func(x *waiter) bool { return x == w })
			q.mu.Unlock()
			return nil, ctx.Err()
		}
		q.mu.Unlock() // granted meanwhile: the caller releases it
	}
	var once sync.Once
	return func() { once.Do(func() { q.release(w.Repository, w.Host) }) }, nil
}

// grantLocked hands free slots to the waiting runs, oldest first.
func (q *queue) grantLocked() {
	for i := 0; i < len(q.waiting) && len(q.running) < q.limit; {
		w := q.waiting[i]
		if q.hosts[w.Host] >= q.perHost {
			i++
			continue
		}
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.hosts[w.Host]++
		e := w.QueueEntry
		e.Since = q.now().UTC()
		q.running = append(q.running, e)
		w.granted = true
		close(w.ready)
	}
}

func (q *queue) release(repo, host string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.IndexFunc(q.running, func(e QueueEntry) bool { return e.Repository == repo }); i >= 0 {
		q.running = slices.Delete(q.running, i, i+1)
	}
	if q.hosts[host]--; q.hosts[host] <= 0 {
		delete(q.hosts, host)
	}
	q.grantLocked()
}

// state is a copy of the queue.
func (q *queue) state() QueueState {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := QueueState{Concurrency: q.limit, PerHost: q.perHost, Running: slices.Clone(q.running)}
	for _, w := range q.waiting {
		st.Waiting = append(st.Waiting, w.QueueEntry)
	}
	return st
}

// position is a waiting run's place in the queue (1: next), 0 if the
// repository is not waiting.
func (q *queue) position(repo string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.IndexFunc(q.waiting, func(w *waiter) bool { return w.Repository == repo }) + 1
}

// Offset is the fixed shift of a repository's schedule: a hash of its name
// below span, so the same name gets the same offset at every start and the
// offsets of many repositories spread evenly.
func Offset(name string, span time.Duration) time.Duration {
	if span <= time.Second {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return time.Duration(h.Sum64()%uint64(span/time.Second)) * time.Second
}

// jittered parses a schedule (cron.ParseStandard) and shifts it by the
// repository's offset below jitter. "@every D" becomes a fixed phase of D
// (runs at multiples of D since the epoch, plus the offset, capped at D),
// so repositories with the same interval do not all run at the instant
// rsbridge started, nor again together every D after it.
func jittered(spec, name string, jitter time.Duration) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, err
	}
	if every, ok := s.(cron.ConstantDelaySchedule); ok {
		return phased{period: every.Delay, offset: Offset(name, min(jitter, every.Delay))}, nil
	}
	if off := Offset(name, jitter); off > 0 {
		return shifted{s, off}, nil
	}
	return s, nil
}

// phased runs every period at offset past each multiple of period since the
// Unix epoch.
type phased struct{ period, offset time.Duration }

func (p phased) Next(t time.Time) time.Time {
	base := t.Add(-p.offset).Truncate(p.period) // Truncate works from the zero time; periods of whole seconds dividing days line up with the epoch
	return base.Add(p.period + p.offset)
}

// shifted runs offset after each activation of a schedule.
type shifted struct {
	s      cron.Schedule
	offset time.Duration
}

func (s shifted) Next(t time.Time) time.Time { return s.s.Next(t.Add(-s.offset)).Add(s.offset) }
