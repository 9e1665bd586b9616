package websub

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestVerifyIntent: a well-formed request is answered 202 at once; the hub
// then GETs the callback with mode, topic, a fresh challenge and the granted
// lease, keeping the callback's own query (WS-007), and stores the
// subscription only when the subscriber echoes the challenge with a 2xx
// (CN-038, WS-002, WS-006).
func TestVerifyIntent(t *testing.T) {
	for _, tc := range []struct {
		answer    string
		confirmed bool
	}{
		{"echo", true},
		{"wrong", false}, // 2xx without the challenge
		{"404", false},   // the subscriber's "no"
		{"500", false},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			clk := newClock()
			db := openStore(t, "")
			h, ch := newHub(t, db, func(o *Options) { o.Now = clk.Now })
			sub := newSubscriber(t)
			sub.set(func(s *subscriber) { s.verify = tc.answer })
			cb := sub.url("/cb/7f3a?id=7&x=a%20b")
			if w := send(h, form("subscribe", topicA, cb, "hub.lease_seconds", "3600", "hub.secret", "s3cret")); w.Code != http.StatusAccepted {
				t.Fatalf("HTTP %d %s, want 202", w.Code, w.Body)
			}
			g := sub.nextGet(t)
			if g.path != "/cb/7f3a" || g.query.Get("id") != "7" || g.query.Get("x") != "a b" {
				t.Errorf("callback's own query not preserved: %s %v", g.path, g.query)
			}
			if g.query.Get("hub.mode") != "subscribe" || g.query.Get("hub.topic") != topicA || g.query.Get("hub.lease_seconds") != "3600" || len(g.query.Get("hub.challenge")) < 16 {
				t.Errorf("verification query %v", g.query)
			}
			if v := verified(t, ch); v.confirmed != tc.confirmed || v.mode != "subscribe" {
				t.Fatalf("verification %+v, want confirmed=%v", v, tc.confirmed)
			}
			s := subscription(t, db, topicA, cb)
			if !tc.confirmed {
				if s != nil {
					t.Fatalf("unconfirmed subscription stored: %+v", s)
				}
				return
			}
			if s == nil || s.Lease != 3600 || !s.Expires.Equal(clk.Now().Add(time.Hour)) || s.Secret != "s3cret" || !s.Created.Equal(clk.Now()) {
				t.Fatalf("stored subscription %+v", s)
			}
			if got := h.Stats().Subscribers; got[topicA] != 1 || len(got) != 1 {
				t.Fatalf("Stats.Subscribers = %v", got)
			}
		})
	}
}

// TestChallengesAreSingleUse: every verification has its own challenge.
func TestChallengesAreSingleUse(t *testing.T) {
	h, ch := newHub(t, openStore(t, ""), nil)
	sub := newSubscriber(t)
	seen := map[string]bool{}
	for i := range 5 {
		subscribe(t, h, ch, topicA, sub.url("/cb"))
		c := sub.nextGet(t).query.Get("hub.challenge")
		if seen[c] {
			t.Fatalf("challenge %q used twice (request %d)", c, i)
		}
		seen[c] = true
	}
}

// TestLeaseGranted: the granted lease is clamped to [LeaseMin, LeaseMax]
// and defaults to LeaseDefault (CN-036, WS-006).
func TestLeaseGranted(t *testing.T) {
	for _, tc := range []struct{ asked, granted string }{
		{"", "864000"},             // default: 10 days
		{"0", "300"},               // at least 5 minutes
		{"3600", "3600"},           // honoured
		{"99999999999", "2678400"}, // at most 31 days
		{"9223372036854775807", "2678400"},
	} {
		t.Run(tc.asked, func(t *testing.T) {
			h, ch := newHub(t, openStore(t, ""), nil)
			sub := newSubscriber(t)
			var kv []string
			if tc.asked != "" {
				kv = []string{"hub.lease_seconds", tc.asked}
			}
			subscribe(t, h, ch, topicA, sub.url("/cb"), kv...)
			if got := sub.nextGet(t).query.Get("hub.lease_seconds"); got != tc.granted {
				t.Fatalf("granted %s, want %s", got, tc.granted)
			}
		})
	}
}

