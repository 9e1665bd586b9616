package bridge

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/notify"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/bridge/websub"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
)

// subscriber is a WebSub subscriber on 127.0.0.1: it confirms intent and
// keeps every notification whose signature checks out.
type subscriber struct {
	t      *testing.T
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	got    [][]byte
	bad    int // deliveries with a wrong signature or missing links
	intent chan string
}

func newSubscriber(t *testing.T, secret string) *subscriber {
	sub := &subscriber{t: t, secret: secret, intent: make(chan string, 10)}
	sub.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			q := r.URL.Query()
			sub.intent <- q.Get("hub.mode")
			io.WriteString(w, q.Get("hub.challenge"))
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write(body)
			sub.mu.Lock()
			defer sub.mu.Unlock()
			if r.Header.Get("X-Hub-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) ||
				!strings.Contains(r.Header.Get("Link"), `rel="self"`) || !strings.Contains(r.Header.Get("Link"), `rel="hub"`) {
				sub.bad++
				return
			}
			sub.got = append(sub.got, body)
		}
	}))
	t.Cleanup(sub.srv.Close)
	return sub
}

func (sub *subscriber) notifications() [][]byte {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return append([][]byte(nil), sub.got...)
}

// waitFor polls cond until it holds or the (generous) deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestChangeNotification: the Capability List advertises the set's channel;
// a subscriber (verified intent, a secret) receives after each harvest
// exactly the changes the Change Lists got, signed, in consecutive
// non-overlapping intervals, split at max_entries; the topic URI serves the
// latest notification with its Link headers.
func TestChangeNotification(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 20, PageSize: 10, SetCount: 2}, 50, time.Hour)
	s.cfg.Notification.MaxEntries = 4
	n, err := notify.New(source.New(s.cfg, s.db), s.db, notify.Options{HubOptions: func(o *websub.Options) { o.AllowPrivateCallbacks = true }})
	if err != nil {
		t.Fatal(err)
	}
	metrics := NewMetrics()
	metrics.Watch(s.cfg, s.db, nil, n)
	srv := httptest.NewServer(mustServer(t, s.cfg, s.db, ServerOptions{Now: s.clock.Now, DumpDir: s.dumpDir, Notifier: n, Metrics: metrics}).Handler())
	defer srv.Close()
	// The handler serves on another port than the source's URLs: rewrite.
	local := func(u string) string { return strings.Replace(u, s.srv.URL, srv.URL, 1) }
	s.harvest()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	defer func() { cancel(); <-done }()

	dest := newDestination(t)
	cl := dest.doc(local(s.srv.URL + "/demo/oai_dc/all/capabilitylist.xml"))
	var topic, hub string
	for _, e := range cl.Entries {
		if e.MD.Capability == "change-notification" && len(e.Links) == 1 && e.Links[0].Rel == "hub" {
			topic, hub = e.Loc, e.Links[0].Href
		}
	}
	if topic == "" || hub != s.srv.URL+"/websub" {
		t.Fatalf("no channel advertised: %+v", cl.Entries)
	}
	resp, err := http.Head(local(topic))
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml" ||
		!strings.Contains(resp.Header.Get("Link"), "<"+topic+`>; rel="self"`) || !strings.Contains(resp.Header.Get("Link"), "<"+hub+`>; rel="hub"`) {
		t.Fatalf("HEAD topic: %v %v", err, resp)
	}

	sub := newSubscriber(t, "s3cret")
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {sub.srv.URL + "/cb"}, "hub.secret": {"s3cret"}}
	resp, err = http.PostForm(local(hub), form)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %v %v", err, resp)
	}
	if mode := <-sub.intent; mode != "subscribe" {
		t.Fatalf("verification mode %q", mode)
	}
	waitFor(t, "the subscription", func() bool { return n.Stats().Subscribers[topic] == 1 })
	// The status and /metrics show subscriptions per channel.
	get := func(path string) string {
		_, b := getBody(t, http.DefaultClient, srv.URL+path)
		return string(b)
	}
	var st Status
	if err := json.Unmarshal([]byte(get("/status.json")), &st); err != nil || st.Notification == nil || st.Notification.PerChannel[topic] != 1 {
		t.Fatalf("status: %v %+v", err, st.Notification)
	}
	if m := get("/metrics"); !strings.Contains(m, `rsbridge_websub_subscriptions{channel="`+topic+`"} 1`) || !strings.Contains(m, "rsbridge_websub_oldest_pending_timestamp_seconds 0") {
		t.Errorf("/metrics lacks the hub's state")
	}
	if home := get("/"); !strings.Contains(home, `<a href="`+topic+`">`) {
		t.Errorf("home page lacks the channel")
	}

	// Two harvests of changes; each change reaches the subscriber once.
	var want []string
	seen := time.Time{}
	clEntries := func() {
		for _, e := range dest.doc(local(s.srv.URL + "/demo/oai_dc/all/changelist.xml")).Entries {
			l := dest.doc(local(e.Loc))
			for _, c := range l.Entries {
				if c.MD.DateTime.After(seen) {
					want = append(want, c.Loc+" "+c.MD.Change+" "+rsync.FormatTime(c.MD.DateTime))
					seen = c.MD.DateTime
				}
			}
		}
	}
	clEntries() // the first harvest's changes predate the channel: not notified
	want = nil
	for round := range 2 {
		at := s.advance(time.Minute)
		for i := range 5 {
			s.up.Update(round*5+i, at)
		}
		s.up.Delete(15+round, at)
		s.advance(time.Minute)
		s.harvest()
		n.Changed()
		clEntries()
		waitFor(t, "the notifications", func() bool {
			total := 0
			for _, p := range sub.notifications() {
				doc, _ := rsync.Parse(bytes.NewReader(p))
				total += len(doc.Entries)
			}
			return total == len(want)
		})
	}
	var got []string
	var prevUntil time.Time
	for i, p := range sub.notifications() {
		doc, err := rsync.Parse(bytes.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		dest.docs[topic+"#"+string(rune('a'+i))] = p
		md := doc.MD
		if md.Capability != "change-notification" || md.From.IsZero() || md.Until.IsZero() || doc.Index || len(doc.Entries) > 4 {
			t.Fatalf("notification %d: %+v, %d entries", i, md, len(doc.Entries))
		}
		if i > 0 && !md.From.Equal(prevUntil) {
			t.Errorf("notification %d: from %v, previous until %v: not consecutive", i, md.From, prevUntil)
		}
		prevUntil = md.Until
		for _, e := range doc.Entries {
			if e.MD.DateTime.Before(md.From) || e.MD.DateTime.After(md.Until) {
				t.Errorf("notification %d: change at %v outside [%v, %v]", i, e.MD.DateTime, md.From, md.Until)
			}
			got = append(got, e.Loc+" "+e.MD.Change+" "+rsync.FormatTime(e.MD.DateTime))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || sub.bad != 0 {
		t.Errorf("notified (%d bad deliveries):\n%s\nChange Lists:\n%s", sub.bad, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The topic URI serves the latest notification.
	notes := sub.notifications()
	_, body := dest.get(local(topic))
	if !bytes.Equal(body, notes[len(notes)-1]) {
		t.Errorf("the topic does not serve the latest notification")
	}
	dest.validate()
}

// BenchmarkNotifyLatency measures the delay from a harvest's commit to the
// subscriber receiving its notification (the notifier waits 200 ms after a
// commit so that the pages of a burst go out together).
//
//	go test -run '^$' -bench NotifyLatency -benchtime 20x ./bridge/
func BenchmarkNotifyLatency(b *testing.B) {
	s := newFixture(b, oaiserver.Options{Records: 20, PageSize: 10}, 50, time.Hour)
	n, err := notify.New(source.New(s.cfg, s.db), s.db, notify.Options{HubOptions: func(o *websub.Options) { o.AllowPrivateCallbacks = true }})
	if err != nil {
		b.Fatal(err)
	}
	s.harvest()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	defer func() { cancel(); <-done }()
	arrived := make(chan time.Time, 100)
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		io.Copy(io.Discard, r.Body)
		arrived <- time.Now()
	}))
	defer sub.Close()
	srv := httptest.NewServer(mustServer(b, s.cfg, s.db, ServerOptions{DumpDir: s.dumpDir, Hub: n.Hub()}).Handler())
	defer srv.Close()
	topic := s.srv.URL + "/demo/oai_dc/all/changenotification.xml"
	if _, err := http.PostForm(srv.URL+"/websub", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {sub.URL}}); err != nil {
		b.Fatal(err)
	}
	for n.Stats().Subscribers[topic] == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	var total, worst time.Duration
	for i := 0; b.Loop(); i++ {
		at := s.advance(time.Minute)
		s.up.Update(i%20, at)
		s.advance(time.Minute)
		if _, err := s.h.Harvest(ctx, harvest.HarvestOptions{}); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		n.Changed()
		d := (<-arrived).Sub(committed)
		total += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "mean-ms")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
