package store

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func TestHubState(t *testing.T) {
	db := openMem(t, nil)
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, cb := range []string{"http://a/cb", "http://b/cb"} {
		if err := db.PutSubscription(Subscription{Topic: "http://t/1", Callback: cb, Lease: 600, Expires: now.Add(10 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	db.PutSubscription(Subscription{Topic: "http://t/2", Callback: "http://a/cb"})
	subs := func(topic string) (out []string) {
		begin(t, db).Subscriptions(topic, func(s Subscription) error { out = append(out, s.Topic+" "+s.Callback); return nil })
		return out
	}
	if got := subs("http://t/1"); !reflect.DeepEqual(got, []string{"http://t/1 http://a/cb", "http://t/1 http://b/cb"}) {
		t.Fatalf("subscriptions %v", got)
	}
	if got := subs(""); len(got) != 3 {
		t.Fatalf("all subscriptions %v", got)
	}
	db.DeleteSubscription("http://t/1", "http://b/cb")
	if got := subs("http://t/1"); len(got) != 1 {
		t.Fatalf("after delete %v", got)
	}

	id, err := db.Publish(Notification{Topic: "http://t/1", ContentType: "application/xml", Payload: []byte("<urlset/>"), Created: now}, []string{"http://a/cb", "http://b/cb"})
	if err != nil || id != 1 {
		t.Fatal(id, err)
	}
	var ds []Delivery
	begin(t, db).Deliveries(func(d Delivery) error { ds = append(ds, d); return nil })
	if len(ds) != 2 || ds[0].Notification != id || ds[1].Callback != "http://b/cb" || !ds[0].NotBefore.Equal(now) {
		t.Fatalf("deliveries %+v", ds)
	}
	ds[0].Attempts, ds[0].LastError = 1, "HTTP 500"
	if err := db.UpdateDelivery(ds[0]); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishDelivery(ds[1].ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := begin(t, db).Notification(id); n == nil || n.Pending != 1 || string(n.Payload) != "<urlset/>" {
		t.Fatalf("notification after one delivery %+v", n)
	}
	if err := db.FinishDelivery(ds[0].ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := begin(t, db).Notification(id); n != nil {
		t.Fatalf("notification kept after its last delivery: %+v", n)
	}
	if err := db.UpdateDelivery(ds[0]); err == nil {
		t.Fatal("updating a finished delivery must fail")
	}
	if id, _ := db.Publish(Notification{Topic: "http://t/1"}, nil); id != 0 {
		t.Fatal("a notification without callbacks is not stored")
	}
	ch := Channel{LastSeq: 9, Until: now, LatestID: 1, Latest: []byte("<urlset/>")}
	db.PutChannel("r", "p", AllSet, ch)
	if got, _ := begin(t, db).ChannelLatest("r", "p", AllSet); !reflect.DeepEqual(got, ch) {
		t.Fatalf("channel %+v", got)
	}

	if got, err := begin(t, db).Subscription("http://t/1", "http://a/cb"); err != nil || got == nil || got.Lease != 600 || !got.Expires.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("subscription (t/1, a/cb) = %+v, %v", got, err)
	}
	if got, err := begin(t, db).Subscription("http://t/1", "http://b/cb"); err != nil || got != nil {
		t.Fatalf("deleted subscription = %+v, %v", got, err)
	}
	n, ds2, err := db.PublishDeliveries(Notification{Topic: "http://t/2", Payload: []byte("<x/>"), Created: now}, []string{"http://a/cb", "http://c/cb"})
	if err != nil || n.ID == 0 || n.Pending != 2 || len(ds2) != 2 {
		t.Fatalf("PublishDeliveries = %+v, %+v, %v", n, ds2, err)
	}
	var stored []Delivery
	begin(t, db).Deliveries(func(d Delivery) error { stored = append(stored, d); return nil })
	if !reflect.DeepEqual(stored, ds2) {
		t.Fatalf("PublishDeliveries returned %+v, the store holds %+v", ds2, stored)
	}
}

// TestFinishDeliveriesConcurrently: the hub settles the deliveries of one
// notification in parallel; every one of them decrements its Pending, so
// their transactions conflict and must be retried, not fail.
func TestFinishDeliveriesConcurrently(t *testing.T) {
	db := openMem(t, nil)
	cbs := make([]string, 64)
	for i := range cbs {
		cbs[i] = fmt.Sprintf("http://s%d/cb", i)
	}
	_, ds, err := db.PublishDeliveries(Notification{Topic: "http://t/1", Payload: []byte("<urlset/>")}, cbs)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(ds))
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < len(ds); i += 16 {
				if i%2 == 0 {
					d := ds[i]
					d.Attempts = 1
					if err := db.UpdateDelivery(d); err != nil {
						errs <- err
					}
				}
				if err := db.FinishDelivery(ds[i].ID); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := begin(t, db).Notification(ds[0].Notification); n != nil {
		t.Fatalf("notification kept after its last delivery: %+v", n)
	}
}

// TestChannelBodyApart: a channel's latest notification is kept apart from
// its cursor; Channel leaves it out, ChannelLatest reads it, a put without
// one keeps it, and a channel stored whole by an earlier version still has
// its body.
func TestChannelBodyApart(t *testing.T) {
	db := openMem(t, nil)
	read := func(latest bool) Channel {
		var c Channel
		err := db.View(context.Background(), func(s *Snap) error {
			var err error
			if latest {
				c, err = s.ChannelLatest("r", "p", AllSet)
			} else {
				c, err = s.Channel("r", "p", AllSet)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := db.PutChannel("r", "p", AllSet, Channel{LastSeq: 3, Latest: []byte("<urlset/>")}); err != nil {
		t.Fatal(err)
	}
	if c := read(false); c.LastSeq != 3 || c.Latest != nil {
		t.Fatalf("Channel: %+v", c)
	}
	if err := db.PutChannel("r", "p", AllSet, Channel{LastSeq: 4}); err != nil {
		t.Fatal(err)
	}
	if c := read(true); c.LastSeq != 4 || string(c.Latest) != "<urlset/>" {
		t.Fatalf("ChannelLatest after a put without a body: %+v", c)
	}
	// As an earlier version stored it: the body inside the cursor, no B/.
	err := db.update(func(txn *badger.Txn) error {
		if err := txn.Delete(key('B', "r", "p", AllSet)); err != nil {
			return err
		}
		return setJSON(txn, key('C', "r", "p", AllSet), Channel{LastSeq: 5, Latest: []byte("<old/>")})
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := read(true); c.LastSeq != 5 || string(c.Latest) != "<old/>" {
		t.Fatalf("ChannelLatest of an earlier store: %+v", c)
	}
}