// TestUnknownTopicDenied: a subscription to a topic this source does not
// publish is accepted (the answer must not depend on the outcome, WS-004)
// and then denied with hub.mode=denied (WS-005); nothing is stored.
func TestUnknownTopicDenied(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, nil)
	sub := newSubscriber(t)
	topic := "https://rs.example.org/nope/change/"
	if w := send(h, form("subscribe", topic, sub.url("/cb?k=v"))); w.Code != http.StatusAccepted {
		t.Fatalf("HTTP %d %s, want 202", w.Code, w.Body)
	}
	g := sub.nextGet(t)
	if g.query.Get("hub.mode") != "denied" || g.query.Get("hub.topic") != topic || g.query.Get("hub.reason") == "" || g.query.Get("k") != "v" || g.query.Has("hub.challenge") {
		t.Fatalf("denial query %v", g.query)
	}
	if v := verified(t, ch); v.mode != "denied" || v.confirmed {
		t.Fatalf("verification %+v", v)
	}
	if s := subscription(t, db, topic, sub.url("/cb?k=v")); s != nil {
		t.Fatalf("denied subscription stored: %+v", s)
	}
}

// TestMalformedRequests: malformed requests get a 4xx with a plain-text
// reason, and their callback is never contacted.
func TestMalformedRequests(t *testing.T) {
	sub := newSubscriber(t)
	cb := sub.url("/cb")
	h, _ := newHub(t, openStore(t, ""), nil)
	for _, tc := range []struct {
		name   string
		method string
		ctype  string
		body   string
		status int
		reason string
	}{
		{"GET", http.MethodGet, "", "", 405, "POST"},
		{"JSON body", "", "application/json", `{}`, 415, "x-www-form-urlencoded"},
		{"fat ping", "", "application/xml", `<urlset/>`, 415, "no publications"},
		{"no mode", "", "", url.Values{"hub.topic": {topicA}, "hub.callback": {cb}}.Encode(), 400, "hub.mode is missing"},
		{"publish mode", "", "", form("publish", topicA, cb).Encode(), 400, "hub.mode \"publish\""},
		{"no topic", "", "", url.Values{"hub.mode": {"subscribe"}, "hub.callback": {cb}}.Encode(), 400, "hub.topic is missing"},
		{"relative topic", "", "", form("subscribe", "/r/change/", cb).Encode(), 400, "hub.topic"},
		{"topic not http", "", "", form("subscribe", "urn:x:y", cb).Encode(), 400, "hub.topic"},
		{"no callback", "", "", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topicA}}.Encode(), 400, "hub.callback is missing"},
		{"relative callback", "", "", form("subscribe", topicA, "/cb").Encode(), 400, "not an absolute URL"},
		{"ftp callback", "", "", form("subscribe", topicA, "ftp://example.org/cb").Encode(), 400, "scheme \"ftp\""},
		{"callback without host", "", "", form("subscribe", topicA, "http:///cb").Encode(), 400, "no host"},
		{"secret 200 bytes", "", "", form("subscribe", topicA, cb, "hub.secret", strings.Repeat("s", 200)).Encode(), 400, "shorter than 200"},
		{"lease not a number", "", "", form("subscribe", topicA, cb, "hub.lease_seconds", "ten days").Encode(), 400, "hub.lease_seconds"},
		{"lease negative", "", "", form("subscribe", topicA, cb, "hub.lease_seconds", "-5").Encode(), 400, "hub.lease_seconds"},
		{"lease fraction", "", "", form("subscribe", topicA, cb, "hub.lease_seconds", "1.5").Encode(), 400, "hub.lease_seconds"},
		{"broken form", "", "", "hub.mode=%zz", 400, "not a valid form"},
		{"huge form", "", "", "hub.secret=" + strings.Repeat("x", maxFormBytes), 413, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			r := httptest.NewRequest(method, testHub, strings.NewReader(tc.body))
			ct := tc.ctype
			if ct == "" {
				ct = "application/x-www-form-urlencoded"
			}
			r.Header.Set("Content-Type", ct)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.reason) || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
				t.Fatalf("HTTP %d %q (%s), want %d containing %q", w.Code, w.Body, w.Header().Get("Content-Type"), tc.status, tc.reason)
			}
		})
	}
	// A secret of 199 bytes is fine.
	if w := send(h, form("subscribe", topicA, cb, "hub.secret", strings.Repeat("s", 199))); w.Code != http.StatusAccepted {
		t.Fatalf("199-byte secret: HTTP %d %s", w.Code, w.Body)
	}
	sub.nextGet(t)
	if n, _ := sub.counts(); n != 1 {
		t.Fatalf("the callback got %d requests, want only the one verification of the valid request", n)
	}
}

