package websub

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

const (
	testHub = "https://rs.example.org/websub/"
	topicA  = "https://rs.example.org/r/oai_dc/all/change/"
	topicB  = "https://rs.example.org/r/oai_dc/set/x/change/"
	capA    = "https://rs.example.org/r/oai_dc/all/capabilitylist.xml"
	// wait is how long a test waits for something that should happen: long,
	// since a loaded CI machine may be slow; tests that pass never wait it.
	wait = 30 * time.Second
)

func knownTopics(topic string) (string, bool) {
	switch topic {
	case topicA:
		return capA, true
	case topicB:
		return "", true
	}
	return "", false
}

// clock is an injectable clock for leases.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openStore opens the real store, in memory when dir is "".
func openStore(t testing.TB, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(store.Options{InMemory: dir == "", Dir: dir, ChangeListLimit: 50000, ChangeListPeriod: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type verification struct {
	mode, topic, callback string
	confirmed             bool
}

// newHub returns a hub on db with test defaults, changed by mod; it is closed
// when the test ends. Verifications are reported on the channel.
func newHub(t testing.TB, db *store.DB, mod func(*Options)) (*Hub, chan verification) {
	t.Helper()
	o := Options{
		HubURL: testHub, DB: db, Topic: knownTopics, AllowPrivateCallbacks: true,
		RetryBase: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond,
		Logger: testLogger(t),
	}
	if mod != nil {
		mod(&o)
	}
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan verification, 1000)
	h.onVerified = func(mode, topic, callback string, ok bool) { ch <- verification{mode, topic, callback, ok} }
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return h, ch
}

// received is one request a subscriber got.
type received struct {
	method string
	path   string
	query  url.Values
	header http.Header
	body   []byte
	status int
}

// subscriber is a WebSub subscriber on 127.0.0.1. It confirms verifications
// by echoing the challenge unless told otherwise, and answers deliveries
// with the statuses in status (the last one repeats; 200 when empty).
type subscriber struct {
	srv     *httptest.Server
	release chan struct{} // a hanging subscriber returns when it is closed

	mu       sync.Mutex
	verify   string // answer to verifications: "echo", "wrong", "404", "500"
	unsub    string // answer to unsubscribe verifications ("" = as verify)
	status   []int
	hang     bool
	nposts   int
	requests int

	gets  chan received // verification and denial GETs
	postc chan received // every delivery attempt, with the status answered
}

func newSubscriber(t testing.TB) *subscriber {
	s := &subscriber{release: make(chan struct{}), verify: "echo",
		gets: make(chan received, 10000), postc: make(chan received, 100000)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() { close(s.release) }) // runs first, so hanging handlers return
	return s
}

func (s *subscriber) url(path string) string { return s.srv.URL + path }

func (s *subscriber) set(fn func(*subscriber)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s)
}

func (s *subscriber) counts() (requests, posts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.nposts
}

func (s *subscriber) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := received{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: body}
	s.mu.Lock()
	s.requests++
	verify := s.verify
	if s.unsub != "" && rec.query.Get("hub.mode") == "unsubscribe" {
		verify = s.unsub
	}
	hang := s.hang
	status := http.StatusOK
	if r.Method == http.MethodPost {
		if n := len(s.status); n > 0 {
			status = s.status[min(s.nposts, n-1)]
		}
		s.nposts++
	}
	s.mu.Unlock()

	if r.Method == http.MethodGet {
		s.gets <- rec
		if rec.query.Get("hub.mode") == "denied" {
			return
		}
		switch verify {
		case "echo":
			io.WriteString(w, rec.query.Get("hub.challenge"))
		case "wrong":
			io.WriteString(w, "not the challenge")
		case "404":
			http.NotFound(w, r)
		default:
			http.Error(w, "broken", http.StatusInternalServerError)
		}
		return
	}
	if hang {
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
		return
	}
	rec.status = status
	s.postc <- rec
	w.WriteHeader(status)
}

// next returns the next delivery attempt the subscriber received.
func (s *subscriber) next(t testing.TB) received {
	t.Helper()
	select {
	case r := <-s.postc:
		return r
	case <-time.After(wait):
		t.Fatalf("no delivery reached %s within %s", s.srv.URL, wait)
		return received{}
	}
}

// nextGet returns the next verification or denial GET.
func (s *subscriber) nextGet(t testing.TB) received {
	t.Helper()
	select {
	case r := <-s.gets:
		return r
	case <-time.After(wait):
		t.Fatalf("no verification reached %s within %s", s.srv.URL, wait)
		return received{}
	}
}

// send sends a subscription request to the hub and returns the response.
func send(h *Hub, form url.Values) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, testHub, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func form(mode, topic, callback string, kv ...string) url.Values {
	f := url.Values{"hub.mode": {mode}, "hub.topic": {topic}, "hub.callback": {callback}}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

// verified waits for the next verification result.
func verified(t testing.TB, ch chan verification) verification {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("no verification finished within %s", wait)
		return verification{}
	}
}

// subscribe subscribes callback to topic and waits until it is confirmed.
func subscribe(t testing.TB, h *Hub, ch chan verification, topic, callback string, kv ...string) {
	t.Helper()
	if w := send(h, form("subscribe", topic, callback, kv...)); w.Code != http.StatusAccepted {
		t.Fatalf("subscribe %s: HTTP %d %s", callback, w.Code, w.Body)
	}
	if v := verified(t, ch); !v.confirmed || v.callback != callback {
		t.Fatalf("subscribe %s: verification %+v", callback, v)
	}
}

// waitFor polls cond until it holds, failing after a generous deadline.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", wait, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func deliveries(t testing.TB, db *store.DB) []store.Delivery {
	t.Helper()
	var ds []store.Delivery
	if err := db.View(context.Background(), func(s *store.Snap) error {
		return s.Deliveries(func(d store.Delivery) error { ds = append(ds, d); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return ds
}

func subscription(t testing.TB, db *store.DB, topic, callback string) *store.Subscription {
	t.Helper()
	var sub *store.Subscription
	if err := db.View(context.Background(), func(s *store.Snap) error {
		var err error
		sub, err = s.Subscription(topic, callback)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return sub
}

func storeSub(topic, callback string, expires time.Time) store.Subscription {
	return store.Subscription{Topic: topic, Callback: callback, Lease: 3600, Expires: expires, Created: expires.Add(-time.Hour)}
}

func storeDelivery(id uint64) store.Delivery { return store.Delivery{ID: id} }
