package bridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/notify"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// limitsServer serves a store of n records written straight through batches,
// with the given stream limit and idle write deadline, logging into logs.
func limitsServer(t *testing.T, n, maxStreams int, idle time.Duration, ids []string) (*httptest.Server, *Server, *syncBuf) {
	t.Helper()
	db := openStore(t, store.Options{InMemory: true})
	meta := []byte(`<x xmlns="urn:x">` + strings.Repeat("y", 300) + `</x>`)
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	all := slices.Clone(ids)
	for i := range n {
		all = append(all, fmt.Sprintf("oai:limits:%07d", i))
	}
	for len(all) > 0 {
		b, err := db.NewBatch("demo", "oai_dc")
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2000 && len(all) > 0; j++ {
			id := all[0]
			all = all[1:]
			rec := &store.Record{Identifier: id, Datestamp: now, Length: int64(len(meta)), MD5: strings.Repeat("a", 32),
				SHA256: strings.Repeat("b", 64), Modified: now, FirstSeen: now}
			if err := b.Apply(rec, meta, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.BaseURL = "http://rs.test"
	cfg.Server.MaxStreams, cfg.Server.WriteIdle = maxStreams, idle
	cfg.Repositories = []config.Repository{{Name: "demo", BaseURL: "https://repo.test/oai", MetadataPrefixes: []string{"oai_dc"}}}
	cfg.SetDefaults()
	logs := &syncBuf{}
	s := mustServer(t, cfg, db, ServerOptions{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), DumpDir: t.TempDir()})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, s, logs
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestSlowReaders: 200 clients that request a large Resource List and never
// read it do not hold the server: beyond max_streams they get 503 with
// Retry-After at once, the ones streaming are cut off after write_idle
// (releasing their snapshots), nothing is logged at ERROR, and a normal
// client's resource GETs keep their latency meanwhile.
func TestSlowReaders(t *testing.T) {
	// ~25 MB: more than the loopback buffers hold. write_idle 5 s: all 200
	// connections are made before the first streams are cut off, even on a
	// loaded machine under -race.
	srv, s, logs := limitsServer(t, 40000, 8, 5*time.Second, nil)
	get := func(path string) (int, time.Duration) {
		start := time.Now()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	p99 := func() time.Duration {
		var ds []time.Duration
		for i := range 200 {
			code, d := get(fmt.Sprintf("/demo/oai_dc/resource/oai:limits:%07d", i*97))
			if code != 200 {
				t.Fatalf("resource GET: %d", code)
			}
			ds = append(ds, d)
		}
		slices.Sort(ds)
		return ds[len(ds)*99/100]
	}
	idle := p99()

	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	conns := make([]net.Conn, 200)
	for i := range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
		fmt.Fprintf(c, "GET /demo/oai_dc/all/resourcelist.xml HTTP/1.1\r\nHost: rs.test\r\n\r\n")
		wg.Add(1)
		go func() { // read the status line only, then stop reading
			defer wg.Done()
			buf := make([]byte, 12)
			if _, err := io.ReadFull(c, buf); err == nil {
				var code int
				fmt.Sscanf(string(buf[9:12]), "%d", &code)
				mu.Lock()
				statuses[code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	busy := p99()
	mu.Lock()
	t.Logf("200 slow readers: %v; resource GET p99 %v idle, %v with them connected", statuses, idle, busy)
	if statuses[200] > 8 || statuses[503] < 192 {
		t.Errorf("statuses %v: at most 8 streams, the rest 503", statuses)
	}
	mu.Unlock()
	// Latency: generous bounds (a loaded 2-core machine), still far from the
	// seconds a held server would show.
	if busy > 10*idle+time.Second {
		t.Errorf("resource GET p99 %v with slow readers connected, %v without", busy, idle)
	}
	// The streams are cut off after write_idle and give their slots back.
	deadline := time.Now().Add(30 * time.Second)
	for len(s.lim.streams) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams still held by clients that stopped reading", len(s.lim.streams))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range conns {
		c.Close()
	}
	if code, _ := get("/demo/oai_dc/all/resourcelist.xml"); code != 200 {
		t.Errorf("after the slow readers: %d", code)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("slow readers logged at ERROR:\n%.2000s", logs.String())
	}
	if !strings.Contains(logs.String(), "stopped reading") {
		t.Errorf("the cut-off was not logged at debug:\n%.2000s", logs.String())
	}
}

// TestRequestHardening: dot-segment identifiers get URLs that work, start=
// is validated, error bodies do not echo huge requests.
func TestRequestHardening(t *testing.T) {
	srv, _, _ := limitsServer(t, 30, 4, 5*time.Second, []string{".", "..", "a/../b"})
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, id := range []string{".", "..", "a/../b"} {
		u := strings.Replace(source.ResourceURL("http://rs.test", "demo", "oai_dc", id), "http://rs.test", srv.URL, 1)
		if code, body := get(u); code != 200 || !strings.Contains(body, "yyy") {
			t.Errorf("%q at %s: %d %.100s", id, u, code, body)
		}
	}
	_, list := get(srv.URL + "/demo/oai_dc/all/resourcelist.xml")
	for _, want := range []string{"/resource/%2E</loc>", "/resource/%2E%2E</loc>", "/resource/a%2F..%2Fb</loc>"} {
		if !strings.Contains(list, want) {
			t.Errorf("resource list lacks %s", want)
		}
	}
	page := srv.URL + "/demo/oai_dc/all/resourcelist-00002.xml"
	for _, c := range []struct {
		query string
		code  int
	}{
		{"?start=oai:limits:0000010", 200},
		{"?start=.", 200},
		{"?start=", 400},
		{"?start=%FF%FE", 400},
		{"?start=" + strings.Repeat("x", 9000), 400},
		{"?start=a&start=b", 400},
		// Pages are key ranges: any range is a page, empty or not.
		{"?start=oai:nowhere:1", 200},
		{"?start=zzzz", 200},
		{"?start=a&end=b", 200},
		{"?end=b", 200},
		{"?start=b&end=a", 400},
		{"?start=b&end=b", 400},
		{"?end=", 400},
		{"?end=a&end=b", 400},
	} {
		if code, body := get(page + c.query); code != c.code {
			t.Errorf("%.60s: %d, want %d (%.100s)", c.query, code, c.code, body)
		}
	}
	long := "/" + strings.Repeat("p", 100<<10)
	if code, body := get(srv.URL + long); code != 404 || len(body) > 2048 {
		t.Errorf("a 100 KB path: %d with a %d-byte body", code, len(body))
	}
}

// fileReadFrom records what the connection's ReadFrom is handed: sendfile
// happens only for a file at most one io.LimitedReader deep.
type fileReadFrom struct {
	http.ResponseWriter
	got           bytes.Buffer
	calls, direct int
}

func (f *fileReadFrom) ReadFrom(r io.Reader) (int64, error) {
	f.calls++
	if lr, ok := r.(*io.LimitedReader); ok {
		if _, ok := lr.R.(*os.File); ok {
			f.direct++
		}
	}
	return f.got.ReadFrom(r)
}

func TestIdleWriterReadFromKeepsSendfile(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789abcdef"), (20<<20)/16+3) // 20 MiB + 48 B
	path := filepath.Join(t.TempDir(), "package.zip")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		limit int64 // -1: the file itself, no LimitedReader
	}{
		{"ServeContent's range", int64(len(content)) - 5},
		{"limit past the end", int64(len(content)) + 100},
		{"empty range", 0},
		{"whole file", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Seek(3, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			want := content[3:]
			var r io.Reader = f
			lr := &io.LimitedReader{R: f, N: c.limit}
			if c.limit >= 0 {
				r = lr
				want = want[:min(int64(len(want)), c.limit)]
			}
			inner := &fileReadFrom{ResponseWriter: httptest.NewRecorder()}
			w := &idleWriter{ResponseWriter: inner, rc: http.NewResponseController(inner), idle: time.Second}
			n, err := w.ReadFrom(r)
			if err != nil || n != int64(len(want)) || !bytes.Equal(inner.got.Bytes(), want) {
				t.Fatalf("ReadFrom: %d bytes, %v; want %d bytes, equal", n, err, len(want))
			}
			if c.limit >= 0 && lr.N != c.limit-n {
				t.Errorf("LimitedReader left at %d, want %d", lr.N, c.limit-n)
			}
			// 8 MiB a time; every call is a file one LimitedReader deep.
			if wantCalls := (len(want) + 8<<20) / (8 << 20); len(want) > 0 && (inner.calls < wantCalls-1 || inner.direct != inner.calls) {
				t.Errorf("%d ReadFrom calls, %d of them with the file one LimitedReader deep", inner.calls, inner.direct)
			}
		})
	}
}

// TestStalledFileReadersHoldNoSlot: clients that stop reading a dump package
// do not keep the streaming slots from everyone else (issue 21, item 5:
// twenty of them held all 16 for write_idle, everyone else got 503).
func TestStalledFileReadersHoldNoSlot(t *testing.T) {
	db := openStore(t, store.Options{InMemory: true})
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(1, 2))
	b, err := db.NewBatch("demo", "oai_dc")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		raw := make([]byte, 4096)
		for j := range raw {
			raw[j] = byte(rnd.Uint32())
		}
		meta := []byte(`<x xmlns="urn:x">` + hex.EncodeToString(raw) + `</x>`) // incompressible: ~8 KB each, a 16 MB package
		id := fmt.Sprintf("oai:stall:%05d", i)
		sum := sha256.Sum256(meta)
		rec := &store.Record{Identifier: id, Datestamp: now, Length: int64(len(meta)), MD5: strings.Repeat("a", 32), SHA256: hex.EncodeToString(sum[:]), Modified: now, FirstSeen: now}
		if err := b.Apply(rec, meta, &store.Event{Identifier: id, Change: store.Created, SHA256: rec.SHA256}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.BaseURL = "http://rs.test"
	cfg.Server.MaxStreams, cfg.Server.WriteIdle = 16, 20*time.Second
	cfg.Repositories = []config.Repository{{Name: "demo", BaseURL: "https://repo.test/oai", MetadataPrefixes: []string{"oai_dc"}}}
	cfg.SetDefaults()
	dumpDir := t.TempDir()
	s := mustServer(t, cfg, db, ServerOptions{DumpDir: dumpDir})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	rs := s.src.All(cfg.Repositories[0], "oai_dc")
	if err := dumps.New(s.src, db, dumps.Options{Dir: dumpDir}).BuildResourceDump(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	rd, err := getDoc(context.Background(), srv.Client(), srv.URL+"/demo/oai_dc/all/resourcedump.xml")
	if err != nil || len(rd.Entries) == 0 {
		t.Fatalf("resource dump: %v", err)
	}
	pkg := strings.Replace(rd.Entries[0].Loc, "http://rs.test", "", 1)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 20 {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: rs.test\r\n\r\n", pkg)
		buf := make([]byte, 12)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf[9:12]) != "200" {
			t.Fatalf("package GET: %q %v", buf, err)
		}
		// ... and read nothing more.
	}
	time.Sleep(200 * time.Millisecond) // the sends fill the socket buffers and stall
	for _, path := range []string{"/demo/oai_dc/all/resourcelist.xml", "/demo/oai_dc/all/changelist.xml", pkg} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s with 20 stalled package readers: %d", path, resp.StatusCode)
		}
	}
	if n := len(s.lim.streams); n != 0 {
		t.Errorf("%d slots held by clients that stopped reading a file", n)
	}
}

// TestSlowBodyCutOff: a client that sends a request body a byte at a time
// is cut off after the body timeout instead of holding the connection for
// as long as it likes (issue 21, item 4: 100 such POST /websub stayed open
// for 150 s, and past the descriptor limit the server stopped accepting).
func TestSlowBodyCutOff(t *testing.T) {
	db := openStore(t, store.Options{InMemory: true})
	cfg := demoConfig(t, "base_url: http://rs.test\nrepositories:\n  - name: demo\n    base_url: http://oai.test/oai\n")
	n, err := notify.New(source.New(cfg, db), db, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := mustServer(t, cfg, db, ServerOptions{Hub: n.Hub()})
	s.lim.bodyTimeout = 300 * time.Millisecond
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, path := range []string{"/websub", "/admin/harvest"} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: rs.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nh", path)
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadAll(c) // what the server answers, until it closes
		c.Close()
		if err != nil || time.Since(start) > 4*time.Second {
			t.Errorf("POST %s with a stalled body: connection still open after %v (%v)", path, time.Since(start).Round(time.Millisecond), err)
		}
	}
}