// fakeResolver maps names to addresses; after is used from call `switchAt` on.
type fakeResolver struct {
	mu       sync.Mutex
	calls    int
	names    map[string][]netip.Addr
	after    map[string][]netip.Addr
	switchAt int
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	m := r.names
	if r.after != nil && r.calls >= r.switchAt {
		m = r.after
	}
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// noNetwork is a RoundTripper that records requests and sends none.
type noNetwork struct {
	mu   sync.Mutex
	urls []string
}

func (n *noNetwork) RoundTrip(r *http.Request) (*http.Response, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.urls = append(n.urls, r.URL.String())
	return nil, errors.New("test: no network")
}

// TestPrivateCallbacksRefused: unless AllowPrivateCallbacks, callbacks on
// internal addresses (literal, or names resolving to one) and non-http(s)
// callbacks are refused with 400 and never contacted.
func TestPrivateCallbacksRefused(t *testing.T) {
	res := &fakeResolver{names: map[string][]netip.Addr{
		"internal.example":  addrs("192.168.1.5"),
		"mixed.example":     addrs("203.0.113.7", "10.0.0.1"),
		"mapped.example":    addrs("::ffff:127.0.0.1"),
		"public.example":    addrs("203.0.113.7"),
		"public6.example":   addrs("2001:db8::7"),
		"metadata.example":  addrs("169.254.169.254"),
		"localhost.example": addrs("127.0.0.1"),
	}}
	rt := &noNetwork{}
	h, ch := newHub(t, openStore(t, ""), func(o *Options) {
		o.AllowPrivateCallbacks = false
		o.Resolver = res
		o.Client = &http.Client{Transport: rt}
	})
	for _, tc := range []struct {
		callback string
		status   int
	}{
		{"http://127.0.0.1:9/cb", 400},
		{"http://10.1.2.3/cb", 400},
		{"http://172.16.0.1/cb", 400},
		{"http://192.168.0.1/cb", 400},
		{"http://169.254.169.254/latest/meta-data", 400},
		{"http://[::1]/cb", 400},
		{"http://[fe80::1%25eth0]/cb", 400},
		{"http://[fc00::1]/cb", 400},
		{"http://[::ffff:127.0.0.1]/cb", 400},
		{"http://0.0.0.0/cb", 400},
		{"http://224.0.0.1/cb", 400},
		{"http://100.64.0.1/cb", 400},
		{"http://localhost:8080/cb", 400},
		{"http://LOCALHOST./cb", 400},
		{"http://app.localhost/cb", 400},
		{"ftp://public.example/cb", 400},
		{"javascript:alert(1)", 400},
		{"http://internal.example/cb", 400},
		{"http://mixed.example/cb", 400},
		{"http://mapped.example/cb", 400},
		{"http://metadata.example/cb", 400},
		{"http://localhost.example/cb", 400},
		{"http://unknown.example/cb", 400},
		{"https://public.example/cb", 202},
		{"https://public6.example/cb", 202},
		{"https://203.0.113.9/cb", 202},
	} {
		t.Run(tc.callback, func(t *testing.T) {
			w := send(h, form("subscribe", topicA, tc.callback))
			if w.Code != tc.status {
				t.Fatalf("HTTP %d %q, want %d", w.Code, w.Body, tc.status)
			}
			if tc.status == 202 {
				if v := verified(t, ch); v.confirmed {
					t.Fatalf("verification without network confirmed: %+v", v)
				}
			}
		})
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.urls) != 3 {
		t.Fatalf("requests attempted: %v; want only the three verifications of public callbacks", rt.urls)
	}
	for _, u := range rt.urls {
		if !strings.Contains(u, "public") && !strings.Contains(u, "203.0.113.9") {
			t.Fatalf("a refused callback was contacted: %s", u)
		}
	}
}

// TestUnsubscribe: an unsubscribe is verified with hub.mode=unsubscribe
// (CN-042) and, once confirmed, stops deliveries; an unconfirmed one
// changes nothing (WS-002).
func TestUnsubscribe(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, nil)
	h.Start()
	sub := newSubscriber(t)
	cb := sub.url("/cb")
	subscribe(t, h, ch, topicA, cb)
	sub.nextGet(t)

	sub.set(func(s *subscriber) { s.unsub = "404" })
	if w := send(h, form("unsubscribe", topicA, cb)); w.Code != http.StatusAccepted {
		t.Fatalf("HTTP %d %s", w.Code, w.Body)
	}
	g := sub.nextGet(t)
	if g.query.Get("hub.mode") != "unsubscribe" || g.query.Get("hub.topic") != topicA || g.query.Has("hub.lease_seconds") || g.query.Get("hub.challenge") == "" {
		t.Fatalf("unsubscribe verification %v", g.query)
	}
	if v := verified(t, ch); v.confirmed {
		t.Fatalf("refused unsubscribe confirmed: %+v", v)
	}
	if subscription(t, db, topicA, cb) == nil {
		t.Fatal("a refused unsubscribe removed the subscription")
	}

	sub.set(func(s *subscriber) { s.unsub = "echo" })
	send(h, form("unsubscribe", topicA, cb))
	sub.nextGet(t)
	if v := verified(t, ch); !v.confirmed || v.mode != "unsubscribe" {
		t.Fatalf("unsubscribe %+v", v)
	}
	if s := subscription(t, db, topicA, cb); s != nil {
		t.Fatalf("subscription kept after unsubscribe: %+v", s)
	}
	if err := h.Publish(context.Background(), topicA, []byte("<urlset/>")); err != nil {
		t.Fatal(err)
	}
	if ds := deliveries(t, db); len(ds) != 0 || h.Stats().Pending != 0 {
		t.Fatalf("a delivery was queued after unsubscribe: %+v", ds)
	}
}

