package mirror

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
)

// Following a source: a run every FollowOptions.Every, and, for each set
// that offers Change Notification, a WebSub subscription at its hub
// (change-notification.md CN-032..CN-039). Payloads are applied as they
// come, in the order they come, by the same code that applies Change
// Lists; a payload whose from is later than what the copy has applied is a
// gap (a notification lost, or the subscription lapsed), and the set's
// Change List Index is read to close it. Leases are renewed at four fifths
// of their length; a subscription that fails falls back to the runs.

// FollowOptions configure Follow.
type FollowOptions struct {
	Every time.Duration // between pull runs (default 10 minutes)
	// Listen is where the callback server listens (e.g. ":8081"); "" means
	// no subscriptions, pull runs only.
	Listen string
	// CallbackURL is the callback server's public URL, as hubs reach it
	// (default: http:// and the listener's address).
	CallbackURL string
	// Lease asked for (default 1 day; the hub decides).
	Lease time.Duration
}

// event is work for the follow loop: a notification, or a set to pull.
type event struct {
	set     *Set
	payload *rsync.Document
	pull    bool
}

// subscription is one set's WebSub subscription.
type subscription struct {
	set    Set
	path   string // the callback URL's path
	base   string // the callback server's URL
	secret string

	mu       sync.Mutex
	asked    time.Time // last subscription request
	verified time.Time // last verification of intent
	lease    time.Duration
}

// Follow keeps the copy up to date until ctx ends: a run at once and every
// Every, and notifications as they come where a set offers them.
func (m *Mirror) Follow(ctx context.Context, start string, o FollowOptions) error {
	if o.Every <= 0 {
		o.Every = 10 * time.Minute
	}
	if o.Lease <= 0 {
		o.Lease = 24 * time.Hour
	}
	m.noteRun(m.Run(ctx, start))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	events := make(chan event, 64)
	var subs map[string]*subscription
	var callbacks sync.WaitGroup
	defer callbacks.Wait()
	if o.Listen != "" && len(m.sets) > 0 {
		subs = m.subscriptions()
		srv, base, err := m.listen(ctx, o, m.callbackHandler(subs, events), &callbacks)
		if err != nil {
			return err
		}
		defer srv.Close()
		m.mu.Lock()
		m.callback = base
		m.mu.Unlock()
		m.log.Info("callback server listening; /status and /metrics there too", "url", base)
		for _, sub := range subs {
			sub.base = base
			m.subscribe(ctx, sub, o.Lease)
		}
		// Changes between the run and the subscriptions: pull once more.
		events <- event{pull: true}
	}
	return m.followLoop(ctx, start, o, subs, events)
}

// followLoop applies events one at a time, runs on the schedule, and
// renews leases.
func (m *Mirror) followLoop(ctx context.Context, start string, o FollowOptions, subs map[string]*subscription, events chan event) error {
	tick := time.NewTicker(o.Every)
	defer tick.Stop()
	renew := time.NewTicker(time.Minute)
	defer renew.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			m.noteRun(m.Run(ctx, start))
		case ev := <-events:
			if ev.pull { // a run like the scheduled ones
				m.noteRun(m.Run(ctx, start))
				continue
			}
			if err := m.apply(ctx, start, ev); err != nil && ctx.Err() == nil {
				m.log.Error("notification not applied; the next run catches up", "err", err)
			}
		case <-renew.C:
			m.renew(ctx, subs, o.Lease)
		}
	}
}

// CallbackURL is the callback server's URL once Follow listens ("" before).
func (m *Mirror) CallbackURL() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.callback
}

// noteRun keeps a run's end and error for /status, and logs the error.
func (m *Mirror) noteRun(err error) {
	m.mu.Lock()
	m.lastRun, m.lastErr = m.now().UTC(), ""
	m.runs++
	if err != nil {
		m.lastErr = err.Error()
	}
	m.mu.Unlock()
	if err != nil && !errors.Is(err, context.Canceled) {
		m.log.Error("mirror run failed; trying again at the next one", "err", err)
	}
}

// apply handles one event: a pull of everything, or a payload.
func (m *Mirror) apply(ctx context.Context, start string, ev event) error {
	if ev.pull || ev.set == nil {
		return m.Run(ctx, start)
	}
	st, err := m.state.Set(ev.set.CapabilityList)
	if err != nil {
		return err
	}
	r := &setRun{m: m, set: *ev.set, st: st, batch: m.state.Batch(), live: -1}
	p := ev.payload
	if p.MD.From.After(r.st.Through) {
		// A gap: changes between what the copy has and this payload were
		// never notified to it. The Change Lists have them.
		m.log.Info("notification gap: reading the Change Lists", "set", ev.set.CapabilityList,
			"applied_through", r.st.Through, "payload_from", p.MD.From)
		if err := r.changes(ctx); err != nil {
			return err
		}
	}
	cs := newChangeSet()
	for _, e := range p.Entries {
		r.addChange(cs, ev.set.Notification, e)
	}
	if err := r.applyChanges(ctx, ev.set.Notification, cs, time.Time{}); err != nil {
		return err
	}
	if p.MD.Until.After(r.st.Through) {
		r.st.Through = p.MD.Until
	}
	return r.commit()
}

