package harvest

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// titleOnly is a stand-in conversion (the real one is bridge/crosswalk's):
// the derived record is the junii2 title in a namespace of its own, with a
// version mark; a record without a title cannot be derived. Records whose
// number is in drop cannot be derived either (a stricter converter).
func titleOnly(version string, drop func(id string) bool) Conversion {
	return Conversion{From: "junii2", To: "jpcoar_2.0", Version: version, Namespace: "urn:test:derived",
		Convert: func(meta []byte, id string) ([]byte, []string) {
			_, rest, ok := bytes.Cut(meta, []byte("<title>"))
			title, _, ok2 := bytes.Cut(rest, []byte("</title>"))
			if !ok || !ok2 {
				return nil, []string{"title-missing"}
			}
			if drop != nil && drop(id) {
				return nil, []string{"dropped-by-" + version}
			}
			mark := ""
			if version == "2" && strings.HasSuffix(id, "0") {
				mark = " v2" // version 2 changes the output of every tenth record only
			}
			return []byte(`<d xmlns="urn:test:derived">` + string(title) + mark + `</d>`), nil
		}}
}

// deriveFixture harvests a junii2-only synthetic repository with
// jpcoar_2.0 derived.
type deriveFixture struct {
	t   *testing.T
	clk *oaiserver.Clock
	up  *oaiserver.Synthetic
	cfg *config.Config
	db  *store.DB
}