// TestLeaseExpiry: once the lease is over, Publish no longer fans out to the
// subscription, the sweeper deletes it, and a delivery queued before the end
// of the lease is dropped rather than sent (WS-006).
func TestLeaseExpiry(t *testing.T) {
	clk := newClock()
	db := openStore(t, "")
	h, ch := newHub(t, db, func(o *Options) { o.Now = clk.Now })
	sub := newSubscriber(t)
	cb := sub.url("/cb")
	subscribe(t, h, ch, topicA, cb, "hub.lease_seconds", "300")

	// Queued while the lease runs (the hub is not started yet), sent after.
	if err := h.Publish(context.Background(), topicA, []byte("<urlset/>")); err != nil {
		t.Fatal(err)
	}
	if ds := deliveries(t, db); len(ds) != 1 {
		t.Fatalf("deliveries %+v", ds)
	}
	clk.Add(300 * time.Second)
	if err := h.Publish(context.Background(), topicA, []byte("<urlset/>")); err != nil {
		t.Fatal(err)
	}
	if ds := deliveries(t, db); len(ds) != 1 {
		t.Fatalf("Publish fanned out to an expired subscription: %+v", ds)
	}
	if got := h.Stats().Subscribers; len(got) != 0 {
		t.Fatalf("Stats.Subscribers counts an expired subscription: %v", got)
	}
	h.Start()
	waitFor(t, "the stale delivery to be dropped", func() bool { return h.Stats().Dropped == 1 })
	if _, posts := sub.counts(); posts != 0 {
		t.Fatalf("%d deliveries sent after the lease ended", posts)
	}
	if ds := deliveries(t, db); len(ds) != 0 {
		t.Fatalf("deliveries left %+v", ds)
	}
	if n, err := h.Sweep(context.Background()); n != 1 || err != nil {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if s := subscription(t, db, topicA, cb); s != nil {
		t.Fatalf("expired subscription kept: %+v", s)
	}
}

// TestRenewal: subscribing again renews the lease from the time of the new
// verification and replaces the secret, keeping Created.
func TestRenewal(t *testing.T) {
	clk := newClock()
	t0 := clk.Now()
	db := openStore(t, "")
	h, ch := newHub(t, db, func(o *Options) { o.Now = clk.Now })
	sub := newSubscriber(t)
	cb := sub.url("/cb")
	subscribe(t, h, ch, topicA, cb, "hub.lease_seconds", "300", "hub.secret", "old")
	clk.Add(200 * time.Second)
	subscribe(t, h, ch, topicA, cb, "hub.lease_seconds", "600", "hub.secret", "new")
	s := subscription(t, db, topicA, cb)
	if s == nil || !s.Expires.Equal(t0.Add(800*time.Second)) || s.Lease != 600 || s.Secret != "new" || !s.Created.Equal(t0) {
		t.Fatalf("renewed subscription %+v", s)
	}
	clk.Add(200 * time.Second) // past the first lease, inside the second
	h.Start()
	if err := h.Publish(context.Background(), topicA, []byte("<urlset/>")); err != nil {
		t.Fatal(err)
	}
	d := sub.next(t)
	if got, want := d.header.Get("X-Hub-Signature"), sign("sha256", "new", d.body); got != want {
		t.Fatalf("signature %q, want %q (made with the renewed secret)", got, want)
	}
	if n, err := h.Sweep(context.Background()); n != 0 || err != nil {
		t.Fatalf("Sweep = %d, %v; the renewed subscription is live", n, err)
	}
}

// TestExternalHubRefusesSubscriptions: with an external hub, the endpoint
// points subscribers there.
func TestExternalHubRefusesSubscriptions(t *testing.T) {
	ext := "https://hub.example.net/"
	h, _ := newHub(t, openStore(t, ""), func(o *Options) { o.ExternalHub = ext })
	w := send(h, form("subscribe", topicA, "https://sub.example.org/cb"))
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), ext) {
		t.Fatalf("POST: HTTP %d %q", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, testHub, nil))
	if w.Code != http.StatusMethodNotAllowed || !strings.Contains(w.Body.String(), ext) {
		t.Fatalf("GET: HTTP %d %q", w.Code, w.Body)
	}
}