// listen starts the callback server; it stops when ctx ends.
func (m *Mirror) listen(ctx context.Context, o FollowOptions, h http.Handler, wg *sync.WaitGroup) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("callback listener: %w", err)
	}
	base := strings.TrimRight(o.CallbackURL, "/")
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, Handler: h}
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("callback server stopped", "err", err)
		}
	})
	context.AfterFunc(ctx, func() { srv.Close() })
	return srv, base, nil
}

// subscriptions prepares a subscription, with its own callback path and
// secret, for every set that offers Change Notification.
func (m *Mirror) subscriptions() map[string]*subscription {
	subs := map[string]*subscription{}
	for _, s := range m.sets {
		if s.Notification == "" || s.Hub == "" {
			continue
		}
		sum := sha256.Sum256([]byte(s.CapabilityList))
		sub := &subscription{set: s, path: "/callback/" + hex.EncodeToString(sum[:8]), secret: rand.Text()}
		subs[sub.path] = sub
	}
	return subs
}

// subscribe asks the hub for a subscription (CN-033); the hub verifies it
// at the callback, which records the lease. A set whose subscription fails
// is followed by the runs until a renewal succeeds.
func (m *Mirror) subscribe(ctx context.Context, sub *subscription, lease time.Duration) {
	sub.mu.Lock()
	sub.asked = time.Now()
	sub.mu.Unlock()
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {sub.set.Notification}, "hub.callback": {sub.base + sub.path},
		"hub.secret": {sub.secret}, "hub.lease_seconds": {strconv.Itoa(int(lease / time.Second))}}
	if err := m.postHub(ctx, sub.set.Hub, form); err != nil && ctx.Err() == nil {
		m.log.Warn("cannot subscribe; the set is followed by the runs until a renewal succeeds", "set", sub.set.CapabilityList, "hub", sub.set.Hub, "err", err)
	}
}

// postHub sends a subscription request to a hub.
func (m *Mirror) postHub(ctx context.Context, hub string, form url.Values) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hub, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", m.f.ua)
	for k, vs := range m.f.headers {
		req.Header[k] = vs
	}
	resp, err := m.f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("hub answered %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// renew resubscribes where four fifths of the lease have passed, and
// where a request got no verification within a minute.
func (m *Mirror) renew(ctx context.Context, subs map[string]*subscription, lease time.Duration) {
	now := time.Now()
	for _, sub := range subs {
		sub.mu.Lock()
		quiet := now.Sub(sub.asked) > time.Minute
		due := quiet && (sub.verified.IsZero() || now.Sub(sub.verified) > sub.lease*4/5)
		sub.mu.Unlock()
		if due {
			m.subscribe(ctx, sub, lease)
		}
	}
}

// callbackHandler answers the hub: verification of intent (echo the
// challenge for a subscription this mirror asked for) and notifications
// (checked against the secret, parsed, queued); and the operator: /status
// (JSON) and /metrics (Prometheus text).
func (m *Mirror) callbackHandler(subs map[string]*subscription, events chan event) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/status":
			m.serveStatus(w, subs)
			return
		case "/metrics":
			m.serveMetrics(w)
			return
		}
		sub, ok := subs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet:
			m.verify(w, r, sub)
		case http.MethodPost:
			m.receive(w, r, sub, events)
		default:
			http.Error(w, "GET (verification) or POST (notification)", http.StatusMethodNotAllowed)
		}
	})
}

// verify answers a verification of intent (CN-035, CN-038).
func (m *Mirror) verify(w http.ResponseWriter, r *http.Request, sub *subscription) {
	q := r.URL.Query()
	if q.Get("hub.topic") != sub.set.Notification || q.Get("hub.mode") != "subscribe" {
		http.NotFound(w, r) // not a subscription this mirror wants
		return
	}
	lease, _ := strconv.Atoi(q.Get("hub.lease_seconds"))
	sub.mu.Lock()
	sub.verified, sub.lease = time.Now(), time.Duration(max(lease, 300))*time.Second
	sub.mu.Unlock()
	m.log.Info("subscribed", "topic", sub.set.Notification, "lease_seconds", lease)
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, q.Get("hub.challenge"))
}

