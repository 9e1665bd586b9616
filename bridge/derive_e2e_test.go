package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/mirror"
	"github.com/rsbridge/rsbridge/bridge/mirror/mirrortest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// TestDerivedFormatEndToEnd: a repository that offers only junii2 is
// published in jpcoar_2.0 too (derive, bridge/crosswalk): a destination
// following the jpcoar_2.0 resource sets holds every derivable record,
// byte for byte; the entries say where each came from (via the junii2
// GetRecord) and which schema it follows (profile); an upstream change
// reaches both formats and the destination again.
func TestDerivedFormatEndToEnd(t *testing.T) {
	clk := oaiserver.NewClock(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))
	up := oaiserver.New(oaiserver.Options{Records: 150, PageSize: 50, SetCount: 2, Prefixes: []string{"junii2"}, Now: clk.Now})
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	srv := httptest.NewUnstartedServer(nil)
	cfg, err := config.ParseAndValidate(strings.NewReader(fmt.Sprintf("base_url: http://%s\ndefaults:\n  delay: 0s\n"+
		"repositories:\n  - name: demo\n    base_url: %s/oai\n    metadata_prefixes: [junii2]\n    derive: {jpcoar_2.0: junii2}\n",
		srv.Listener.Addr(), upSrv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	db := openStore(t, store.Options{InMemory: true, Now: clk.Now})
	h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	harvestNow := func() {
		if _, err := h.Harvest(context.Background(), harvest.HarvestOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	harvestNow()
	src := source.New(cfg, db)
	metrics := NewMetrics()
	metrics.Watch(cfg, db, nil, nil)
	srv.Config.Handler = mustServer(t, cfg, db, ServerOptions{Source: src, Now: clk.Now, Metrics: metrics}).Handler()
	srv.Start()
	defer srv.Close()

	copyDir, stateDir := t.TempDir(), t.TempDir()
	sync := func() {
		t.Helper()
		m, err := mirror.New(stateDir, mirror.Options{Dir: copyDir, Delete: true, Sets: []string{"/demo/jpcoar_2.0/all/capabilitylist.xml", "/demo/jpcoar_2.0/set/*/capabilitylist.xml"}, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := m.Run(context.Background(), srv.URL+"/.well-known/resourcesync"); err != nil {
			t.Fatal(err)
		}
		url := func(repo, prefix, id string) string { return source.ResourceURL(src.Base(), repo, prefix, id) }
		for _, d := range mirrortest.Differences(t, db, []mirrortest.Format{{Repo: "demo", Prefix: "jpcoar_2.0"}}, copyDir, url, mirror.Path) {
			t.Error(d)
		}
	}
	sync()

	// The entries of a derived record: via the junii2 GetRecord, profile
	// the JPCOAR 2.0 schema, alternate the junii2 record.
	_, body := getBody(t, http.DefaultClient, src.All(cfg.Repositories[0], "jpcoar_2.0").ResourceList())
	doc, err := rsync.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Entries) != 147 { // items 29, 79 and 129 have no title: quarantined, not derived
		var q []string
		db.View(context.Background(), func(snap *store.Snap) error {
			_, err := snap.Quarantine("demo", "jpcoar_2.0", 10, func(r store.Quarantined) error {
				q = append(q, r.Identifier+": "+r.Reason)
				return nil
			})
			return err
		})
		t.Errorf("the jpcoar_2.0 Resource List has %d entries, want 147; quarantined: %v", len(doc.Entries), q)
	}
	links := map[string]string{}
	for _, l := range doc.Entries[0].Links {
		links[l.Rel] = l.Href
	}
	if !strings.Contains(links["via"], "metadataPrefix=junii2") || links["profile"] != "https://github.com/JPCOAR/schema/blob/master/2.0/" ||
		!strings.Contains(links["alternate"], "/demo/junii2/resource/") {
		t.Errorf("links of a derived record: %v", links)
	}

	// The record checks: on status.json and /metrics.
	var st Status
	if _, b := getBody(t, http.DefaultClient, srv.URL+"/status.json"); json.Unmarshal(b, &st) != nil {
		t.Fatalf("status.json: %s", b)
	}
	formats := map[string]FormatReport{}
	for _, fr := range st.Repositories[0].Formats {
		formats[fr.Prefix] = fr
	}
	if q := formats["junii2"].Quality; q == nil || q.Checked != 150 || q.Codes["title-missing"] != 3 || len(q.Affected) == 0 {
		t.Errorf("junii2 quality on status.json: %+v", q)
	}
	if fr := formats["jpcoar_2.0"]; fr.DerivedFrom != "junii2" || fr.Quality == nil || fr.Quarantined != 3 {
		t.Errorf("jpcoar_2.0 on status.json: derived from %q, quality %+v, %d quarantined", fr.DerivedFrom, fr.Quality, fr.Quarantined)
	}
	if _, m := getBody(t, http.DefaultClient, srv.URL+"/metrics"); !strings.Contains(string(m), `rsbridge_quality_code_records{code="title-missing",prefix="junii2"} 3`) {
		t.Errorf("/metrics lacks the junii2 title-missing count")
	}

	if _, home := getBody(t, http.DefaultClient, srv.URL+"/"); !strings.Contains(string(home), "Record checks of <code>junii2</code>") || !strings.Contains(string(home), "(derived from <code>junii2</code>)") ||
		!strings.Contains(string(home), "not derived from <code>junii2</code>") {
		t.Errorf("the status page does not show the record checks")
	}

	// An upstream change reaches both formats.
	var before store.Counter
	db.View(context.Background(), func(snap *store.Snap) error {
		var err error
		before, err = snap.Counter("demo", "jpcoar_2.0")
		return err
	})
	clk.Add(time.Minute)
	up.Update(5, clk.Add(time.Minute))
	clk.Add(time.Minute)
	harvestNow()
	var n int
	db.View(context.Background(), func(snap *store.Snap) error {
		return snap.Events("demo", "jpcoar_2.0", before.Seq, func(ev *store.Event) error {
			if ev.Identifier == up.Identifier(5) && ev.Change == store.Updated {
				n++
			}
			return nil
		})
	})
	if n != 1 {
		t.Errorf("the upstream update made %d updated events in jpcoar_2.0, want 1", n)
	}
	sync()
}