// TestTooManyVerifications: beyond MaxVerifications pending verifications
// the hub answers 503 with Retry-After instead of queueing without bound.
func TestTooManyVerifications(t *testing.T) {
	sub := newSubscriber(t)
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(block) })
	h, ch := newHub(t, openStore(t, ""), func(o *Options) { o.MaxVerifications = 2 })
	for i := range 2 {
		if w := send(h, form("subscribe", topicA, slow.URL+"/cb")); w.Code != http.StatusAccepted {
			t.Fatalf("request %d: HTTP %d", i, w.Code)
		}
	}
	w := send(h, form("subscribe", topicA, sub.url("/cb")))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("third request: HTTP %d %q", w.Code, w.Body)
	}
	block <- struct{}{} // one verification ends
	verified(t, ch)
	subscribe(t, h, ch, topicA, sub.url("/cb"))
}

// TestClosed: after Close, Publish fails with ErrClosed and the endpoint
// answers 503; Close can be called again.
func TestClosed(t *testing.T) {
	h, _ := newHub(t, openStore(t, ""), nil)
	h.Start()
	ctx := context.Background()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(ctx, topicA, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after Close: %v", err)
	}
	if w := send(h, form("subscribe", topicA, "http://127.0.0.1:9/cb")); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("subscribe after Close: HTTP %d", w.Code)
	}
	h.Start() // does nothing
}

