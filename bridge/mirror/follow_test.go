package mirror

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// follow runs m.Follow over s (callback server on a free local port)
// until the test ends.
func follow(t *testing.T, m *Mirror, s *rsbridgeSource) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Follow(ctx, s.srv.URL, FollowOptions{Every: time.Hour, Listen: "127.0.0.1:0"}) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// waitFor waits until cond holds, or fails the test saying what.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// waitEqual waits until the copy equals the source.
func waitEqual(t *testing.T, s *rsbridgeSource, dir string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		d := s.differences(dir)
		if len(d) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the copy still differs: %d differences, e.g. %s", within, len(d), d[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFollowByNotification: a following mirror subscribes at rsbridge's
// hub and applies each notification as it comes: no pull run happens
// (Every is an hour), yet the copy follows the source.
func TestFollowByNotification(t *testing.T) {
	s := newRsbridgeFull(t, oaiserver.Options{Records: 40, PageSize: 50, SetCount: -1}, "", "notification:\n  enabled: true\n")
	m, dir := openMirror(t, s, Options{Delete: true})
	follow(t, m, s)
	waitEqual(t, s, dir, 10*time.Second)
	topic := s.src.All(s.cfg.Repositories[0], "oai_dc").Topic()
	waitFor(t, "the mirror did not subscribe", 10*time.Second, func() bool { return s.notifier.Stats().Subscribers[topic] == 1 })
	baseline, _ := s.resourceGETs()
	for round := range 3 {
		at := s.clk.Add(time.Minute)
		s.up.Add(at)
		s.up.Update(round, at)
		s.up.Delete(10+round, at)
		s.clk.Add(time.Second)
		s.harvest()
		waitEqual(t, s, dir, 10*time.Second)
	}
	if n, _ := s.resourceGETs(); n-baseline != 6 {
		t.Errorf("%d resource GETs while following; want 6: the 3 created and 3 updated, once each", n-baseline)
	}
	// The operator's view, on the callback server.
	resp, err := http.Get(m.CallbackURL() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if len(st.Subscriptions) != 1 || st.Subscriptions[0].Topic != topic || st.Subscriptions[0].Verified.IsZero() || st.Counts.Created != 43 {
		t.Errorf("status: %+v", st)
	}
	resp, err = http.Get(m.CallbackURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), "rsbridge_mirror_created_total 43\n") {
		t.Errorf("metrics:\n%s", metrics)
	}
}

// fakeHub is a WebSub hub under the test's control: it verifies the
// mirror's subscription and posts the payloads the test gives it.
type fakeHub struct {
	t        *testing.T
	mu       sync.Mutex
	callback string
	secret   string
	srv      *httptest.Server
}

func newFakeHub(t *testing.T) *fakeHub {
	h := &fakeHub{t: t}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("hub.mode") != "subscribe" {
			return // the source publishing: this hub drops it
		}
		cb, topic := r.Form.Get("hub.callback"), r.Form.Get("hub.topic")
		h.mu.Lock()
		h.callback, h.secret = cb, r.Form.Get("hub.secret")
		h.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		go func() {
			q := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.challenge": {"c-123"}, "hub.lease_seconds": {"3600"}}
			resp, err := http.Get(cb + "?" + q.Encode())
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "c-123" {
					t.Errorf("verification answered %q", b)
				}
			}
		}()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// post sends a payload signed with secret (the subscription's, if "").
func (h *fakeHub) post(payload, secret string) int {
	h.mu.Lock()
	cb := h.callback
	if secret == "" {
		secret = h.secret
	}
	h.mu.Unlock()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(payload))
	req, _ := http.NewRequest(http.MethodPost, cb, strings.NewReader(payload))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("X-Hub-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestFollowClosesNotificationGaps: a payload that starts later than what
// the copy has applied means notifications were lost: the mirror reads
// the Change Lists and ends equal to the source; a payload with a forged
// signature is ignored.
func TestFollowClosesNotificationGaps(t *testing.T) {
	hub := newFakeHub(t)
	s := newRsbridgeFull(t, oaiserver.Options{Records: 30, PageSize: 50, SetCount: -1}, "",
		fmt.Sprintf("notification:\n  enabled: true\n  hub_url: %s\n", hub.srv.URL))
	m, dir := openMirror(t, s, Options{Delete: true})
	follow(t, m, s)
	waitEqual(t, s, dir, 10*time.Second)
	waitFor(t, "the mirror did not subscribe", 10*time.Second, func() bool {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		return hub.callback != ""
	})
	// Once subscribed, the follower pulls once more (changes between its
	// first run and the subscription): wait until that run has ended, or
	// it could pick up the changes below.
	waitFor(t, "the follower did not pull after subscribing", 10*time.Second, func() bool {
		resp, err := http.Get(m.CallbackURL() + "/status")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st Status
		return json.NewDecoder(resp.Body).Decode(&st) == nil && st.Runs >= 2
	})
	// Changes the hub never notifies (the embedded notifier posts to the
	// fake hub, which drops them). The clock moves by seconds only, well
	// inside the follower's one-minute renewal horizon.
	at := s.clk.Add(time.Second)
	for i := range 5 {
		s.up.Update(i, at)
	}
	s.clk.Add(time.Second)
	s.harvest()
	later := s.clk.Add(time.Second).UTC().Format(time.RFC3339)
	empty := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
		`<rs:md capability="change-notification" from="` + later + `" until="` + later + `"/></urlset>`
	if code := hub.post(empty, "not the secret"); code/100 != 2 {
		t.Errorf("a forged payload answered %d; WebSub wants 2xx (and the payload ignored)", code)
	}
	time.Sleep(200 * time.Millisecond)
	if len(s.differences(dir)) != 5 {
		t.Fatalf("after a forged payload the copy changed (%d differences, want the 5 unnotified)", len(s.differences(dir)))
	}
	if code := hub.post(empty, ""); code/100 != 2 {
		t.Fatalf("payload answered %d", code)
	}
	waitEqual(t, s, dir, 10*time.Second)
}

// TestRenewLease: a subscription whose lease is four fifths gone, or that
// got no verification within a minute, is asked for again; a fresh one is
// not.
func TestRenewLease(t *testing.T) {
	hub := newFakeHub(t)
	var asked atomic.Int64
	inner := hub.srv.Config.Handler
	hub.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		inner.ServeHTTP(w, r)
	})
	m, err := New(t.TempDir(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	now := time.Now()
	set := Set{CapabilityList: "http://s/cap", Notification: "http://s/topic", Hub: hub.srv.URL}
	subs := map[string]*subscription{
		"fresh":      {set: set, base: "http://127.0.0.1:1", path: "/a", asked: now.Add(-time.Hour), verified: now.Add(-time.Hour), lease: 24 * time.Hour},
		"old":        {set: set, base: "http://127.0.0.1:1", path: "/b", asked: now.Add(-20 * time.Hour), verified: now.Add(-20 * time.Hour), lease: 24 * time.Hour},
		"unverified": {set: set, base: "http://127.0.0.1:1", path: "/c", asked: now.Add(-2 * time.Minute)},
		"waiting":    {set: set, base: "http://127.0.0.1:1", path: "/d", asked: now.Add(-10 * time.Second)},
	}
	m.renew(context.Background(), subs, 24*time.Hour)
	if n := asked.Load(); n != 2 {
		t.Errorf("%d subscription requests, want 2 (the old one and the unverified one)", n)
	}
	if subs["old"].asked.Before(now) || subs["fresh"].asked.After(now) {
		t.Error("asked times not kept")
	}
}
