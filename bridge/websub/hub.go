// Package websub is rsbridge's embedded WebSub hub (W3C WebSub REC 2018, as
// restricted by the Change Notification digest, GW-CN-06): it takes
// subscription requests, verifies the subscriber's intent, keeps the
// subscriptions with their leases in the store, and relays every payload
// published on a topic to each subscriber ("fat ping", CN-039), retrying
// failed deliveries with backoff.
//
// The hub relays opaque payloads (application/xml); it knows nothing of
// ResourceSync documents. Everything owed to a subscriber is in the store
// before Publish returns, so a restart loses no delivery (GW-CN-07:
// at-least-once; subscribers de-duplicate by from/until).
package websub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// ErrClosed is returned by Publish after Close.
var ErrClosed = errors.New("websub: the hub is closed")

// Resolver looks up host names; *net.Resolver is one. Tests give their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure New. Zero values take the defaults named.
type Options struct {
	// HubURL is the hub's public URL, byte-identical in every Link header
	// (GW-CN-02, D-CN-07). Required.
	HubURL string
	// DB keeps subscriptions and undelivered notifications. Required.
	DB *store.DB
	// Topic reports whether topic is one this source publishes, and its
	// Capability List (sent as a rel="resourcesync" Link on deliveries when
	// non-empty). Subscriptions to other topics are denied (WS-005). It is
	// called from several goroutines at once. Required unless ExternalHub.
	Topic func(topic string) (capabilityList string, ok bool)
	// ExternalHub, when set, makes Publish enqueue one delivery of each
	// payload to this external hub (fat ping, CN-029) instead of fanning
	// out, and ServeHTTP refuses subscription requests, pointing to it. The
	// URL comes from the operator, so the private-address guard does not
	// apply to it.
	ExternalHub string
	// AllowPrivateCallbacks admits callbacks on private, loopback,
	// link-local, unspecified or multicast addresses (tests, closed
	// networks). By default they are refused when the request arrives and
	// again when connecting, so DNS rebinding cannot reach the inside.
	AllowPrivateCallbacks bool
	// Lease bounds (CN-036, WS-006): default 10 days, at least 5 minutes, at
	// most 31 days.
	LeaseDefault, LeaseMin, LeaseMax time.Duration
	// Workers bounds the deliveries in flight at once across all callbacks
	// (default 16). Each callback has at most one.
	Workers int
	// MaxAttempts per delivery before it is given up (default 12).
	MaxAttempts int
	// RetryBase and RetryMax shape the exponential backoff with jitter
	// between attempts (defaults 10s and 1h).
	RetryBase, RetryMax time.Duration
	// Timeout bounds each HTTP request to a callback, verification or
	// delivery (default 30s).
	Timeout time.Duration
	// Signature is the X-Hub-Signature algorithm for subscriptions with a
	// secret (WS-003): "sha256" (default) or "sha512".
	Signature string
	// Client sends verifications and deliveries. Default: one built here
	// with Timeout, no proxy, no redirects and the connect-time address
	// guard. A Client given here is used as is: only the request-time check
	// of callbacks applies then.
	Client *http.Client
	// Resolver is used for the request-time check of callback host names
	// and by the default Client's dialer (default net.DefaultResolver).
	Resolver Resolver
	// SweepInterval is how often expired subscriptions are deleted
	// (default 1 minute).
	SweepInterval time.Duration
	// MaxVerifications bounds the subscription requests being verified at
	// once; more are answered 503 with Retry-After (default 64).
	MaxVerifications int
	// MaxSubscriptions and MaxPerTopic cap the live subscriptions, in all
	// and per topic (defaults 10,000 and 1,000): past them a new
	// subscription is denied; renewing one is not.
	MaxSubscriptions, MaxPerTopic int
	Logger                        *slog.Logger
	Now                           func() time.Time
}

// Stats describe the hub's state.
type Stats struct {
	Subscribers map[string]int // live (unexpired) subscriptions per topic
	// Since start: successful deliveries, failed attempts, and deliveries
	// not made: given up (attempts exhausted, 410 Gone) or dropped because
	// their subscription ended meanwhile.
	Delivered, Failed, Dropped uint64
	Pending                    int       // undelivered deliveries
	OldestPending              time.Time // Created of the oldest undelivered delivery; zero if none
}

