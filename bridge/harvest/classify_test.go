package harvest

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// TestClassify is the table of the harvest issue's rules: every case gives the
// stored state, what arrived, and the outcome, event, state and bytes that
// must follow.
func TestClassify(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 6, d, 0, 0, 0, 0, time.UTC) }
	now := day(20)
	a := []byte(`<dc xmlns="http://purl.org/dc/elements/1.1/"><identifier>https://repo.example/item/1</identifier></dc>`)
	b := []byte(`<dc xmlns="http://purl.org/dc/elements/1.1/"><title>changed</title></dc>`)
	sum := func(m []byte) string { h := sha256.Sum256(m); return hex.EncodeToString(h[:]) }
	live := func(meta []byte, ds time.Time, sets ...string) *store.Record {
		return &store.Record{Identifier: "oai:x:1", Datestamp: ds, Sets: sets, SHA256: sum(meta), Length: int64(len(meta)),
			Landing: "https://repo.example/item/1", FirstSeen: day(1), Modified: day(2), Seq: 7}
	}
	gone := func(ds time.Time) *store.Record {
		r := live(a, ds)
		r.Deleted = true
		return r
	}
	rec := func(meta []byte, ds time.Time, sets ...string) *oaipmh.Record {
		return &oaipmh.Record{Header: oaipmh.Header{Identifier: "oai:x:1", Datestamp: ds, SetSpecs: sets}, Metadata: meta}
	}
	del := func(ds time.Time, sets ...string) *oaipmh.Record {
		return &oaipmh.Record{Header: oaipmh.Header{Identifier: "oai:x:1", Datestamp: ds, SetSpecs: sets, Deleted: true}}
	}
	type want struct {
		outcome    outcome
		change     store.Change // 0: no event
		before     []string     // event's expanded sets
		after      []string
		write      bool // a new state is stored
		bytes      bool // new metadata bytes are stored
		deleted    bool // the stored state is a tombstone
		firstSeen  time.Time
		keepsSeq   bool // a state written without an event keeps Modified and Seq
		landing    string
		datestamp  time.Time
		setsStored []string
	}
	cases := []struct {
		name string
		old  *store.Record
		in   *oaipmh.Record
		want want
	}{
		{"new record", nil, rec(a, day(3), "b:c", "a"),
			// firstSeen zero: the store gives it the created event's time.
			want{outcome: created, change: store.Created, after: []string{"a", "b", "b:c"}, write: true, bytes: true,
				landing: "https://repo.example/item/1", datestamp: day(3), setsStored: []string{"a", "b:c"}}},
		{"first seen deleted: tombstone", nil, del(day(3), "a"),
			want{outcome: tombstone, write: true, deleted: true, firstSeen: now, datestamp: day(3), setsStored: []string{"a"}}},
		{"content hash changed", live(a, day(3), "a"), rec(b, day(4), "a"),
			want{outcome: updated, change: store.Updated, before: []string{"a"}, after: []string{"a"}, write: true, bytes: true,
				firstSeen: day(1), datestamp: day(4), setsStored: []string{"a"}}},
		{"set membership changed: a set move with the stored bytes", live(a, day(3), "a"), rec(a, day(4), "b"),
			want{outcome: updated, change: store.Updated, before: []string{"a"}, after: []string{"b"}, write: true,
				firstSeen: day(1), landing: "https://repo.example/item/1", datestamp: day(4), setsStored: []string{"b"}}},
		{"datestamp bump only: no event, the new datestamp kept", live(a, day(3), "a"), rec(a, day(5), "a"),
			want{outcome: unchanged, write: true, keepsSeq: true, firstSeen: day(1), landing: "https://repo.example/item/1",
				datestamp: day(5), setsStored: []string{"a"}}},
		{"same membership written differently: no event", live(a, day(3), "a", "b"), rec(a, day(3), "b", "a", "b"),
			want{outcome: unchanged}},
		{"identical again (a replayed page)", live(a, day(3), "a"), rec(a, day(3), "a"),
			want{outcome: unchanged}},
		{"stale datestamp ignored", live(a, day(3), "a"), rec(b, day(2), "b"),
			want{outcome: stale}},
		{"deleted upstream", live(a, day(3), "a:x"), del(day(4)),
			want{outcome: deleted, change: store.Deleted, before: []string{"a", "a:x"}, write: true, deleted: true,
				firstSeen: day(1), landing: "https://repo.example/item/1", datestamp: day(4), setsStored: []string{"a:x"}}},
		{"deleted again with the same datestamp", gone(day(4)), del(day(4)),
			want{outcome: unchanged}},
		{"deleted again with a newer datestamp: kept, no event", gone(day(4)), del(day(6)),
			want{outcome: unchanged, write: true, deleted: true, keepsSeq: true, firstSeen: day(1), landing: "https://repo.example/item/1", datestamp: day(6)}},
		{"revived after a deletion", gone(day(4)), rec(b, day(6), "a"),
			want{outcome: created, change: store.Created, after: []string{"a"}, write: true, bytes: true,
				firstSeen: day(1), datestamp: day(6), setsStored: []string{"a"}}},
		{"no identifier", nil, &oaipmh.Record{Metadata: a}, want{outcome: skipped}},
		{"live without metadata", nil, rec(nil, day(3)), want{outcome: skipped}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := classify(c.old, c.in, "repo.example", now)
			check(t, d, c.want.outcome, c.want.change, c.want.before, c.want.after)
			w := c.want
			if (d.next != nil) != w.write || (d.metadata != nil) != w.bytes {
				t.Fatalf("writes state %v bytes %v, want %v %v", d.next != nil, d.metadata != nil, w.write, w.bytes)
			}
			if d.next == nil {
				return
			}
			n := d.next
			if n.Deleted != w.deleted || !n.FirstSeen.Equal(w.firstSeen) || n.Landing != w.landing ||
				!n.Datestamp.Equal(w.datestamp) || !slices.Equal(n.Sets, w.setsStored) {
				t.Errorf("state %+v", n)
			}
			if w.keepsSeq != (n.Seq == 7 && n.Modified.Equal(day(2))) && d.event == nil {
				t.Errorf("state without event: seq %d modified %v", n.Seq, n.Modified)
			}
			if d.event != nil && !d.event.Datestamp.Equal(c.in.Header.Datestamp) {
				t.Errorf("event datestamp %v", d.event.Datestamp)
			}
			if d.event != nil && d.event.Change != store.Deleted && (d.event.SHA256 != n.SHA256 || d.event.Length != n.Length) {
				t.Errorf("event fixity %+v vs state %+v", d.event, n)
			}
			// Classifying again against the result changes nothing (replay).
			again := *n
			if d.event != nil {
				again.Seq, again.Modified = 99, now
			}
			if r := classify(&again, c.in, "repo.example", now); r.outcome != unchanged || r.next != nil || r.event != nil {
				t.Errorf("replay: %+v", r)
			}
		})
	}
}