func newDeriveFixture(t *testing.T, records int) *deriveFixture {
	f := &deriveFixture{t: t, clk: oaiserver.NewClock(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))}
	f.up = oaiserver.New(oaiserver.Options{Records: records, PageSize: 40, SetCount: 2, Prefixes: []string{"junii2"}, Now: f.clk.Now})
	srv := httptest.NewServer(f.up)
	t.Cleanup(srv.Close)
	cfg, err := config.ParseAndValidate(strings.NewReader(fmt.Sprintf("base_url: http://rs.example\ndefaults:\n  delay: 0s\n"+
		"repositories:\n  - name: demo\n    base_url: %s/oai\n    metadata_prefixes: [junii2]\n    derive: {jpcoar_2.0: junii2}\n", srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	if f.db, err = store.Open(store.Options{InMemory: true, Now: f.clk.Now, ChangeListLimit: 50000, ChangeListPeriod: time.Hour}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	return f
}

func (f *deriveFixture) harvest(conv Conversion) []Result {
	f.t.Helper()
	h, err := New(f.cfg, f.cfg.Repositories[0], f.db, Options{Now: f.clk.Now, Conversions: []Conversion{conv}})
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := h.Harvest(context.Background(), HarvestOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// derived is the result of the derived format in a run's results.
func derived(t *testing.T, res []Result) Counts {
	t.Helper()
	for _, r := range res {
		if r.Prefix == "jpcoar_2.0" {
			return r.Counts
		}
	}
	t.Fatalf("no jpcoar_2.0 result in %+v", res)
	return Counts{}
}

// state reads the live derived records, the quarantined ones, and the
// derived format's events since after.
func (f *deriveFixture) state(after uint64) (live map[string]string, quarantined map[string]string, events []string) {
	f.t.Helper()
	live, quarantined = map[string]string{}, map[string]string{}
	err := f.db.View(context.Background(), func(snap *store.Snap) error {
		if err := snap.Resources("demo", "jpcoar_2.0", store.AllSet, "", "", 1<<30, func(r *store.Record) error {
			b, err := snap.Metadata("demo", "jpcoar_2.0", r.Identifier)
			live[r.Identifier] = string(b)
			return err
		}); err != nil {
			return err
		}
		if _, err := snap.Quarantine("demo", "jpcoar_2.0", 1<<30, func(q store.Quarantined) error {
			quarantined[q.Identifier] = q.Reason
			return nil
		}); err != nil {
			return err
		}
		return snap.Events("demo", "jpcoar_2.0", after, func(ev *store.Event) error {
			events = append(events, ev.Change.String()+" "+ev.Identifier)
			return nil
		})
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return live, quarantined, events
}

func (f *deriveFixture) seq() uint64 {
	var c store.Counter
	f.db.View(context.Background(), func(snap *store.Snap) error {
		var err error
		c, err = snap.Counter("demo", "jpcoar_2.0")
		return err
	})
	return c.Seq
}

// TestDeriveFollowsTheSource: a junii2-only repository is published in
// jpcoar_2.0 too: every derivable record is derived with the source's
// datestamp and sets, the others are quarantined with their reasons; a
// changed upstream record changes both formats and nothing else; a new
// converter version updates only the records whose bytes change, and
// deletes (and quarantines) one it can no longer derive; an upstream
// deletion deletes the derived record.
func TestDeriveFollowsTheSource(t *testing.T) {
	f := newDeriveFixture(t, 120)
	c := derived(t, f.harvest(titleOnly("1", nil)))
	live, quarantined, events := f.state(0)
	// Items 29 and 79 have no title (oaiserver's junii2 faults).
	if len(live) != 118 || len(quarantined) != 2 || c.Created != 118 || c.Quarantined != 2 || len(events) != 118 {
		t.Fatalf("first harvest: %d derived, %d quarantined (%v), counts %+v, %d events", len(live), len(quarantined), quarantined, c, len(events))
	}
	for _, i := range []int{29, 79} {
		if why := quarantined[f.up.Identifier(i)]; !strings.Contains(why, "title-missing") {
			t.Errorf("item %d quarantined for %q", i, why)
		}
	}
	var rec *store.Record
	f.db.View(context.Background(), func(snap *store.Snap) error {
		var err error
		rec, err = snap.Record("demo", "jpcoar_2.0", f.up.Identifier(1))
		return err
	})
	src, _ := f.up.Item(1, "junii2")
	if rec == nil || !rec.Datestamp.Equal(src.Datestamp) || rec.Namespace != "urn:test:derived" || fmt.Sprint(rec.Sets) != fmt.Sprint(src.Sets) {
		t.Errorf("derived record 1: %+v; source datestamp %v sets %v", rec, src.Datestamp, src.Sets)
	}

	// An upstream change: both formats change, nothing else.
	before := f.seq()
	f.up.Update(1, f.clk.Add(time.Minute))
	f.clk.Add(time.Minute)
	if c := derived(t, f.harvest(titleOnly("1", nil))); c.Updated != 1 || c.Created+c.Deleted != 0 {
		t.Errorf("after one upstream update: derived counts %+v", c)
	}
	if _, _, events := f.state(before); fmt.Sprint(events) != fmt.Sprintf("[updated %s]", f.up.Identifier(1)) {
		t.Errorf("events after one upstream update: %v", events)
	}

	// A new converter: only the records whose bytes change are updated;
	// one it cannot derive is deleted and quarantined.
	before = f.seq()
	drop := f.up.Identifier(2)
	c = derived(t, f.harvest(titleOnly("2", func(id string) bool { return id == drop })))
	live, quarantined, events = f.state(before)
	changedByV2 := 0
	for id := range live {
		if strings.HasSuffix(id, "0") {
			changedByV2++
		}
	}
	if c.Updated != int64(changedByV2) || c.Deleted != 1 || len(events) != changedByV2+1 || !strings.Contains(quarantined[drop], "dropped-by-2") {
		t.Errorf("converter version 2: counts %+v, %d events (%d records change), quarantine of %s: %q", c, len(events), changedByV2, drop, quarantined[drop])
	}
	if _, ok := live[drop]; ok {
		t.Errorf("%s is still derived", drop)
	}

	// An upstream deletion deletes the derived record.
	before = f.seq()
	f.up.Delete(3, f.clk.Add(time.Minute))
	f.clk.Add(time.Minute)
	f.harvest(titleOnly("2", func(id string) bool { return id == drop }))
	if _, _, events := f.state(before); fmt.Sprint(events) != fmt.Sprintf("[deleted %s]", f.up.Identifier(3)) {
		t.Errorf("events after an upstream deletion: %v", events)
	}
	// A run with nothing new changes nothing.
	before = f.seq()
	if c := derived(t, f.harvest(titleOnly("2", func(id string) bool { return id == drop }))); c.Changes() != 0 || f.seq() != before {
		t.Errorf("a run with nothing new: %+v", c)
	}
}