// Hub is the embedded WebSub hub. Mount it as the http.Handler at HubURL.
type Hub struct {
	o        Options
	db       *store.DB
	log      *slog.Logger
	now      func() time.Time
	client   *http.Client
	resolver Resolver
	idle     func() // closes idle connections of a client built here

	ctx    context.Context // cancelled by Close: stops every goroutine and request
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the hub starts
	once   sync.Once
	done   chan struct{} // closed when wg is done after Close

	pubMu sync.Mutex // serializes Publish with itself and with Start's load
	subMu sync.Mutex // serializes the hub's writes of subscriptions

	mu      sync.Mutex // guards the fields below
	started bool
	closed  bool
	queues  map[string]*queue // per callback
	ready   readyHeap         // idle queues with work, by due time
	busy    int               // deliveries in flight
	pending int               // deliveries queued, in flight included

	// verifyingTopics counts the subscription requests being verified, per
	// topic (Listening).
	verifyingTopics map[string]int

	wake      chan struct{} // nudges the dispatcher (capacity 1)
	verifying chan struct{} // semaphore of verifications

	delivered, failed, dropped atomic.Uint64
	payloads                   payloadCache

	// Test hooks, set before use.
	onVerified func(mode, topic, callback string, confirmed bool)
}

// New checks the options and returns a hub. Call Start to deliver.
func New(o Options) (*Hub, error) {
	var problems []error
	if u, err := url.Parse(o.HubURL); o.HubURL == "" || err != nil || !u.IsAbs() || u.Host == "" {
		problems = append(problems, fmt.Errorf("HubURL %q must be the hub's absolute public URL, e.g. https://rs.example.org/websub", o.HubURL))
	}
	if o.DB == nil {
		problems = append(problems, errors.New("DB is required: pass the open store"))
	}
	if o.ExternalHub != "" {
		if u, err := url.Parse(o.ExternalHub); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			problems = append(problems, fmt.Errorf("ExternalHub %q must be an absolute http(s) URL", o.ExternalHub))
		}
	} else if o.Topic == nil {
		problems = append(problems, errors.New("Topic is required: pass a function that recognizes this source's topic URIs"))
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.LeaseDefault, 10*24*time.Hour)
	def(&o.LeaseMin, 5*time.Minute)
	def(&o.LeaseMax, 31*24*time.Hour)
	def(&o.RetryBase, 10*time.Second)
	def(&o.RetryMax, time.Hour)
	def(&o.Timeout, 30*time.Second)
	def(&o.SweepInterval, time.Minute)
	if o.LeaseMin > o.LeaseMax || o.LeaseDefault < o.LeaseMin || o.LeaseDefault > o.LeaseMax {
		problems = append(problems, fmt.Errorf("leases must satisfy LeaseMin <= LeaseDefault <= LeaseMax (got %s, %s, %s)", o.LeaseMin, o.LeaseDefault, o.LeaseMax))
	}
	if o.LeaseMin < time.Second {
		problems = append(problems, fmt.Errorf("LeaseMin %s is below one second; leases are granted in whole seconds", o.LeaseMin))
	}
	if o.RetryBase > o.RetryMax {
		problems = append(problems, fmt.Errorf("RetryBase %s exceeds RetryMax %s", o.RetryBase, o.RetryMax))
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 12
	}
	if o.MaxSubscriptions <= 0 {
		o.MaxSubscriptions = 10000
	}
	if o.MaxPerTopic <= 0 {
		o.MaxPerTopic = 1000
	}
	if o.MaxVerifications <= 0 {
		o.MaxVerifications = 64
	}
	switch o.Signature {
	case "":
		o.Signature = "sha256"
	case "sha256", "sha512":
	default:
		problems = append(problems, fmt.Errorf("Signature %q: use sha256 or sha512", o.Signature))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("websub: %w", errors.Join(problems...))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{
		o: o, db: o.DB, log: o.Logger.With("component", "websub"), now: o.Now, resolver: o.Resolver,
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
		queues: map[string]*queue{}, wake: make(chan struct{}, 1),
		verifying: make(chan struct{}, o.MaxVerifications),
		payloads:  payloadCache{maxEntries: 16, maxBytes: 64 << 20},
	}
	h.client = o.Client
	if h.client == nil {
		// In external-hub mode the only destination is the operator's URL.
		guard := !o.AllowPrivateCallbacks && o.ExternalHub == ""
		var tr *http.Transport
		h.client, tr = newClient(o.Timeout, o.Workers, guard, o.Resolver)
		h.idle = tr.CloseIdleConnections
	}
	return h, nil
}

