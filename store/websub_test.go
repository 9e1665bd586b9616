package store

import (
	"reflect"
	"testing"
	"time"
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
	if got, _ := begin(t, db).Channel("r", "p", AllSet); !reflect.DeepEqual(got, ch) {
		t.Fatalf("channel %+v", got)
	}
}
