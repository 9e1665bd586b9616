package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

func TestRunCommands(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("repositories:\n  - name: Bad Name\n    base_url: ftp://x\n    colour: blue\n"), 0o644)
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("data_dir: "+filepath.Join(dir, "d")+"\nrepositories:\n  - name: r\n    base_url: http://127.0.0.1:1/oai\n    max_retries: 0\n"), 0o644)
	// Keys in the environment, so the S3 credentials chain never asks an
	// instance-metadata endpoint.
	t.Setenv("AWS_ACCESS_KEY_ID", "test-access")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	s3conf := filepath.Join(dir, "s3.yaml")
	os.WriteFile(s3conf, []byte("data_dir: "+filepath.Join(dir, "d3")+"\nexport:\n  target: s3://bucket/p\n  endpoint: http://127.0.0.1:1\nrepositories:\n  - name: r\n    base_url: http://127.0.0.1:1/oai\n"), 0o644)
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "", "Usage:"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"version"}, 0, "rsbridge 0.1.0", ""},
		{[]string{"--version"}, 0, "  go         go1.", ""},
		{[]string{"serve", "-oai", "ftp://x.example/oai"}, 2, "", `-oai "ftp://x.example/oai": must be an absolute http or https URL`},
		{[]string{"serve", "-oai", "http://x.example/oai", "-listen", "nonsense"}, 2, "", "-listen: must be host:port"},
		{[]string{"serve", "-oai", "http://x.example/oai", "-base-url", "ftp://proxy"}, 2, "", "-base-url: "},
		{[]string{"backup", "-config", good}, 2, "", "-o FILE is required"},
		{[]string{"restore", "-config", good}, 2, "", "-i FILE is required"},
		{[]string{"healthcheck", "-url", "http://127.0.0.1:1/healthz", "-timeout", "2s"}, 1, "", "unhealthy"},
		{[]string{"check-config"}, 2, "", "-config FILE is required"},
		{[]string{"check-config", "-config", bad}, 2, "", `line 4: unknown key "colour"`},
		{[]string{"check-config", "-config", filepath.Join(dir, "missing.yaml")}, 2, "", "missing.yaml"},
		{[]string{"serve", "-config", bad}, 2, "", `line 4: unknown key "colour"`},
		{[]string{"harvest", "-config", bad}, 2, "", `line 4: unknown key "colour"`},
		{[]string{"healthcheck", "-config", bad}, 2, "", `line 4: unknown key "colour"`},
		{[]string{"check-config", "-config", good}, 0, "OK, 1 repositories", ""},
		{[]string{"harvest", "-config", good, "-repo", "nope"}, 2, "", `no repository named "nope"`},
		{[]string{"export", "-config", good}, 2, "", "no export target: set export.target"},
		{[]string{"export", "-nginx"}, 0, "default_type application/xml;", ""},
		{[]string{"export", "-config", good, "-target", filepath.Join(dir, "static")}, 0, "exported to directory " + filepath.Join(dir, "static"), ""},
		// Nothing listens on port 1: the error names the bucket and endpoint.
		{[]string{"export", "-config", s3conf}, 1, "", "s3://bucket/p at http://127.0.0.1:1"},
		// Nothing listens on port 1: a clear error naming repository and URL, exit 1.
		{[]string{"harvest", "-config", good}, 1, "", "repository r: GET http://127.0.0.1:1/oai?verb=Identify"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), c.args, &out, &errb)
			if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
				t.Fatalf("code %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// runUntil runs rsbridge with args until ready(stdout) reports a base URL and
// check(base) succeeds, then interrupts it and expects a clean exit.
func runUntil(t *testing.T, args []string, check func(base string) bool) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, args, &out, &errb) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("not ready in time\nstdout: %s\nstderr: %s", out.String(), errb.String())
		}
		select {
		case c := <-code:
			t.Fatalf("exited early with %d\nstdout: %s\nstderr: %s", c, out.String(), errb.String())
		case <-time.After(50 * time.Millisecond):
		}
		_, rest, ok := strings.Cut(out.String(), "Source Description: ")
		if !ok {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), "/.well-known/resourcesync")
		if check(base) {
			cancel()
			if c := <-code; c != 0 {
				t.Fatalf("exit %d after interrupt\nstderr: %s", c, errb.String())
			}
			return base
		}
	}
}