// Start loads the deliveries a previous process left undelivered and starts
// the delivery workers and the lease sweeper. Later calls do nothing, as does
// a call after Close.
func (h *Hub) Start() {
	h.pubMu.Lock() // no Publish between loading and queueing: nothing is queued twice
	defer h.pubMu.Unlock()
	h.mu.Lock()
	if h.started || h.closed {
		h.mu.Unlock()
		return
	}
	h.started = true
	h.mu.Unlock()

	var ds []store.Delivery
	err := h.db.View(h.ctx, func(s *store.Snap) error {
		return s.Deliveries(func(d store.Delivery) error { ds = append(ds, d); return nil })
	})
	if err != nil {
		h.log.Error("cannot load undelivered notifications; they stay in the store and go out after the next restart", "err", err)
	}
	h.enqueue(ds)
	if len(ds) > 0 {
		h.log.Info("resuming undelivered notifications", "deliveries", len(ds))
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.wg.Add(2)
		go h.dispatch()
		go h.sweepLoop()
	}
}

// Close stops accepting work, cancels requests in flight (a cancelled
// delivery is not counted as an attempt; it stays owed in the store) and
// waits for every goroutine of the hub, or until ctx ends. Safe to call more
// than once.
func (h *Hub) Close(ctx context.Context) error {
	h.once.Do(func() {
		h.mu.Lock()
		h.closed = true // no goroutine is added from outside after this
		h.mu.Unlock()
		h.cancel()
		go func() { // ends when the hub's goroutines have, which cancel makes prompt
			h.wg.Wait()
			if h.idle != nil {
				h.idle()
			}
			close(h.done)
		}()
	})
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("websub: close: deliveries still stopping: %w", ctx.Err())
	}
}

