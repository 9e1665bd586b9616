package bridge

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// TestSecretsNeverPublished: credentials in a repository base_url (Basic
// auth as user:password@, a token in the query) reach the repository and
// appear in no document, page, status, error or log line (issue 21, item 1:
// they were printed in every via link, on /, /status.json, about.html,
// errors and logs).
func TestSecretsNeverPublished(t *testing.T) {
	const pass, token = "PASSW0RDxyz", "T0KENxyz"
	up := oaiserver.New(oaiserver.Options{Records: 30, SetCount: 2, PageSize: 10})
	var authed, refused, failOnce atomic.Int64
	failOnce.Store(1)
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != "svcuser" || p != pass || r.URL.Query().Get("token") != token {
			refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("verb") == "ListRecords" && failOnce.Add(-1) == 0 {
			http.Error(w, "try again", http.StatusServiceUnavailable) // an error that gets logged and retried
			return
		}
		authed.Add(1)
		q := r.URL.Query()
		q.Del("token")
		r.URL.RawQuery = q.Encode()
		up.ServeHTTP(w, r)
	}))
	defer upSrv.Close()
	base := strings.Replace(upSrv.URL, "http://", "http://svcuser:"+pass+"@", 1) + "/oai?token=" + token
	cfg := demoConfig(t, fmt.Sprintf("base_url: http://rs.test\ndefaults:\n  delay: 0s\n  max_retries: 2\n  backoff_base: 1ms\n  backoff_max: 1ms\nrepositories:\n  - name: demo\n    base_url: %q\n    metadata_prefixes: [oai_dc]\n", base))
	db := openStore(t, store.Options{InMemory: true})
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Harvest(context.Background(), harvest.HarvestOptions{}); err != nil {
		t.Fatal(err)
	}
	if authed.Load() == 0 || refused.Load() != 0 {
		t.Fatalf("the upstream saw %d authenticated and %d refused requests", authed.Load(), refused.Load())
	}
	// A failing run: its error and log lines name the URL.
	cfgBad := demoConfig(t, fmt.Sprintf("base_url: http://rs.test\ndefaults:\n  delay: 0s\n  max_retries: 0\nrepositories:\n  - name: demo\n    base_url: %q\n    metadata_prefixes: [oai_dc]\n", strings.Replace(base, upSrv.URL[len("http://"):], "127.0.0.1:1", 1)))
	hBad, err := harvest.New(cfgBad, cfgBad.Repositories[0], openStore(t, store.Options{InMemory: true}), harvest.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	_, runErr := hBad.Harvest(context.Background(), harvest.HarvestOptions{})
	if runErr == nil || !strings.Contains(runErr.Error(), "127.0.0.1:1") {
		t.Fatalf("the failing run: %v", runErr)
	}

	srv := mustServer(t, cfg, db, ServerOptions{Logger: log})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	seen := map[string][]byte{}
	var fetch func(u string)
	fetch = func(u string) {
		u = strings.Replace(u, "http://rs.test", hs.URL, 1)
		if _, ok := seen[u]; ok || !strings.HasPrefix(u, hs.URL) || strings.Contains(u, "/resource/") || strings.Contains(u, "/map") || strings.HasSuffix(u, "/websub") || strings.Contains(u, "/dump/") {
			return
		}
		b, err := churnGet(context.Background(), hs.Client(), u)
		if err != nil {
			t.Fatal(err)
		}
		seen[u] = b
		if doc, err := rsync.Parse(bytes.NewReader(b)); err == nil {
			for _, l := range doc.Links {
				fetch(l.Href)
			}
			for _, e := range doc.Entries {
				fetch(e.Loc)
				for _, l := range e.Links {
					fetch(l.Href)
				}
			}
		}
	}
	for _, p := range []string{"/", "/status.json", "/.well-known/resourcesync", "/robots.txt"} {
		fetch("http://rs.test" + p)
	}
	vias := 0
	for u, b := range seen {
		for _, secret := range []string{pass, token, "svcuser"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s publishes %q", u, secret)
			}
		}
		vias += bytes.Count(b, []byte(`rel="via"`))
	}
	if vias == 0 || len(seen) < 10 {
		t.Fatalf("read %d documents with %d via links: the walk found too little", len(seen), vias)
	}
	for _, secret := range []string{pass, token} {
		if strings.Contains(logs.String(), secret) || strings.Contains(runErr.Error(), secret) {
			t.Errorf("the logs or the run's error show %q:\n%s\n%v", secret, logs.String(), runErr)
		}
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Errorf("no retry was logged (the test wants the URL in a log line):\n%.2000s", logs.String())
	}
}
