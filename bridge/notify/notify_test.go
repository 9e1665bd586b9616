package notify

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// twin is two sources harvesting one upstream at the same times, each
// with its own in-memory store and notifier: what one test does to one
// side, the other side shows without.
type twin struct {
	t     *testing.T
	clk   *oaiserver.Clock
	up    *oaiserver.Synthetic
	cfg   *config.Config
	rs    source.Set
	sides [2]side
}

type side struct {
	db  *store.DB
	h   *harvest.Harvester
	src *source.Source
	n   *Notifier
}

// newTwin starts the upstream of 10 records and the two sides, with
// notifications of at most 3 changes and Change Lists of an hour.
func newTwin(t *testing.T) *twin {
	clk := oaiserver.NewClock(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))
	up := oaiserver.New(oaiserver.Options{Records: 10, PageSize: 5, Now: clk.Now})
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)
	cfg, err := config.ParseAndValidate(strings.NewReader(fmt.Sprintf(
		"base_url: http://rs.test\ndefaults:\n  delay: 0s\nnotification:\n  enabled: true\n  max_entries: 3\nrepositories:\n  - name: demo\n    base_url: %s/oai\n", upSrv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	tw := &twin{t: t, clk: clk, up: up, cfg: cfg}
	for i := range tw.sides {
		db, err := store.Open(store.Options{InMemory: true, Now: clk.Now, ChangeListLimit: 1000, ChangeListPeriod: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		src := source.New(cfg, db)
		n, err := New(src, db, Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		tw.sides[i] = side{db, h, src, n}
	}
	tw.rs = tw.sides[0].src.All(cfg.Repositories[0], "oai_dc")
	return tw
}

// harvest harvests the upstream into both sides.
func (tw *twin) harvest() {
	tw.t.Helper()
	for _, sd := range tw.sides {
		if _, err := sd.h.Harvest(context.Background(), harvest.HarvestOptions{}); err != nil {
			tw.t.Fatal(err)
		}
	}
}

// publish runs a notification pass on both sides.
func (tw *twin) publish() {
	tw.t.Helper()
	for _, sd := range tw.sides {
		sd.n.Publish(context.Background())
		if err := sd.n.LastError(); err != nil {
			tw.t.Fatal(err)
		}
	}
}

// channel is side i's channel of the all-records set.
func (tw *twin) channel(i int) store.Channel {
	tw.t.Helper()
	var ch store.Channel
	err := tw.sides[i].db.View(context.Background(), func(snap *store.Snap) error {
		var err error
		ch, err = snap.ChannelLatest("demo", "oai_dc", store.AllSet)
		return err
	})
	if err != nil {
		tw.t.Fatal(err)
	}
	return ch
}

// topicDoc is what side i's topic URI serves.
func (tw *twin) topicDoc(i int) []byte {
	tw.t.Helper()
	var b bytes.Buffer
	err := tw.sides[i].db.View(context.Background(), func(snap *store.Snap) error {
		d, err := tw.sides[i].src.Channel(snap, tw.rs)
		if err != nil {
			return err
		}
		return d.Write(&b)
	})
	if err != nil {
		tw.t.Fatal(err)
	}
	return b.Bytes()
}

// TestPublishSet: a new channel starts at the changes already listed, then
// every later change is notified once, in order, in notifications of at
// most max_entries whose intervals follow one another; the channel keeps
// the latest one. Two sources harvest the same upstream at the same times:
// one channel has a subscriber (stored, never called: the hub is not
// started), the other none, and is quiet: its cursor moves the same, no
// notification is built, and its topic document, built when asked, is the
// listened one's byte for byte.
func TestPublishSet(t *testing.T) {
	tw := newTwin(t)
	clk, up, rs, sides := tw.clk, tw.up, tw.rs, &tw.sides
	ctx := context.Background()
	// subscribe stores a live subscription to the channel on side i (its
	// callback is never called: the hub is not started).
	subscribe := func(i int) {
		t.Helper()
		if err := sides[i].db.PutSubscription(store.Subscription{Topic: rs.Topic(), Callback: "http://127.0.0.1:9/cb",
			Lease: 86400, Expires: clk.Now().Add(24 * time.Hour), Created: clk.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	subscribe(0)
	run, publish, channel, topicDoc := tw.harvest, tw.publish, tw.channel, tw.topicDoc
	// change adds n records upstream, a second apart, then harvests and
	// publishes a minute later.
	change := func(n int) {
		t.Helper()
		for range n {
			up.Add(clk.Add(time.Second))
		}
		clk.Add(time.Minute)
		run()
		publish()
	}
	same := func(when string) {
		t.Helper()
		l, q := channel(0), channel(1)
		if l.LastSeq != q.LastSeq || !l.Until.Equal(q.Until) {
			t.Errorf("%s: the quiet channel is at %d, %v; the listened one at %d, %v", when, q.LastSeq, q.Until, l.LastSeq, l.Until)
		}
		if a, b := topicDoc(0), topicDoc(1); !bytes.Equal(a, b) {
			t.Errorf("%s: the quiet channel's topic document differs from the listened one's:\n%s\n%s", when, b, a)
		}
	}
	run()
	publish()
	if ch := channel(0); ch.Started.IsZero() || len(ch.Latest) != 0 || ch.LastSeq != 10 {
		t.Fatalf("new channel: started %v, %d bytes, last seq %d; want started, nothing sent, after the 10 listed changes", ch.Started, len(ch.Latest), ch.LastSeq)
	}
	same("a new channel")

	// Seven new records: notifications of 3, 3 and 1; the last one is kept.
	change(7)
	ch := channel(0)
	if ch.LastSeq != 17 {
		t.Fatalf("channel cursor at %d, want 17", ch.LastSeq)
	}
	doc, err := rsync.Parse(bytes.NewReader(ch.Latest))
	if err != nil {
		t.Fatal(err)
	}
	if doc.MD.Capability != source.ChangeNotification || len(doc.Entries) != 1 || doc.Link("up") != rs.CapabilityList() {
		t.Fatalf("latest notification: %s, %d entries, up %s", doc.MD.Capability, len(doc.Entries), doc.Link("up"))
	}
	if e := doc.Entries[0]; e.MD.Change != "created" || !doc.MD.From.Before(doc.MD.Until) && !doc.MD.From.Equal(doc.MD.Until) || e.MD.DateTime.After(doc.MD.Until) {
		t.Errorf("latest notification: from %v until %v, entry %s at %v", doc.MD.From, doc.MD.Until, e.MD.Change, e.MD.DateTime)
	}
	if q := channel(1); !q.Quiet || len(q.Latest) != 0 {
		t.Errorf("the channel nobody subscribes to: quiet %v, %d bytes stored; want quiet, none", q.Quiet, len(q.Latest))
	}
	same("seven changes")
	// Three more: exactly one notification of max_entries.
	change(3)
	same("three changes")
	// Nothing new: nothing sent.
	ch = channel(0)
	publish()
	if again := channel(0); again.LastSeq != 20 || !bytes.Equal(again.Latest, ch.Latest) {
		t.Errorf("a round without changes moved the channel to %d", again.LastSeq)
	}
	same("a round without changes")
	// A pass skips a format with no new event since the last complete pass:
	// it does not even read its channels (a cursor moved back by hand stays
	// back). The next change makes the pass read them again.
	back := ch
	back.LastSeq, back.Latest = 19, nil
	if err := sides[0].db.PutChannel("demo", "oai_dc", store.AllSet, back); err != nil {
		t.Fatal(err)
	}
	sides[0].n.Publish(ctx)
	if again := channel(0); again.LastSeq != 19 {
		t.Errorf("a pass over a quiet format read its channel: cursor %d, want 19 (left alone)", again.LastSeq)
	}
	change(1)
	if again := channel(0); again.LastSeq != 21 {
		t.Errorf("after a change: cursor %d, want 21", again.LastSeq)
	}
	// A subscriber to the quiet channel: the next changes are built and sent.
	subscribe(1)
	change(1)
	if q := channel(1); q.Quiet || len(q.Latest) == 0 || q.LastSeq != 22 {
		t.Errorf("once subscribed: quiet %v, %d bytes, cursor %d; want a notification built and kept, cursor 22", q.Quiet, len(q.Latest), q.LastSeq)
	}
	same("both listened")
}

// TestKeepQuietBeforePrune: retention removes the entries a quiet
// channel's topic document is built from; KeepQuiet, run before it, stores
// the document first, so the topic URI still serves what the pass would
// have sent. Two stores, the same upstream and clock; retention runs on
// both, KeepQuiet on the first only (the second shows what it prevents).
func TestKeepQuietBeforePrune(t *testing.T) {
	tw := newTwin(t)
	clk, up, sides := tw.clk, tw.up, &tw.sides
	ctx := context.Background()
	harvestBoth, publishBoth, topicDoc := tw.harvest, tw.publish, tw.topicDoc
	harvestBoth()
	publishBoth() // the channels start after the first 10
	// Six records harvested, not yet notified; two hours later a seventh,
	// in a Change List of its own. One quiet pass covers all seven: its
	// last notification (of 3, 3, 1) would have held the seventh, from the
	// sixth's time.
	for range 6 {
		up.Add(clk.Add(time.Second))
	}
	clk.Add(time.Minute)
	harvestBoth()
	clk.Add(2 * time.Hour)
	up.Add(clk.Add(time.Second))
	clk.Add(time.Minute)
	harvestBoth()
	publishBoth()
	before := topicDoc(0)
	if !bytes.Equal(before, topicDoc(1)) {
		t.Fatal("the two sides differ before retention")
	}
	cutoff := clk.Now().Add(-30 * time.Minute) // the first list closed before it, the seventh record after
	if err := sides[0].n.KeepQuiet(ctx, cutoff); err != nil {
		t.Fatal(err)
	}
	var pruned [2]store.Pruned
	for i, sd := range sides {
		var err error
		if pruned[i], err = sd.db.Prune(ctx, "demo", "oai_dc", cutoff, clk.Now(), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if pruned[1].Events == 0 || pruned[1].Lists == 0 {
		t.Fatalf("retention removed %+v; the test needs the first Change List and its events gone", pruned[1])
	}
	if after := topicDoc(0); !bytes.Equal(after, before) {
		t.Errorf("with KeepQuiet, the topic document changed with retention:\n%s\nwas\n%s", after, before)
	}
	if bytes.Equal(topicDoc(1), before) {
		t.Error("without KeepQuiet the topic document did not change: this test no longer shows what KeepQuiet prevents")
	}
	// Stored, the channel is no longer quiet, and its cursor did not move:
	// the next pass goes on from the same change.
	ch := tw.channel(0)
	if ch.Quiet || len(ch.Latest) == 0 || ch.LastSeq != 17 {
		t.Errorf("after KeepQuiet: quiet %v, %d bytes, cursor %d; want stored, cursor 17", ch.Quiet, len(ch.Latest), ch.LastSeq)
	}
	// A channel whose window starts after the cutoff is left quiet.
	up.Add(clk.Add(time.Second))
	clk.Add(time.Minute)
	harvestBoth()
	publishBoth()
	if err := sides[0].n.KeepQuiet(ctx, cutoff); err != nil {
		t.Fatal(err)
	}
	if ch = tw.channel(0); !ch.Quiet {
		t.Error("KeepQuiet stored a channel whose changes all come after the cutoff")
	}
}