// Publish stores one delivery of payload per live subscription of topic (or,
// with ExternalHub, one to the external hub) and wakes the workers. It
// returns after the store commit: what it owes survives a crash. Publish
// calls are serialized.
func (h *Hub) Publish(ctx context.Context, topic string, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("websub: publish on %s: %w", topic, err)
	}
	h.pubMu.Lock()
	defer h.pubMu.Unlock()
	h.mu.Lock()
	closed, started := h.closed, h.started
	h.mu.Unlock()
	if closed {
		return fmt.Errorf("websub: publish on %s: %w", topic, ErrClosed)
	}
	now := h.now()
	var callbacks []string
	if h.o.ExternalHub != "" {
		callbacks = []string{h.o.ExternalHub}
	} else {
		err := h.db.View(ctx, func(s *store.Snap) error {
			return s.Subscriptions(topic, func(sub store.Subscription) error {
				if sub.Expires.After(now) { // never to an expired lease (WS-006)
					callbacks = append(callbacks, sub.Callback)
				}
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("websub: publish on %s: read subscriptions: %w", topic, err)
		}
	}
	if len(callbacks) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("websub: publish on %s: %w", topic, err)
	}
	n, ds, err := h.db.PublishDeliveries(store.Notification{
		Topic: topic, ContentType: "application/xml", Payload: payload, Created: now,
	}, callbacks)
	if err != nil {
		return fmt.Errorf("websub: publish on %s: %w", topic, err)
	}
	h.payloads.put(n.ID, n.ContentType, slices.Clone(payload))
	if started { // before Start, Start loads them from the store
		h.enqueue(ds)
	}
	return nil
}

// Stats reports subscriptions, counters and the backlog.
func (h *Hub) Stats() Stats {
	st := Stats{
		Subscribers: map[string]int{},
		Delivered:   h.delivered.Load(), Failed: h.failed.Load(), Dropped: h.dropped.Load(),
	}
	h.mu.Lock()
	st.Pending = h.pending
	for _, q := range h.queues {
		// IDs follow Created, so a queue's head is its oldest delivery.
		if len(q.items) > 0 && (st.OldestPending.IsZero() || q.items[0].Created.Before(st.OldestPending)) {
			st.OldestPending = q.items[0].Created
		}
	}
	h.mu.Unlock()
	now := h.now()
	// Stats has no context of its own; the read is short.
	err := h.db.View(context.Background(), func(s *store.Snap) error {
		return s.Subscriptions("", func(sub store.Subscription) error {
			if sub.Expires.After(now) {
				st.Subscribers[sub.Topic]++
			}
			return nil
		})
	})
	if err != nil {
		h.log.Warn("stats: cannot read subscriptions", "err", err)
	}
	return st
}

// Listening says, for the topics of this source, whether a notification
// would reach anyone: through an external hub always (it knows its
// subscribers, this source does not); through this hub, when the topic has
// a live subscription or a subscription request being verified (so the
// notifications around a new subscription are built as they always were:
// Publish still sends each to the subscriptions stored when it runs, and a
// subscriber whose first notification starts after what it has applied
// reads the Change Lists for the gap). The answer is as of the call.
func (h *Hub) Listening(ctx context.Context) (func(topic string) bool, error) {
	if h.o.ExternalHub != "" {
		return func(string) bool { return true }, nil
	}
	topics := map[string]bool{}
	// Requests first: one verified meanwhile is counted here until its
	// subscription is stored, then read below.
	h.mu.Lock()
	for t := range h.verifyingTopics {
		topics[t] = true
	}
	h.mu.Unlock()
	now := h.now()
	err := h.db.View(ctx, func(s *store.Snap) error {
		return s.Subscriptions("", func(sub store.Subscription) error {
			if sub.Expires.After(now) {
				topics[sub.Topic] = true
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("websub: read subscriptions: %w", err)
	}
	return func(t string) bool { return topics[t] }, nil
}

// asking counts a subscription request being verified (d +1 as it is
// accepted, -1 once verified or refused).
func (h *Hub) asking(req request, d int) {
	if req.mode != "subscribe" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.verifyingTopics == nil {
		h.verifyingTopics = map[string]int{}
	}
	if h.verifyingTopics[req.topic] += d; h.verifyingTopics[req.topic] <= 0 {
		delete(h.verifyingTopics, req.topic)
	}
}

// Sweep deletes the subscriptions whose lease has ended (WS-006: the hub
// enforces expiry) and returns how many it deleted. Deliveries still owed to
// them are dropped when their turn comes. The sweeper calls it every
// SweepInterval.
func (h *Hub) Sweep(ctx context.Context) (int, error) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	now := h.now()
	var expired []store.Subscription
	err := h.db.View(ctx, func(s *store.Snap) error {
		return s.Subscriptions("", func(sub store.Subscription) error {
			if !sub.Expires.After(now) {
				expired = append(expired, sub)
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("websub: sweep expired subscriptions: %w", err)
	}
	for i, sub := range expired {
		if err := ctx.Err(); err != nil {
			return i, fmt.Errorf("websub: sweep expired subscriptions: %w", err)
		}
		if err := h.db.DeleteSubscription(sub.Topic, sub.Callback); err != nil {
			return i, fmt.Errorf("websub: sweep expired subscriptions: %w", err)
		}
		h.log.Info("subscription expired", "topic", sub.Topic, "callback", sub.Callback, "expires", sub.Expires)
	}
	return len(expired), nil
}

func (h *Hub) sweepLoop() {
	defer h.wg.Done()
	t := time.NewTicker(h.o.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
			if _, err := h.Sweep(h.ctx); err != nil && h.ctx.Err() == nil {
				h.log.Warn("lease sweep failed; it runs again at the next interval", "err", err)
			}
		}
	}
}

// goOwned starts fn as a goroutine of the hub unless the hub is closed.
func (h *Hub) goOwned(fn func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn()
	}()
	return true
}

// payloadCache keeps the payloads of the newest notifications so a fan-out
// reads its payload from the store once at most, not once per delivery.
type payloadCache struct {
	mu         sync.Mutex
	entries    []cached // most recently used last
	bytes      int
	maxEntries int
	maxBytes   int
}

type cached struct {
	id          uint64
	contentType string
	payload     []byte
}

func (c *payloadCache) get(id uint64) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.id == id {
			c.entries = append(append(c.entries[:i:i], c.entries[i+1:]...), e)
			return e, true
		}
	}
	return cached{}, false
}

func (c *payloadCache) put(id uint64, contentType string, payload []byte) {
	if len(payload) > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.id == id {
			return
		}
	}
	c.entries = append(c.entries, cached{id, contentType, payload})
	c.bytes += len(payload)
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		c.bytes -= len(c.entries[0].payload)
		c.entries = slices.Delete(c.entries, 0, 1)
	}
}
