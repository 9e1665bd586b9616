package bridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// TestExportOnStatusAndMetrics: the static export's runs, objects and lag
// are on the status page, in status.json and on /metrics.
func TestExportOnStatusAndMetrics(t *testing.T) {
	db := openStore(t, store.Options{InMemory: true})
	cfg := config.Default()
	cfg.BaseURL = "http://static.example"
	cfg.Repositories = []config.Repository{{Name: "bench", BaseURL: "https://repo.example/oai", MetadataPrefixes: []string{"oai_dc"}}}
	cfg.SetDefaults()
	meta := []byte(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"/>`)
	if err := buildFormat(db, "oai_dc", 30, meta, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	dir, err := objstore.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := source.New(cfg, db)
	e := export.New(src, db, dir, export.Options{TempDir: t.TempDir()})
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	changeRecords(t, db, 30, 3) // three changes not exported yet
	metrics := NewMetrics()
	metrics.WatchExport(e)
	srv := httptest.NewServer(mustServer(t, cfg, db, ServerOptions{Source: src, Exporter: e, Metrics: metrics}).Handler())
	defer srv.Close()
	get := func(path string) string {
		_, b := getBody(t, http.DefaultClient, srv.URL+path)
		return string(b)
	}
	var st Status
	if err := json.Unmarshal([]byte(get("/status.json")), &st); err != nil {
		t.Fatal(err)
	}
	if x := st.Export; x == nil || x.Runs != 1 || x.Objects == 0 || x.PendingChanges != 3 || x.OldestPending.IsZero() || x.Last == nil {
		t.Errorf("status.json export: %+v", x)
	}
	if home := get("/"); !strings.Contains(home, "Static export") || !strings.Contains(home, "3 changes not exported yet") {
		t.Errorf("the status page does not report the export")
	}
	m := get("/metrics")
	for _, want := range []string{"rsbridge_export_runs_total 1", "rsbridge_export_pending_changes 3", "rsbridge_export_objects_total ", "rsbridge_export_lag_seconds "} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
