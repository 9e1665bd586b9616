package store

import (
	"sync"
	"time"
)

// horizon tracks what readers can rely on. A change event is timed when its
// record is applied, but a reader sees it only when the transaction holding
// it commits, which for a page streamed slowly from upstream can be seconds
// later. A reader therefore does not trust "now": it trusts the horizon, the
// earliest time an event not yet committed can carry. Every event timed before
// the horizon that a reader computes before opening its snapshot is in that
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

// read returns the horizon and the clock's reading.
func (h *horizon) read() (at, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now = h.clock()
	at = now
	for _, t := range h.pending {
		if t.Before(at) {
			at = t
		}
	}
	return at, now
}
