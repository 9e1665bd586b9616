package bridge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// TestPacerIgnoresOperators: the operator's requests (status, metrics,
// health, admin) do not make harvests give way; a destination's do.
func TestPacerIgnoresOperators(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("admin:\n  token: pacer-test-token-0123456789\nrepositories:\n  - name: demo\n    base_url: http://demo.invalid/oai\n"))
	if err != nil {
		t.Fatal(err)
	}
	pacer := harvest.NewPacer(25)
	db := openStore(t, store.Options{InMemory: true})
	h := mustServer(t, cfg, db, ServerOptions{DumpDir: t.TempDir(), CacheDir: t.TempDir(), Pacer: pacer, Metrics: NewMetrics()}).Handler()
	for _, path := range []string{"/", "/status.json", "/metrics", "/healthz", "/readyz", "/admin/status"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code >= 500 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		if pacer.Serving() {
			t.Fatalf("%s made harvests give way", path)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/demo/oai_dc/all/resourcelist.xml", nil))
	if !pacer.Serving() {
		t.Fatalf("a Resource List request (%d) did not make harvests give way", w.Code)
	}
}
