package websub

import (
	"bytes"
	"container/heap"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// Delivery scheduling.
//
// Every callback has a queue of the deliveries owed to it, in ID order (the
// order they were published). A queue sends one delivery at a time, its
// head, so a subscriber sees the notifications of a topic in order and a
// delivery waiting for its retry holds back the later ones to the same
// callback, and to it only. Idle queues whose head is due wait in a heap
// ordered by due time; one dispatcher goroutine hands the due heads to at
// most Workers delivery goroutines at once. A callback that hangs until
// Timeout occupies one of them and delays nobody else's queue.

// queue is the deliveries owed to one callback.
type queue struct {
	callback string
	items    []store.Delivery // by ID
	busy     bool             // its head is being sent
	index    int              // in the ready heap, -1 when not there
}

func (q *queue) due() time.Time { return q.items[0].NotBefore }

// insert adds d in ID order; a delivery already queued is not added again.
func (q *queue) insert(d store.Delivery) bool {
	i := sort.Search(len(q.items), func(i int) bool { return q.items[i].ID >= d.ID })
	if i < len(q.items) && q.items[i].ID == d.ID {
		return false
	}
	q.items = append(q.items, store.Delivery{})
	copy(q.items[i+1:], q.items[i:])
	q.items[i] = d
	return true
}

func (q *queue) find(id uint64) int {
	i := sort.Search(len(q.items), func(i int) bool { return q.items[i].ID >= id })
	if i < len(q.items) && q.items[i].ID == id {
		return i
	}
	return -1
}

// readyHeap orders idle, non-empty queues by their head's due time, then by
// the head's ID (older notifications first).
type readyHeap []*queue

func (r readyHeap) Len() int { return len(r) }
func (r readyHeap) Less(i, j int) bool {
	a, b := r[i].items[0], r[j].items[0]
	if !a.NotBefore.Equal(b.NotBefore) {
		return a.NotBefore.Before(b.NotBefore)
	}
	return a.ID < b.ID
}
func (r readyHeap) Swap(i, j int) {
	r[i], r[j] = r[j], r[i]
	r[i].index, r[j].index = i, j
}
func (r *readyHeap) Push(x any) {
	q := x.(*queue)
	q.index = len(*r)
	*r = append(*r, q)
}
func (r *readyHeap) Pop() any {
	old := *r
	q := old[len(old)-1]
	old[len(old)-1] = nil
	*r = old[:len(old)-1]
	q.index = -1
	return q
}

// enqueue adds stored deliveries to their callbacks' queues.
func (h *Hub) enqueue(ds []store.Delivery) {
	if len(ds) == 0 {
		return
	}
	h.mu.Lock()
	for _, d := range ds {
		q := h.queues[d.Callback]
		if q == nil {
			q = &queue{callback: d.Callback, index: -1}
			h.queues[d.Callback] = q
		}
		if !q.insert(d) {
			continue
		}
		h.pending++
		switch {
		case q.busy:
		case q.index >= 0:
			heap.Fix(&h.ready, q.index)
		default:
			heap.Push(&h.ready, q)
		}
	}
	h.mu.Unlock()
	h.nudge()
}

func (h *Hub) nudge() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// dispatch hands due queue heads to delivery goroutines, at most Workers at
// once, and sleeps until the next head is due or something changes.
func (h *Hub) dispatch() {
	defer h.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		h.mu.Lock()
		now := h.now()
		for h.busy < h.o.Workers && len(h.ready) > 0 && !h.ready[0].due().After(now) {
			q := heap.Pop(&h.ready).(*queue)
			q.busy = true
			h.busy++
			d := q.items[0]
			h.wg.Add(1) // the dispatcher is itself counted, so Close's Wait cannot have returned
			go h.deliver(q, d)
		}
		wait := time.Duration(-1)
		if h.busy < h.o.Workers && len(h.ready) > 0 {
			wait = max(h.ready[0].due().Sub(now), time.Millisecond)
		}
		h.mu.Unlock()
		if wait >= 0 {
			timer.Reset(wait)
		}
		select {
		case <-h.ctx.Done():
			timer.Stop()
			return
		case <-h.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// outcome of one delivery attempt.
type outcome int

const (
	delivered outcome = iota // 2xx: done
	retry                    // failed attempt, tried again at NotBefore
	dropped                  // given up, or the subscription is gone
	gone                     // 410: the subscriber ended the subscription
	cancelled                // the hub is closing: nothing recorded
)

// deliver sends q's head d once and settles the result in the store and in
// the queue.
func (h *Hub) deliver(q *queue, d store.Delivery) {
	defer h.wg.Done()
	out, next, failed := h.attempt(d)

	var alsoGone []store.Delivery
	h.mu.Lock()
	q.busy = false
	h.busy--
	i := q.find(d.ID)
	switch out {
	case delivered, dropped, gone:
		if i >= 0 {
			q.items = append(q.items[:i], q.items[i+1:]...)
			h.pending--
		}
	case retry:
		if i >= 0 {
			q.items[i] = next
		}
	}
	if out == gone { // drop what else is owed to this subscription
		kept := q.items[:0]
		for _, o := range q.items {
			if o.Topic == d.Topic {
				alsoGone = append(alsoGone, o)
			} else {
				kept = append(kept, o)
			}
		}
		clear(q.items[len(kept):])
		q.items = kept
		h.pending -= len(alsoGone)
	}
	if len(q.items) > 0 {
		heap.Push(&h.ready, q)
	} else {
		delete(h.queues, q.callback)
	}
	// Counted once settled in the store and here, so whoever sees a count
	// change also sees its effect.
	if failed {
		h.failed.Add(1)
	}
	switch out {
	case delivered:
		h.delivered.Add(1)
	case dropped, gone:
		h.dropped.Add(1)
	}
	h.mu.Unlock()
	h.nudge()

	for _, o := range alsoGone {
		if err := h.db.FinishDelivery(o.ID); err != nil {
			h.log.Error("cannot drop a delivery to an ended subscription; it is dropped when retried after a restart", "topic", o.Topic, "callback", o.Callback, "delivery", o.ID, "err", err)
		}
		h.dropped.Add(1)
	}
}

// attempt makes one delivery attempt and records its result in the store.
// For retry it returns the delivery as updated; failed tells whether an
// attempt was made and failed.
func (h *Hub) attempt(d store.Delivery) (out outcome, next store.Delivery, failed bool) {
	log := h.log.With("topic", d.Topic, "callback", d.Callback, "delivery", d.ID)
	external := h.o.ExternalHub != "" && d.Callback == h.o.ExternalHub
	secret := ""
	hubURL := h.o.HubURL
	if external {
		hubURL = h.o.ExternalHub // CN-029: the Link names the hub the payload is posted to
	} else {
		// The subscription is read at send time: its secret may have changed,
		// and a delivery outliving its subscription is not sent.
		var sub *store.Subscription
		err := h.db.View(h.ctx, func(s *store.Snap) error {
			var err error
			sub, err = s.Subscription(d.Topic, d.Callback)
			return err
		})
		if err != nil {
			if h.ctx.Err() != nil {
				return cancelled, d, false
			}
			out, next := h.failedAttempt(log, d, fmt.Errorf("read subscription: %w", err))
			return out, next, true
		}
		if sub == nil || !sub.Expires.After(h.now()) {
			log.Info("subscription ended before delivery; dropping it")
			return h.finish(log, d, dropped), d, false
		}
		secret = sub.Secret
	}
	p, err := h.payload(d.Notification)
	if err != nil {
		if h.ctx.Err() != nil {
			return cancelled, d, false
		}
		out, next := h.failedAttempt(log, d, fmt.Errorf("read notification %d: %w", d.Notification, err))
		return out, next, true
	}
	if p.payload == nil {
		log.Error("notification missing from the store; dropping its delivery", "notification", d.Notification)
		return h.finish(log, d, dropped), d, false
	}

	status, err := h.post(d, p, hubURL, secret)
	switch {
	case h.ctx.Err() != nil:
		return cancelled, d, false
	case err != nil:
		out, next := h.failedAttempt(log, d, err)
		return out, next, true
	case status >= 200 && status < 300: // CN-040
		return h.finish(log, d, delivered), d, false
	case status == http.StatusGone && !external: // WS-009: the subscriber ends it
		h.subMu.Lock()
		err := h.db.DeleteSubscription(d.Topic, d.Callback)
		h.subMu.Unlock()
		if err != nil {
			log.Error("callback answered 410 Gone but the subscription cannot be deleted; it expires with its lease", "err", err)
		} else {
			log.Info("callback answered 410 Gone; subscription deleted")
		}
		return h.finish(log, d, gone), d, false
	default: // CN-040: every other status is a failure
		out, next := h.failedAttempt(log, d, fmt.Errorf("HTTP %d", status))
		return out, next, true
	}
}

// finish removes a delivery from the store (done, given up or dropped).
func (h *Hub) finish(log *slog.Logger, d store.Delivery, out outcome) outcome {
	if err := h.db.FinishDelivery(d.ID); err != nil {
		log.Error("cannot remove a settled delivery from the store; it may be sent again after a restart", "err", err)
	}
	return out
}

// failedAttempt records a failed attempt and either schedules the next one
// (exponential backoff with jitter, WS-009: retry within self-imposed
// limits) or, after MaxAttempts, gives the delivery up.
func (h *Hub) failedAttempt(log *slog.Logger, d store.Delivery, cause error) (outcome, store.Delivery) {
	d.Attempts++
	d.LastError = cause.Error()
	if d.Attempts >= h.o.MaxAttempts {
		log.Warn("giving up a delivery after its last attempt; the subscriber can recover from the Change List", "attempts", d.Attempts, "err", cause)
		return h.finish(log, d, dropped), d
	}
	wait := backoff(d.Attempts, h.o.RetryBase, h.o.RetryMax)
	d.NotBefore = h.now().Add(wait)
	log.Info("delivery failed; will retry", "attempts", d.Attempts, "retry_in", wait, "err", cause)
	if err := h.db.UpdateDelivery(d); err != nil {
		// The retry is still scheduled in memory; only a restart would
		// forget this attempt.
		log.Error("cannot record a failed delivery attempt", "err", err)
	}
	return retry, d
}

// backoff is the wait after the n-th failed attempt: base·2^(n-1), capped
// at max, with jitter drawn from its upper half.
func backoff(n int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	half := d / 2
	return half + rand.N(d-half+1)
}

// payload returns a notification's content, from the cache or the store; a
// nil payload means the notification is gone.
func (h *Hub) payload(id uint64) (cached, error) {
	if c, ok := h.payloads.get(id); ok {
		return c, nil
	}
	var n *store.Notification
	err := h.db.View(h.ctx, func(s *store.Snap) error {
		var err error
		n, err = s.Notification(id)
		return err
	})
	if err != nil || n == nil {
		return cached{}, err
	}
	c := cached{id: id, contentType: n.ContentType, payload: n.Payload}
	if c.payload == nil {
		c.payload = []byte{}
	}
	h.payloads.put(id, c.contentType, c.payload)
	return c, nil
}

// post sends the payload to the callback (CN-039, WS-009) and returns the
// status.
func (h *Hub) post(d store.Delivery, p cached, hubURL, secret string) (int, error) {
	ctx, cancel := context.WithTimeout(h.ctx, h.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Callback, bytes.NewReader(p.payload))
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	ct := p.contentType
	if ct == "" {
		ct = "application/xml"
	}
	req.Header.Set("Content-Type", ct)
	link := fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub"`, d.Topic, hubURL)
	if h.o.Topic != nil {
		if capList, _ := h.o.Topic(d.Topic); capList != "" {
			link += fmt.Sprintf(`, <%s>; rel="resourcesync"`, capList)
		}
	}
	req.Header.Set("Link", link)
	if secret != "" { // WS-003
		req.Header.Set("X-Hub-Signature", sign(h.o.Signature, secret, p.payload))
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := h.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && h.ctx.Err() == nil {
			return 0, fmt.Errorf("no answer within %s: %w", h.o.Timeout, err)
		}
		return 0, err
	}
	// Read a little so the connection can be reused; the body means nothing.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

const userAgent = "rsbridge-websub-hub"

// sign returns the X-Hub-Signature value of body (WS-003).
func sign(method, secret string, body []byte) string {
	var mac hash.Hash
	if method == "sha512" {
		mac = hmac.New(sha512.New, []byte(secret))
	} else {
		mac = hmac.New(sha256.New, []byte(secret))
	}
	mac.Write(body)
	return method + "=" + hex.EncodeToString(mac.Sum(nil))
}