// receive takes a notification: a payload whose signature does not match
// the secret is ignored (and still answered 2xx, as WebSub asks, so a
// forger learns nothing).
func (m *Mirror) receive(w http.ResponseWriter, r *http.Request, sub *subscription, events chan event) {
	body, err := io.ReadAll(io.LimitReader(r.Body, m.f.maxDoc+1))
	if err != nil || int64(len(body)) > m.f.maxDoc {
		http.Error(w, "payload unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	if !validSignature(r.Header.Get("X-Hub-Signature"), sub.secret, body) {
		m.quirk(sub.set.Notification, "a notification without a valid X-Hub-Signature, ignored")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	doc, err := rsync.Parse(strings.NewReader(string(body)))
	if err != nil || doc.MD.Capability != "change-notification" {
		m.quirk(sub.set.Notification, "a notification that is not a change-notification document, ignored")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	set := sub.set
	select {
	case events <- event{set: &set, payload: doc}:
		w.WriteHeader(http.StatusAccepted)
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
		// The loop is busy for long: the hub retries later.
		http.Error(w, "busy; retry", http.StatusServiceUnavailable)
	}
}

// validSignature checks X-Hub-Signature: method=hex HMAC of the body.
func validSignature(header, secret string, body []byte) bool {
	method, sig, ok := strings.Cut(header, "=")
	if !ok {
		return false
	}
	var mac hash.Hash
	switch method {
	case "sha1":
		mac = hmac.New(sha1.New, []byte(secret))
	case "sha256":
		mac = hmac.New(sha256.New, []byte(secret))
	case "sha384":
		mac = hmac.New(sha512.New384, []byte(secret))
	case "sha512":
		mac = hmac.New(sha512.New, []byte(secret))
	default:
		return false
	}
	mac.Write(body)
	want, err := hex.DecodeString(sig)
	return err == nil && hmac.Equal(mac.Sum(nil), want)
}

// Status is what a following mirror reports at /status.
type Status struct {
	Counts        Counts               `json:"counts"`
	Runs          int                  `json:"runs"` // whole runs since start: the first, the scheduled ones, the pull after subscribing
	LastRun       time.Time            `json:"last_run,omitzero"`
	LastError     string               `json:"last_error,omitempty"`
	Subscriptions []SubscriptionStatus `json:"subscriptions"`
}

// SubscriptionStatus is one set's subscription.
type SubscriptionStatus struct {
	Topic    string    `json:"topic"`
	Hub      string    `json:"hub"`
	Verified time.Time `json:"verified,omitzero"`
	Expires  time.Time `json:"expires,omitzero"`
}

func (m *Mirror) serveStatus(w http.ResponseWriter, subs map[string]*subscription) {
	m.mu.Lock()
	st := Status{Counts: m.counts, Runs: m.runs, LastRun: m.lastRun, LastError: m.lastErr}
	m.mu.Unlock()
	for _, sub := range subs {
		sub.mu.Lock()
		ss := SubscriptionStatus{Topic: sub.set.Notification, Hub: sub.set.Hub, Verified: sub.verified}
		if !sub.verified.IsZero() {
			ss.Expires = sub.verified.Add(sub.lease)
		}
		sub.mu.Unlock()
		st.Subscriptions = append(st.Subscriptions, ss)
	}
	slices.SortFunc(st.Subscriptions, func(a, b SubscriptionStatus) int { return strings.Compare(a.Topic, b.Topic) })
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(st)
}

// serveMetrics writes the counts in the Prometheus text format.
func (m *Mirror) serveMetrics(w http.ResponseWriter) {
	c := m.Counts()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	for _, row := range []struct {
		name, help string
		v          int64
	}{
		{"rsbridge_mirror_resources_from_dumps_total", "Resources taken from Resource and Change Dump packages.", c.FromDump},
		{"rsbridge_mirror_resources_fetched_total", "Resources taken by GET.", c.Fetched},
		{"rsbridge_mirror_resources_shared_total", "Resources another set of the source held already.", c.Shared},
		{"rsbridge_mirror_created_total", "Resources the copy gained.", c.Created},
		{"rsbridge_mirror_updated_total", "Resources the copy changed.", c.Updated},
		{"rsbridge_mirror_deleted_total", "Resources the copy removed (-delete).", c.Deleted},
		{"rsbridge_mirror_failed_total", "Resources that could not be taken (retried by the next run).", c.Failed},
		{"rsbridge_mirror_superseded_total", "Resources not as their list described them (changed since, or gone): left to the later change.", c.Superseded},
		{"rsbridge_mirror_bytes_total", "Bytes written to the copy.", c.Bytes},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", row.name, row.help, row.name, row.name, row.v)
	}
}
