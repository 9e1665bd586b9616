package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

const testToken = "cli-admin-token-0123456789"

// heldUpstream serves a synthetic repository; while hold is set, list pages
// after the first wait until the request is cancelled or hold is cleared.
type heldUpstream struct {
	up   http.Handler
	hold atomic.Bool
	held atomic.Int32 // requests waiting now
}

func (h *heldUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.hold.Load() && r.URL.Query().Get("resumptionToken") != "" {
		h.held.Add(1)
		defer h.held.Add(-1)
		for h.hold.Load() {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	h.up.ServeHTTP(w, r)
}

// writeConfig writes a configuration for one repository at upstream.
func writeConfig(t *testing.T, dir, data, upstream, extra string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.Base(data)+".yaml")
	y := fmt.Sprintf("listen: 127.0.0.1:0\ndata_dir: %s\nlog_level: info\ndefaults:\n  delay: 0s\n%srepositories:\n  - name: r\n    base_url: %s/oai\n    schedule: \"@every 1h\"\n",
		data, extra, upstream)
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startServe runs "serve -config" in the background and returns its base URL
// and a stop function that interrupts it and returns its exit code.
func startServe(t *testing.T, cfg string, hup chan os.Signal) (string, *syncBuffer, func() int) {
	base, _, errb, stop := startServeOut(t, cfg, hup)
	return base, errb, stop
}

// startServeOut is startServe that also returns serve's standard output.
func startServeOut(t *testing.T, cfg string, hup chan os.Signal) (string, *syncBuffer, *syncBuffer, func() int) {
	return startCmd(t, []string{"serve", "-config", cfg}, hup)
}

// startCmd runs a serving command (serve, demo) until it announces its
// Source Description.
func startCmd(t *testing.T, args []string, hup chan os.Signal) (string, *syncBuffer, *syncBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	code := make(chan int, 1)
	go func() { code <- runWith(ctx, args, &out, &errb, hup) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, rest, ok := strings.Cut(out.String(), "Source Description: ")
		if ok {
			base := strings.TrimSuffix(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), "/.well-known/resourcesync")
			stopped := false
			stop := func() int {
				if stopped {
					return 0
				}
				stopped = true
				cancel()
				return <-code
			}
			t.Cleanup(func() { stop() })
			return base, &out, &errb, stop
		}
		select {
		case c := <-code:
			t.Fatalf("serve exited with %d\n%s", c, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready\n%s", errb.String())
		}
	}
}

// cli runs one command to the end.
func cli(ctx context.Context, args ...string) (int, string) {
	var out, errb syncBuffer
	code := run(ctx, args, &out, &errb)
	return code, out.String() + errb.String()
}

// TestHandOffToRunningServer: harvest, reconcile and backup on a data
// directory held by serve go through its admin API; the backup restores
// into a new directory that serves the same lists.
func TestHandOffToRunningServer(t *testing.T) {
	dir := t.TempDir()
	up := httptest.NewServer(oaiserver.New(oaiserver.Options{Records: 230, PageSize: 50, DeletedRecord: "transient"}))
	defer up.Close()
	cfg := writeConfig(t, dir, filepath.Join(dir, "data"), up.URL, "admin:\n  token: "+testToken+"\n")
	base, serveLog, stop := startServe(t, cfg, nil)
	ctx := context.Background()

	// Without the admin API URL the CLI reads listen: 127.0.0.1:0, which
	// names no port: it must say what to do.
	if code, out := cli(ctx, "harvest", "-config", cfg); code != 1 || !strings.Contains(out, "data directory is in use") {
		t.Fatalf("harvest without -admin-url: %d\n%s", code, out)
	}
	code, out := cli(ctx, "harvest", "-config", cfg, "-full", "-admin-url", base)
	if code != 0 || !strings.Contains(out, "handing the full-harvest to it") || !strings.Contains(out, "full-harvest done on the server") ||
		!strings.Contains(out, "230 records") {
		t.Fatalf("harvest through the server: %d\n%s", code, out)
	}
	code, out = cli(ctx, "reconcile", "-config", cfg, "-admin-url", base)
	if code != 0 || !strings.Contains(out, "reconcile done on the server") {
		t.Fatalf("reconcile through the server: %d\n%s", code, out)
	}
	// A wrong token is refused with advice.
	bad := writeConfig(t, t.TempDir(), filepath.Join(dir, "data"), up.URL, "admin:\n  token: wrong-token-0123456789\n")
	if code, out := cli(ctx, "harvest", "-config", bad, "-admin-url", base); code != 1 || !strings.Contains(out, "refused the token") {
		t.Fatalf("wrong token: %d\n%s", code, out)
	}

	backup := filepath.Join(dir, "rsbridge.backup")
	if code, out := cli(ctx, "backup", "-config", cfg, "-o", backup, "-admin-url", base); code != 0 || !strings.Contains(out, "backup written to") {
		t.Fatalf("backup: %d\n%s", code, out)
	}
	_, want := fetch(base + "/r/oai_dc/all/resourcelist.xml")
	if c := stop(); c != 0 || strings.Contains(serveLog.String(), "level=ERROR") {
		t.Fatalf("serve exit %d\n%s", c, serveLog.String())
	}

	// Restore refuses a directory in use or not empty, then restores.
	if code, out := cli(ctx, "restore", "-config", cfg, "-i", backup); code != 1 || !strings.Contains(out, "not empty") {
		t.Fatalf("restore over data: %d\n%s", code, out)
	}
	cfg2 := writeConfig(t, dir, filepath.Join(dir, "restored"), up.URL, "")
	if code, out := cli(ctx, "restore", "-config", cfg2, "-i", backup); code != 0 || !strings.Contains(out, "restored") {
		t.Fatalf("restore: %d\n%s", code, out)
	}
	base2, _, stop2 := startServe(t, cfg2, nil)
	_, got := fetch(base2 + "/r/oai_dc/all/resourcelist.xml")
	norm := func(s, base string) string {
		s = strings.ReplaceAll(s, base, "BASE")
		_, s, _ = strings.Cut(s, `completed="`) // served-at times differ
		_, s, _ = strings.Cut(s, `"`)
		return s
	}
	if norm(want, base) != norm(got, base2) || strings.Count(got, "<url>") < 200 {
		t.Fatalf("restored store serves another list:\n%.600s\n---\n%.600s", want, got)
	}
	stop2()
}

// TestInterruptedHarvest: Ctrl-C during a harvest exits 130, says where the
// next run resumes, and logs no error; the next run resumes there.
func TestInterruptedHarvest(t *testing.T) {
	dir := t.TempDir()
	h := &heldUpstream{up: oaiserver.New(oaiserver.Options{Records: 250, PageSize: 100})}
	h.hold.Store(true)
	up := httptest.NewServer(h)
	defer up.Close()
	cfg := writeConfig(t, dir, filepath.Join(dir, "data"), up.URL, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var code int
	var out string
	go func() { code, out = cli(ctx, "harvest", "-config", cfg); close(done) }()
	for deadline := time.Now().Add(30 * time.Second); h.held.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("page 2 never requested")
		}
	}
	cancel()
	<-done
	if code != exitInterrupted || !strings.Contains(out, "interrupted; r: the next run resumes oai_dc at page 2 (100 records kept)") ||
		strings.Contains(out, "level=ERROR") || strings.Contains(out, "resumptionToken") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	h.hold.Store(false)
	code, out = cli(context.Background(), "harvest", "-config", cfg)
	if code != 0 || !strings.Contains(out, "r oai_dc: 2 pages, 150 records") {
		t.Fatalf("resumed run: %d\n%s", code, out)
	}
}

// TestRemoteInterrupt: Ctrl-C on a harvest handed to the server cancels the
// server's run, which stops after its committed page.
func TestRemoteInterrupt(t *testing.T) {
	dir := t.TempDir()
	h := &heldUpstream{up: oaiserver.New(oaiserver.Options{Records: 250, PageSize: 100})}
	up := httptest.NewServer(h)
	defer up.Close()
	cfg := writeConfig(t, dir, filepath.Join(dir, "data"), up.URL, "admin:\n  token: "+testToken+"\n")
	h.hold.Store(true)
	base, _, stop := startServe(t, cfg, nil) // its first harvest holds at page 2
	for deadline := time.Now().Add(30 * time.Second); h.held.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("page 2 never requested")
		}
	}
	// The CLI waits for the server's own run, then starts its own, which
	// holds at page 2 too; interrupt it there.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var code int
	var out string
	go func() { code, out = cli(ctx, "harvest", "-config", cfg, "-full", "-admin-url", base); close(done) }()
	time.Sleep(300 * time.Millisecond) // the CLI finds the server busy
	req, _ := http.NewRequest(http.MethodPost, base+"/admin/repos/r/cancel", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("cancel the scheduled run: %v %v", resp, err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(mustStatus(t, base), `"kind": "full-harvest"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the CLI's full harvest did not start\n%s", mustStatus(t, base))
		}
	}
	for deadline := time.Now().Add(30 * time.Second); h.held.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the CLI's harvest never reached page 2")
		}
	}
	cancel()
	<-done
	if code != exitInterrupted || !strings.Contains(out, "waiting for it to end") || !strings.Contains(out, "the server stopped the run; r: the next run resumes oai_dc at page 2 (100 records kept)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if strings.Contains(mustStatus(t, base), `"running"`) {
		t.Fatal("the server still runs the cancelled harvest")
	}
	h.hold.Store(false)
	stop()
}

func mustStatus(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/admin/repos/r", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestSIGHUP: SIGHUP reloads the log level, names what needs a restart,
// survives a broken file, and never stops serve.
func TestSIGHUP(t *testing.T) {
	dir := t.TempDir()
	up := httptest.NewServer(oaiserver.New(oaiserver.Options{Records: 10}))
	defer up.Close()
	data := filepath.Join(dir, "data")
	cfg := writeConfig(t, dir, data, up.URL, "debug:\n  listen: 127.0.0.1:0\n")
	hup := make(chan os.Signal, 1)
	base, stdout, log, stop := startServeOut(t, cfg, hup)
	// The opt-in pprof listener (debug.listen) serves on its own address.
	_, rest, ok := strings.Cut(stdout.String(), "pprof on ")
	if !ok {
		t.Fatalf("no pprof listener announced:\n%s", stdout.String())
	}
	if code, body := fetch(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]) + "goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("pprof: %d %.200s", code, body)
	}
	if code, _ := fetch(base + "/debug/pprof/"); code != 404 {
		t.Errorf("pprof on the public address: %d", code)
	}
	signal := func(want string) {
		t.Helper()
		hup <- syscall.SIGHUP
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), want); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in\n%s", want, log.String())
			}
		}
		if code, _ := fetch(base + "/healthz"); code != 200 {
			t.Fatalf("not serving after SIGHUP: %d", code)
		}
	}
	y, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(y), "log_level: info", "log_level: debug\nserver:\n  max_streams: 4", 1)), 0o644)
	signal("SIGHUP: log level changed")
	signal("take effect after a restart")
	if !strings.Contains(log.String(), `keys=server`) {
		t.Errorf("the changed key is not named:\n%s", log.String())
	}
	os.WriteFile(cfg, []byte("listen: [broken\n"), 0o644)
	signal("the configuration has problems; nothing was changed")
	if code := stop(); code != 0 {
		t.Fatalf("exit %d\n%s", code, log.String())
	}
	if strings.Count(log.String(), "level=ERROR") != 1 { // only the broken file
		t.Errorf("errors logged:\n%s", log.String())
	}
}
