package websub

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func payload(n int) []byte {
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="change-notification" from="n%d" until="n%d"/></urlset>`, n, n+1)
}

// TestDelivery: the payload goes out byte for byte as application/xml with
// the self, hub and (when the topic has one) resourcesync links (CN-039,
// WS-009); without a secret there is no signature.
func TestDelivery(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, nil)
	h.Start()
	sub := newSubscriber(t)
	subscribe(t, h, ch, topicA, sub.url("/a"))
	subscribe(t, h, ch, topicB, sub.url("/b"))
	for _, tc := range []struct{ topic, path, link string }{
		{topicA, "/a", `<` + topicA + `>; rel="self", <` + testHub + `>; rel="hub", <` + capA + `>; rel="resourcesync"`},
		{topicB, "/b", `<` + topicB + `>; rel="self", <` + testHub + `>; rel="hub"`},
	} {
		p := payload(1)
		if err := h.Publish(context.Background(), tc.topic, p); err != nil {
			t.Fatal(err)
		}
		p[0] = 'X' // the caller may reuse its buffer once Publish returns
		d := sub.next(t)
		if d.path != tc.path || !bytes.Equal(d.body, payload(1)) {
			t.Fatalf("delivery to %s: %q", d.path, d.body)
		}
		if got := d.header.Get("Content-Type"); got != "application/xml" {
			t.Errorf("Content-Type %q", got)
		}
		if got := d.header.Values("Link"); len(got) != 1 || got[0] != tc.link {
			t.Errorf("Link %q\nwant %q", got, tc.link)
		}
		if got := d.header.Get("X-Hub-Signature"); got != "" {
			t.Errorf("signature %q without a secret", got)
		}
	}
	waitFor(t, "the store to be emptied", func() bool { return len(deliveries(t, db)) == 0 })
	st := h.Stats()
	if st.Delivered != 2 || st.Failed != 0 || st.Dropped != 0 || st.Pending != 0 || !st.OldestPending.IsZero() {
		t.Fatalf("stats %+v", st)
	}
}

// TestSignature: with hub.secret every delivery carries X-Hub-Signature,
// the HMAC of the body (WS-003), which the subscriber recomputes.
func TestSignature(t *testing.T) {
	for _, tc := range []struct {
		method string
		mac    func() hash.Hash
	}{
		{"sha256", sha256.New},
		{"sha512", sha512.New},
	} {
		t.Run(tc.method, func(t *testing.T) {
			h, ch := newHub(t, openStore(t, ""), func(o *Options) {
				if tc.method != "sha256" {
					o.Signature = tc.method
				}
			})
			h.Start()
			sub := newSubscriber(t)
			secret := "a shared secret é"
			subscribe(t, h, ch, topicA, sub.url("/cb"), "hub.secret", secret)
			if err := h.Publish(context.Background(), topicA, payload(7)); err != nil {
				t.Fatal(err)
			}
			d := sub.next(t)
			m := hmac.New(tc.mac, []byte(secret))
			m.Write(d.body)
			if want, got := tc.method+"="+hex.EncodeToString(m.Sum(nil)), d.header.Get("X-Hub-Signature"); got != want {
				t.Fatalf("X-Hub-Signature %q, want %q", got, want)
			}
		})
	}
}

// TestGone: a 410 ends the subscription, and what else was owed to it is
// dropped unsent (WS-009).
func TestGone(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, nil)
	sub := newSubscriber(t)
	other := newSubscriber(t)
	sub.set(func(s *subscriber) { s.status = []int{http.StatusGone} })
	subscribe(t, h, ch, topicA, sub.url("/cb"))
	subscribe(t, h, ch, topicB, sub.url("/cb")) // same callback, another topic: not ended
	subscribe(t, h, ch, topicA, other.url("/cb"))
	ctx := context.Background()
	for i := range 3 {
		if err := h.Publish(ctx, topicA, payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	h.Start()
	waitFor(t, "the deliveries to the ended subscription to be dropped", func() bool { return h.Stats().Dropped == 3 })
	for i := range 3 {
		if d := other.next(t); !bytes.Equal(d.body, payload(i)) {
			t.Fatalf("other subscriber got %q", d.body)
		}
	}
	if _, posts := sub.counts(); posts != 1 {
		t.Fatalf("%d deliveries sent to the ended subscription, want 1", posts)
	}
	if s := subscription(t, db, topicA, sub.url("/cb")); s != nil {
		t.Fatalf("subscription kept after 410: %+v", s)
	}
	if s := subscription(t, db, topicB, sub.url("/cb")); s == nil {
		t.Fatal("410 on one topic ended the subscription to another")
	}
	waitFor(t, "the store to be emptied", func() bool { return len(deliveries(t, db)) == 0 })
}

// TestRetryKeepsOrder: failed attempts are retried with backoff until one
// succeeds; meanwhile later deliveries to the same callback wait, so the
// subscriber sees the notifications in order, and other callbacks are not
// held back.
func TestRetryKeepsOrder(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, nil)
	flaky := newSubscriber(t)
	flaky.set(func(s *subscriber) { s.status = []int{500, 503, 200} })
	ok := newSubscriber(t)
	subscribe(t, h, ch, topicA, flaky.url("/cb"))
	subscribe(t, h, ch, topicA, ok.url("/cb"))
	ctx := context.Background()
	for i := range 4 {
		if err := h.Publish(ctx, topicA, payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	h.Start()
	for i := range 4 {
		if d := ok.next(t); !bytes.Equal(d.body, payload(i)) {
			t.Fatalf("healthy subscriber: delivery %d is %q", i, d.body)
		}
	}
	want := []struct {
		n      int
		status int
	}{{0, 500}, {0, 503}, {0, 200}, {1, 200}, {2, 200}, {3, 200}}
	for _, w := range want {
		if d := flaky.next(t); !bytes.Equal(d.body, payload(w.n)) || d.status != w.status {
			t.Fatalf("flaky subscriber: got %q answered %d, want notification %d answered %d", d.body, d.status, w.n, w.status)
		}
	}
	waitFor(t, "all deliveries to settle", func() bool { return h.Stats().Pending == 0 })
	if st := h.Stats(); st.Delivered != 8 || st.Failed != 2 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
	if ds := deliveries(t, db); len(ds) != 0 {
		t.Fatalf("deliveries left %+v", ds)
	}
}

// TestGiveUp: after MaxAttempts failed attempts a delivery is given up.
func TestGiveUp(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, func(o *Options) { o.MaxAttempts = 3 })
	h.Start()
	sub := newSubscriber(t)
	sub.set(func(s *subscriber) { s.status = []int{500} })
	subscribe(t, h, ch, topicA, sub.url("/cb"))
	if err := h.Publish(context.Background(), topicA, payload(1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery to be given up", func() bool { return h.Stats().Dropped == 1 })
	if _, posts := sub.counts(); posts != 3 {
		t.Fatalf("%d attempts, want 3", posts)
	}
	if st := h.Stats(); st.Failed != 3 || st.Delivered != 0 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
	if ds := deliveries(t, db); len(ds) != 0 {
		t.Fatalf("given-up delivery kept: %+v", ds)
	}
	if s := subscription(t, db, topicA, sub.url("/cb")); s == nil {
		t.Fatal("giving up a delivery must not end the subscription")
	}
}

// TestRestart: deliveries owed when the hub stops are delivered by the next
// process, with their attempts remembered.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir)
	sub := newSubscriber(t)
	sub.set(func(s *subscriber) { s.status = []int{500} })
	cb := sub.url("/cb")
	h, ch := newHub(t, db, nil)
	h.Start()
	subscribe(t, h, ch, topicA, cb, "hub.secret", "k")
	if err := h.Publish(context.Background(), topicA, payload(1)); err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(context.Background(), topicA, payload(2)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a failed attempt", func() bool { return h.Stats().Failed >= 1 })
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openStore(t, dir)
	ds := deliveries(t, db)
	if len(ds) != 2 || ds[0].Attempts < 1 || ds[0].LastError != "HTTP 500" || ds[1].Attempts != 0 {
		t.Fatalf("deliveries after restart %+v", ds)
	}
	sub.set(func(s *subscriber) { s.status = []int{200} })
	drain := len(sub.postc)
	for range drain {
		<-sub.postc
	}
	h, _ = newHub(t, db, nil)
	h.Start()
	for _, n := range []int{1, 2} {
		d := sub.next(t)
		for d.status != 200 { // an attempt of the first process, answered 500
			d = sub.next(t)
		}
		if !bytes.Equal(d.body, payload(n)) || d.header.Get("X-Hub-Signature") != sign("sha256", "k", payload(n)) {
			t.Fatalf("after restart got %q (signature %q), want notification %d", d.body, d.header.Get("X-Hub-Signature"), n)
		}
	}
	waitFor(t, "the store to be emptied", func() bool { return len(deliveries(t, db)) == 0 })
	if st := h.Stats(); st.Delivered != 2 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSlowSubscribersIsolated: a subscriber that never answers and one that
// always fails do not delay delivery to the others, even with only two
// workers; Close cancels the hanging request.
func TestSlowSubscribersIsolated(t *testing.T) {
	db := openStore(t, "")
	h, ch := newHub(t, db, func(o *Options) {
		o.Workers = 2
		o.Timeout = time.Hour // the hanging request only ends with Close
	})
	h.Start()
	hang := newSubscriber(t)
	hang.set(func(s *subscriber) { s.hang = true })
	fail := newSubscriber(t)
	fail.set(func(s *subscriber) { s.status = []int{500} })
	var healthy []*subscriber
	subscribe(t, h, ch, topicA, hang.url("/cb"))
	subscribe(t, h, ch, topicA, fail.url("/cb"))
	for range 4 {
		s := newSubscriber(t)
		healthy = append(healthy, s)
		subscribe(t, h, ch, topicA, s.url("/cb"))
	}
	ctx := context.Background()
	for i := range 3 {
		if err := h.Publish(ctx, topicA, payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range healthy {
		for i := range 3 {
			if d := s.next(t); !bytes.Equal(d.body, payload(i)) {
				t.Fatalf("healthy subscriber: delivery %d is %q", i, d.body)
			}
		}
	}
	waitFor(t, "the hanging delivery to be in flight", func() bool { n, _ := hang.counts(); return n > 1 })
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The hanging delivery was cancelled, not counted: it is still owed.
	owed := 0
	for _, d := range deliveries(t, db) {
		if d.Callback == hang.url("/cb") {
			owed++
		}
	}
	if owed != 3 {
		t.Fatalf("%d deliveries owed to the hanging subscriber after Close, want 3", owed)
	}
}

// TestExternalHub: with ExternalHub, each payload is POSTed once to the
// external hub with the CN-029 headers naming that hub, whatever the local
// subscriptions; the address guard does not apply to the operator's URL.
func TestExternalHub(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		mu.Lock()
		got = append(got, r)
		bodies = append(bodies, b.Bytes())
		mu.Unlock()
	}))
	t.Cleanup(ext.Close)
	extURL := ext.URL + "/hub/"
	db := openStore(t, "")
	h, _ := newHub(t, db, func(o *Options) {
		o.ExternalHub = extURL
		o.AllowPrivateCallbacks = false
	})
	h.Start()
	for _, cb := range []string{"https://a.example.org/cb", "https://b.example.org/cb"} {
		if err := db.PutSubscription(storeSub(topicA, cb, time.Now().Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if err := h.Publish(context.Background(), topicA, payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "two POSTs to the external hub", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	waitFor(t, "the store to be emptied", func() bool { return len(deliveries(t, db)) == 0 })
	mu.Lock()
	defer mu.Unlock()
	for i, r := range got {
		wantLink := `<` + topicA + `>; rel="self", <` + extURL + `>; rel="hub", <` + capA + `>; rel="resourcesync"`
		if r.Method != http.MethodPost || r.URL.Path != "/hub/" || r.Header.Get("Content-Type") != "application/xml" || r.Header.Get("Link") != wantLink || !bytes.Equal(bodies[i], payload(i)) {
			t.Fatalf("POST %d: %s %s %q Link %q body %q", i, r.Method, r.URL, r.Header.Get("Content-Type"), r.Header.Get("Link"), bodies[i])
		}
	}
	if st := h.Stats(); st.Delivered != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBackoff: the wait doubles from RetryBase up to RetryMax, with jitter
// in its upper half.
func TestBackoff(t *testing.T) {
	base, top := 10*time.Second, time.Hour
	for n := 1; n <= 40; n++ {
		d := base << min(n-1, 20)
		d = min(d, top)
		for range 50 {
			if got := backoff(n, base, top); got < d/2 || got > d {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n, got, d/2, d)
			}
		}
	}
}

// TestQueueInsert: a queue keeps ID order and refuses duplicates.
func TestQueueInsert(t *testing.T) {
	q := &queue{}
	for _, id := range []uint64{5, 2, 9, 2, 7} {
		q.insert(storeDelivery(id))
	}
	var ids []uint64
	for _, d := range q.items {
		ids = append(ids, d.ID)
	}
	if fmt.Sprint(ids) != "[2 5 7 9]" || q.find(7) != 2 || q.find(3) != -1 {
		t.Fatalf("queue %v", ids)
	}
}

func TestSign(t *testing.T) {
	if got := sign("sha256", "key", []byte("The quick brown fox jumps over the lazy dog")); got != "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8" {
		t.Fatal(got)
	}
	if got := sign("sha512", "key", []byte("The quick brown fox jumps over the lazy dog")); !strings.HasPrefix(got, "sha512=b42af09057bac1e2d41708e48a902e09b5ff7f12ab428a4fe86653c73dd248fb") {
		t.Fatal(got)
	}
}
