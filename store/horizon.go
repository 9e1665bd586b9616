package store

import (
	"sync"
	"time"
)

// horizon tracks what readers can rely on. A change event is timed when its
// record is applied, but a reader sees it only when the transaction holding
// it commits, which for a page streamed slowly from upstream can be seconds
// later. A reader therefore does not trust "now": it trusts the horizon of the
// (repository, prefix) it reads, the earliest time an event of it not yet
// committed can carry (events are timed per (repository, prefix), so a slow
// page of one repository holds back no other). Every event timed before the
// horizon that a reader computes before opening its snapshot is in that
// snapshot:
//   - one stamped before and still uncommitted holds the horizon at or below
//     its own time (it is pending);
//   - one stamped before and committed since is visible to the snapshot,
//     which is opened after its commit returned;
//   - one stamped after gets a time at or past the horizon, because stamps and
//     horizons come from one clock that never goes back.
//
// A Change List whose period ends at or before the horizon can get no more
// entries, so it is closed; a Resource List's at is the horizon.
type horizon struct {
	mu      sync.Mutex
	now     func() time.Time
	last    time.Time            // the clock's last reading: it never goes back
	pending map[*Batch]time.Time // the first event time of each batch's uncommitted transaction
}

// clock reads the clock, in microseconds, never behind an earlier reading;
// h.mu is held.
func (h *horizon) clock() time.Time {
	t := h.now().UTC().Truncate(time.Microsecond)
	if t.Before(h.last) {
		t = h.last
	}
	h.last = t
	return t
}

// stamp times an event of b that must come after prev, and notes that b
// holds an uncommitted event from that time on.
func (h *horizon) stamp(b *Batch, prev time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.clock()
	if !t.After(prev) {
		t = prev.Add(time.Microsecond)
	}
	if _, ok := h.pending[b]; !ok {
		h.pending[b] = t
	}
	return t
}

// settled notes that b holds no uncommitted event any more: its transaction
// committed (and is visible to snapshots opened from now on) or was dropped.
func (h *horizon) settled(b *Batch) {
	h.mu.Lock()
	delete(h.pending, b)
	h.mu.Unlock()
}

// read returns the clock's reading and, per (repository, prefix) with
// uncommitted events, the earliest of their times: the horizons that are
// not the clock.
func (h *horizon) read() (now time.Time, held map[counterKey]time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now = h.clock()
	for b, t := range h.pending {
		k := counterKey{b.repo, b.prefix}
		if old, ok := held[k]; !ok || t.Before(old) {
			if held == nil {
				held = map[counterKey]time.Time{}
			}
			held[k] = t
		}
	}
	return now, held
}

// counterKey names the event sequence of one (repository, prefix).
type counterKey struct{ repo, prefix string }

// at is the horizon of one (repository, prefix) in a reading of read.
func at(now time.Time, held map[counterKey]time.Time, repo, prefix string) time.Time {
	if t, ok := held[counterKey{repo, prefix}]; ok && t.Before(now) {
		return t
	}
	return now
}