// TestClassifyReconciliation: the rules of a complete ListIdentifiers pass.
func TestClassifyReconciliation(t *testing.T) {
	ds := time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)
	liveRec := &store.Record{Identifier: "oai:x:1", Datestamp: ds, Sets: []string{"a"}, SHA256: "ab", MD5: "cd", Length: 9, Seq: 3}
	dead := &store.Record{Identifier: "oai:x:1", Datestamp: ds, Deleted: true}
	hd := func(deleted bool, sets ...string) *oaipmh.Header {
		return &oaipmh.Header{Identifier: "oai:x:1", Datestamp: ds, SetSpecs: sets, Deleted: deleted}
	}
	cases := []struct {
		name          string
		d             decision
		outcome       outcome
		change        store.Change
		before, after []string
	}{
		{"listed, unchanged", classifyListed(liveRec, hd(false, "a")), unchanged, 0, nil, nil},
		{"listed but unknown: fetch it", classifyListed(nil, hd(false, "a")), fetch, 0, nil, nil},
		{"listed but held deleted: fetch it", classifyListed(dead, hd(false)), fetch, 0, nil, nil},
		{"listed with other sets: a set move", classifyListed(liveRec, hd(false, "b:c")), updated, store.Updated, []string{"a"}, []string{"b", "b:c"}},
		{"listed deleted", classifyListed(liveRec, hd(true)), deleted, store.Deleted, []string{"a"}, nil},
		{"listed deleted, unknown", classifyListed(nil, hd(true)), unchanged, 0, nil, nil},
		{"reconciliation delete: live but unlisted", classifyUnseen(liveRec), deleted, store.Deleted, []string{"a"}, nil},
		{"reconciliation delete of a tombstone", classifyUnseen(dead), unchanged, 0, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check(t, c.d, c.outcome, c.change, c.before, c.after)
			if c.outcome == updated && (c.d.metadata != nil || c.d.event.SHA256 != "ab" || c.d.next.Seq != 3) {
				t.Errorf("a set move keeps the stored bytes and fixity: %+v %+v", c.d.next, c.d.event)
			}
			if c.outcome == deleted && (!c.d.next.Deleted || c.d.metadata != nil) {
				t.Errorf("delete: %+v", c.d.next)
			}
		})
	}
}

func check(t *testing.T, d decision, o outcome, change store.Change, before, after []string) {
	t.Helper()
	if d.outcome != o {
		t.Fatalf("outcome %d, want %d (%+v)", d.outcome, o, d)
	}
	if change == 0 {
		if d.event != nil {
			t.Fatalf("unexpected event %+v", d.event)
		}
		return
	}
	if d.event == nil || d.event.Change != change || !slices.Equal(d.event.SetsBefore, before) || !slices.Equal(d.event.SetsAfter, after) {
		t.Fatalf("event %+v, want %s %v→%v", d.event, change, before, after)
	}
}
