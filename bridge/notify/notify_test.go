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

// TestPublishSet: a new channel starts at the changes already listed, then
// every later change is notified once, in order, in notifications of at
// most max_entries whose intervals follow one another; the channel keeps
// the latest one. No HTTP: the hub has no subscribers.
func TestPublishSet(t *testing.T) {
	clk := oaiserver.NewClock(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))
	up := oaiserver.New(oaiserver.Options{Records: 10, PageSize: 5, Now: clk.Now})
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	cfg, err := config.ParseAndValidate(strings.NewReader(fmt.Sprintf(
		"base_url: http://rs.test\ndefaults:\n  delay: 0s\nnotification:\n  enabled: true\n  max_entries: 3\nrepositories:\n  - name: demo\n    base_url: %s/oai\n", upSrv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(store.Options{InMemory: true, Now: clk.Now, ChangeListLimit: 1000, ChangeListPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := func() {
		t.Helper()
		if _, err := h.Harvest(ctx, harvest.HarvestOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	run()
	src := source.New(cfg, db)
	n, err := New(src, db, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	rs := src.All(cfg.Repositories[0], "oai_dc")
	channel := func() store.Channel {
		var ch store.Channel
		db.View(ctx, func(snap *store.Snap) error { ch, err = snap.ChannelLatest("demo", "oai_dc", store.AllSet); return err })
		return ch
	}
	n.Publish(ctx)
	if err := n.LastError(); err != nil {
		t.Fatal(err)
	}
	if ch := channel(); ch.Started.IsZero() || len(ch.Latest) != 0 || ch.LastSeq != 10 {
		t.Fatalf("new channel: started %v, %d bytes, last seq %d; want started, nothing sent, after the 10 listed changes", ch.Started, len(ch.Latest), ch.LastSeq)
	}

	// Seven new records: notifications of 3, 3 and 1; the last one is kept.
	for range 7 {
		up.Add(clk.Add(time.Second))
	}
	clk.Add(time.Minute)
	run()
	n.Publish(ctx)
	if err := n.LastError(); err != nil {
		t.Fatal(err)
	}
	ch := channel()
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
	// Nothing new: nothing sent.
	n.Publish(ctx)
	if again := channel(); again.LastSeq != 17 || !bytes.Equal(again.Latest, ch.Latest) {
		t.Errorf("a round without changes moved the channel to %d", again.LastSeq)
	}
	// A pass skips a format with no new event since the last complete pass:
	// it does not even read its channels (a cursor moved back by hand stays
	// back). The next change makes the pass read them again.
	back := ch
	back.LastSeq, back.Latest = 16, nil
	if err := db.PutChannel("demo", "oai_dc", store.AllSet, back); err != nil {
		t.Fatal(err)
	}
	n.Publish(ctx)
	if again := channel(); again.LastSeq != 16 {
		t.Errorf("a pass over a quiet format read its channel: cursor %d, want 16 (left alone)", again.LastSeq)
	}
	up.Add(clk.Add(time.Second))
	clk.Add(time.Minute)
	run()
	n.Publish(ctx)
	if again := channel(); again.LastSeq != 18 {
		t.Errorf("after a change: cursor %d, want 18", again.LastSeq)
	}
}