// TestNewValidation: New names every problem with the options.
func TestNewValidation(t *testing.T) {
	db := openStore(t, "")
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want []string
	}{
		{"empty", func(o *Options) { *o = Options{} }, []string{"HubURL", "DB is required", "Topic is required"}},
		{"relative hub", func(o *Options) { o.HubURL = "/websub" }, []string{"HubURL \"/websub\""}},
		{"signature", func(o *Options) { o.Signature = "md5" }, []string{"Signature \"md5\""}},
		{"leases", func(o *Options) { o.LeaseMin, o.LeaseMax = time.Hour, time.Minute }, []string{"LeaseMin <= LeaseDefault <= LeaseMax"}},
		{"retry", func(o *Options) { o.RetryBase, o.RetryMax = time.Hour, time.Minute }, []string{"RetryBase"}},
		{"external", func(o *Options) { o.ExternalHub = "hub.example.net" }, []string{"ExternalHub"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{HubURL: testHub, DB: db, Topic: knownTopics}
			tc.mod(&o)
			_, err := New(o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := New(Options{HubURL: testHub, DB: db, ExternalHub: "https://hub.example.net/"}); err != nil {
		t.Fatalf("external hub without Topic: %v", err)
	}
}

// TestSubscriptionCaps: past MaxPerTopic live subscriptions of a topic, or
// MaxSubscriptions in all, a new subscription is denied without a
// verification request to its callback; renewing a live one still works
// (issue 21: 5,012 subscriptions were accepted, each a POST per change).
func TestSubscriptionCaps(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, func(o *Options) { o.MaxPerTopic, o.MaxSubscriptions = 2, 3 })
	sub := newSubscriber(t)
	subscribe(t, h, ch, topicA, sub.url("/a1"))
	subscribe(t, h, ch, topicA, sub.url("/a2"))
	denied := func(topic, path, want string) {
		t.Helper()
		other := newSubscriber(t) // its requests only
		cb := other.url(path)
		if w := send(h, form("subscribe", topic, cb)); w.Code != http.StatusAccepted {
			t.Fatalf("HTTP %d %s, want 202", w.Code, w.Body)
		}
		g := other.nextGet(t)
		if g.query.Get("hub.mode") != "denied" || !strings.Contains(g.query.Get("hub.reason"), want) {
			t.Fatalf("%s: %v, want a denial naming %q", cb, g.query, want)
		}
		if v := verified(t, ch); v.mode != "denied" {
			t.Fatalf("verification %+v", v)
		}
		if s := subscription(t, db, topic, cb); s != nil {
			t.Fatalf("a subscription past the cap was stored: %+v", s)
		}
	}
	denied(topicA, "/a3", "this channel has the most subscriptions this hub takes (2)")
	subscribe(t, h, ch, topicA, sub.url("/a1")) // a renewal fits
	subscribe(t, h, ch, topicB, sub.url("/b1"))
	denied(topicB, "/b2", "this hub holds the most subscriptions it takes (3)")
}

// TestListening: a topic is listened to while it has a live subscription,
// or a subscription request is being verified (from its acceptance until
// the subscription is stored); not before, nor once the lease ends, nor
// after a refused request. Through an external hub every topic is.
func TestListening(t *testing.T) {
	clk := newClock()
	db := openStore(t, "")
	h, ch := newHub(t, db, func(o *Options) { o.Now = clk.Now })
	ctx := context.Background()
	listened := func(topic string) bool {
		t.Helper()
		l, err := h.Listening(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l(topic)
	}
	if listened(topicA) {
		t.Fatal("a topic nobody asked for is listened to")
	}
	// A request whose verification hangs: listened to meanwhile.
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
		io.WriteString(w, "not the challenge")
	}))
	t.Cleanup(slow.Close)
	if w := send(h, form("subscribe", topicA, slow.URL+"/cb")); w.Code != http.StatusAccepted {
		t.Fatalf("request: HTTP %d", w.Code)
	}
	if !listened(topicA) {
		t.Error("a topic whose subscription is being verified is not listened to")
	}
	close(block) // refused: the callback does not echo the challenge
	if v := verified(t, ch); v.confirmed {
		t.Fatalf("verification %+v, want refused", v)
	}
	waitFor(t, "the refused request to stop counting", func() bool { return !listened(topicA) })

	sub := newSubscriber(t)
	subscribe(t, h, ch, topicA, sub.url("/cb"), "hub.lease_seconds", "300")
	// The request stops counting just after its verification is reported;
	// from then on the stored subscription alone makes the topic listened.
	waitFor(t, "no request being verified", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.verifyingTopics) == 0
	})
	if !listened(topicA) {
		t.Error("a topic with a live subscription is not listened to")
	}
	clk.Add(300 * time.Second)
	if listened(topicA) {
		t.Error("a topic whose only lease ended is listened to")
	}

	ext, _ := newHub(t, openStore(t, ""), func(o *Options) { o.ExternalHub = "https://hub.example.org/" })
	l, err := ext.Listening(ctx)
	if err != nil || !l(topicA) {
		t.Errorf("through an external hub: %v, %v; want every topic listened to", l != nil && l(topicA), err)
	}
}