func fetch(u string) (int, string) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDemoServesOffline: the README's first command serves a synthetic
// repository offline; a destination following the Source Description finds
// every record, with matching hashes, within seconds; the harvests are in
// the log at info; it stops cleanly on interrupt.
func TestDemoServesOffline(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	began := time.Now()
	base, _, logs, stop := startCmd(t, []string{"demo", "-records", "120", "-data", data, "-listen", "127.0.0.1:0", "-every", "1h"}, nil)
	var synced time.Duration
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the demo was not in sync within 30 s:\n%s", logs.String())
		}
		if n := demoInSync(t, base); n == 118 {
			synced = time.Since(began)
			break
		}
	}
	t.Logf("a destination was in sync with the demo %v after it started", synced.Round(time.Millisecond))
	if !strings.Contains(logs.String(), `level=INFO msg="run done" repo=demo kind=harvest`) {
		t.Errorf("the demo's harvest is not in the log at info:\n%s", logs.String())
	}
	if code := stop(); code != 0 || strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("exit %d\n%s", code, logs.String())
	}
	// The store was closed and the lock released: it opens again.
	db, err := store.Open(store.Options{Dir: data, ChangeListLimit: 50000, ChangeListPeriod: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// demoInSync follows the demo's Source Description like a destination
// making a baseline: each all-records Capability List, its Resource List,
// every resource, whose MD5 and length must match the list. It returns
// how many resources of the jpcoar_2.0 list checked out (0 before the
// first harvest completes).
func demoInSync(t *testing.T, base string) int {
	t.Helper()
	locs := regexp.MustCompile(`<loc>([^<]+)</loc>`)
	entry := regexp.MustCompile(`<url><loc>([^<]+)</loc><lastmod>[^<]*</lastmod><rs:md hash="md5:([0-9a-f]+)[^"]*" length="(\d+)"`)
	code, sd := fetch(base + "/.well-known/resourcesync")
	if code != 200 {
		return 0
	}
	ok := 0
	for _, m := range locs.FindAllStringSubmatch(sd, -1) {
		if !strings.HasSuffix(m[1], "/jpcoar_2.0/all/capabilitylist.xml") {
			continue
		}
		_, capl := fetch(m[1])
		rl := strings.Replace(m[1], "capabilitylist.xml", "resourcelist.xml", 1)
		if !strings.Contains(capl, rl) {
			t.Fatalf("capability list without %s:\n%s", rl, capl)
		}
		_, list := fetch(rl)
		for _, e := range entry.FindAllStringSubmatch(list, -1) {
			code, body := fetch(e[1])
			sum := md5.Sum([]byte(body))
			if code != 200 || hex.EncodeToString(sum[:]) != e[2] || strconv.Itoa(len(body)) != e[3] {
				return 0 // a harvest is changing it; look again
			}
			ok++
		}
	}
	return ok
}

// TestServeQuickMode: serve -oai URL publishes a repository with no config file.
func TestServeQuickMode(t *testing.T) {
	up := httptest.NewServer(oaiserver.New(oaiserver.Options{Records: 30}))
	defer up.Close()
	data := filepath.Join(t.TempDir(), "data")
	runUntil(t, []string{"serve", "-oai", up.URL + "/oai", "-prefix", "oai_dc", "-data", data, "-listen", "127.0.0.1:0"}, func(base string) bool {
		code, body := fetch(base + "/.well-known/resourcesync")
		if code != 200 || !strings.Contains(body, "/127-0-0-1/oai_dc/all/capabilitylist.xml") {
			return false
		}
		code, body = fetch(base + "/127-0-0-1/oai_dc/all/resourcelist.xml")
		return code == 200 && strings.Count(body, "<url>") == 30
	})
}
