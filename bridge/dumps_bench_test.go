package bridge

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// dumpBenchStore builds an on-disk store of n records of about 2 KB written
// straight through batches, with real hashes, and a server over it.
func dumpBenchStore(b *testing.B, n int) (*store.DB, *config.Config, string) {
	b.Helper()
	storeDir := b.TempDir()
	db := openStore(b, store.Options{Dir: storeDir})
	cfg := config.Default()
	cfg.BaseURL = "http://bench"
	cfg.DataDir = b.TempDir()
	cfg.Repositories = []config.Repository{{Name: "bench", BaseURL: "https://repo.example/oai", MetadataPrefixes: []string{"oai_dc"}}}
	cfg.SetDefaults()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; {
		batch, err := db.NewBatch("bench", "oai_dc")
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 1000 && i < n; j, i = j+1, i+1 {
			meta := []byte(fmt.Sprintf(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Record %d</dc:title><dc:description>%s</dc:description><dc:identifier>https://repo.example/records/%d</dc:identifier></oai_dc:dc>`,
				i, strings.Repeat("A synthetic abstract of moderate length. ", 45), i))
			sh := sha256.Sum256(meta)
			rec := &store.Record{Identifier: fmt.Sprintf("oai:bench.example:%08d", i), Datestamp: now, Length: int64(len(meta)),
				MD5: strings.Repeat("0", 32), SHA256: hex.EncodeToString(sh[:]), Modified: now, FirstSeen: now}
			if err := batch.Apply(rec, meta, &store.Event{Identifier: rec.Identifier, Change: store.Created, SHA256: rec.SHA256, Length: rec.Length}); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	// Reopen, so the figures are the dump's and not the bulk load's (its
	// memtables and the compactions it started).
	db.Close()
	db = openStore(b, store.Options{Dir: storeDir})
	time.Sleep(2 * time.Second)
	runtime.GC()
	return db, cfg, b.TempDir()
}

// heapSampler samples the live heap (as the last GC marked it) every few
// milliseconds until stopped: what a build holds, not the garbage it leaves.
func heapSampler() (stop func() uint64) {
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

func benchRecords() []int {
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_RECORDS")); err == nil && v > 0 {
		return []int{v}
	}
	return []int{25000, 100000}
}

// BenchmarkResourceDump builds the Resource Dump of stores of 25,000 and
// 100,000 records (RSBRIDGE_BENCH_RECORDS to choose) and reports records/s
// and the peak heap during the build, which must not grow with the records.
//
//	go test -run '^$' -bench ResourceDump -benchtime 1x ./bridge/
func BenchmarkResourceDump(b *testing.B) {
	for _, n := range benchRecords() {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db, cfg, dir := dumpBenchStore(b, n)
			d := dumps.New(source.New(cfg, db), db, dumps.Options{Dir: dir})
			rs := source.New(cfg, db).All(cfg.Repositories[0], "oai_dc")
			runtime.GC()
			for b.Loop() {
				stop := heapSampler()
				start := time.Now()
				if err := d.BuildResourceDump(context.Background(), rs); err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				peak := stop()
				b.ReportMetric(float64(n)/took.Seconds(), "records/s")
				b.ReportMetric(float64(peak)/(1<<20), "max-live-heap-MiB")
			}
		})
	}
}

// BenchmarkDumpBaseline compares a destination's baseline of 100,000 records
// (RSBRIDGE_BENCH_RECORDS to choose) from the Resource Dump with the same
// baseline by one GET per resource, against the same server, for several
// round-trip times: loopback (none), 0.25 ms (the same data centre or campus)
// and 1 ms (a LAN; the Internet's are 10 to 100 times longer). The round trip
// is waited once per request and once more per new connection (the TCP
// handshake).
//
//	go test -run '^$' -bench DumpBaseline -benchtime 1x -timeout 60m ./bridge/
//
// The dump figure is the median of five baselines (the first, with a cold
// client, is reported too); the GET figures are one baseline each.
//
// Both destinations check every record against the hash the source published
// for it, and both parse the lists that tell them what to fetch; neither
// stores what it fetched (that costs the same 100,000 writes either way):
//
//   - dump: the Resource Dump, then its packages concurrently, one per P;
//     each package is checked against the Resource Dump's length and SHA-256,
//     its manifest.xml parsed, and every entry matched to its manifest entry by
//     path and checked against the manifest's SHA-256;
//   - get, keep-alive: the Resource List (index and pages), then each resource
//     one after the other over one kept-alive connection;
//   - get, 8 at a time: the same over eight kept-alive connections, as a
//     destination that works around the round trips would; on loopback only
//     (see wait);
//   - get, a connection per GET: as the reference client (resync) does it,
//     urlretrieve per resource, which opens a connection every time. Measured
//     on loopback and at 0.25 ms only: at 1 ms it is slower than keep-alive by
//     the extra round trip, and would take four minutes.
func BenchmarkDumpBaseline(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	db, cfg, dir := dumpBenchStore(b, n)
	srv := httptest.NewUnstartedServer(nil)
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = mustServer(b, cfg, db, ServerOptions{DumpDir: dir}).Handler()
	srv.Start()
	defer srv.Close()
	src := source.New(cfg, db)
	d := dumps.New(src, db, dumps.Options{Dir: dir})
	rs := src.All(cfg.Repositories[0], "oai_dc")
	if err := d.BuildResourceDump(context.Background(), rs); err != nil {
		b.Fatal(err)
	}
	for _, rtt := range []time.Duration{0, 250 * time.Microsecond, time.Millisecond} {
		b.Run("rtt="+rtt.String(), func(b *testing.B) {
			for b.Loop() {
				// The dump baseline takes well under a second: five of them,
				// the first (a cold client: its heap grows, its connections
				// open) and the median reported; the GET baseline takes one
				// long run, 100,000 requests averaging themselves.
				var dumps []time.Duration
				for range 5 {
					hc, _ := benchClient(rtt, true)
					dest := baselineDest{b: b, hc: hc}
					dumps = append(dumps, dest.timed(func() int { return dest.fromDump(rs.ResourceDump()) }, n))
				}
				first := dumps[0]
				slices.Sort(dumps)
				dumpTime := dumps[2]
				hc, waited := benchClient(rtt, true)
				dest := baselineDest{b: b, hc: hc}
				getTime := dest.timed(func() int { return dest.byGET(rs.ResourceList(), 1) }, n)
				b.ReportMetric(first.Seconds(), "dump-first-s")
				b.ReportMetric(dumpTime.Seconds(), "dump-s")
				b.ReportMetric(getTime.Seconds(), "get-s")
				b.ReportMetric(getTime.Seconds()/dumpTime.Seconds(), "speedup")
				b.ReportMetric(float64(n)/dumpTime.Seconds(), "dump-records/s")
				// The round trip as waited (per request; no new connections).
				b.ReportMetric(float64(waited.Load())/float64(n)/1e3, "rtt-us")
				if rtt == 0 {
					hc8, _ := benchClient(rtt, true)
					par := baselineDest{b: b, hc: hc8}
					parTime := par.timed(func() int { return par.byGET(rs.ResourceList(), 8) }, n)
					b.ReportMetric(parTime.Seconds(), "get-8-s")
					b.ReportMetric(parTime.Seconds()/dumpTime.Seconds(), "speedup-8")
				}
				if rtt < time.Millisecond {
					hc, _ := benchClient(rtt, false)
					ref := baselineDest{b: b, hc: hc}
					refTime := ref.timed(func() int { return ref.byGET(rs.ResourceList(), 1) }, n)
					b.ReportMetric(refTime.Seconds(), "get-conn-s")
					b.ReportMetric(refTime.Seconds()/dumpTime.Seconds(), "speedup-conn")
				}
			}
		})
	}
}

// latency adds a round trip to every request, and counts the time it waited.
type latency struct {
	rt     http.RoundTripper
	rtt    time.Duration
	waited *atomic.Int64 // nanoseconds
}

func (l latency) RoundTrip(r *http.Request) (*http.Response, error) {
	l.waited.Add(int64(wait(l.rtt)))
	return l.rt.RoundTrip(r)
}

// wait waits d and returns how long it took. time.Sleep is no good below a
// few milliseconds (here a 200 µs sleep took 1.3 ms: the runtime's idle wait
// has millisecond resolution, and waking an idle process costs more again),
// so the wait is spun, yielding. Spinning takes a core, which is why only the
// one-at-a-time destinations are measured with round trips.
func wait(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	start := time.Now()
	if d > 3*time.Millisecond {
		time.Sleep(d - 2*time.Millisecond)
	}
	for time.Since(start) < d {
		runtime.Gosched()
	}
	return time.Since(start)
}

// benchClient is a destination's HTTP client: rtt added to every request and
// to every new connection, and connections kept alive or not.
func benchClient(rtt time.Duration, keepAlive bool) (*http.Client, *atomic.Int64) {
	var dialer net.Dialer
	var waited atomic.Int64
	tr := &http.Transport{
		DisableCompression:  true,
		DisableKeepAlives:   !keepAlive,
		MaxIdleConnsPerHost: 8,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			waited.Add(int64(wait(rtt)))
			return dialer.DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: latency{tr, rtt, &waited}}, &waited
}

// baselineDest is a destination taking a baseline: it fetches, checks and
// counts, and fails the benchmark on anything wrong.
type baselineDest struct {
	b  *testing.B
	hc *http.Client
}

func (d baselineDest) timed(f func() int, want int) time.Duration {
	start := time.Now()
	got := f()
	took := time.Since(start)
	if got != want {
		d.b.Fatalf("baseline got %d records, want %d", got, want)
	}
	return took
}

// get reads a whole response into a buffer of its announced length.
func (d baselineDest) get(u string) ([]byte, error) {
	resp, err := d.hc.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if resp.ContentLength < 0 {
		return io.ReadAll(resp.Body)
	}
	body := make([]byte, resp.ContentLength)
	if _, err := io.ReadFull(resp.Body, body); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return body, nil
}

func (d baselineDest) parse(u string) *rsync.Document {
	body, err := d.get(u)
	if err != nil {
		d.b.Fatal(err)
	}
	doc, err := rsync.Parse(bytes.NewReader(body))
	if err != nil {
		d.b.Fatalf("%s: %v", u, err)
	}
	return doc
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fromDump takes the baseline from the Resource Dump and returns how many
// records it checked.
func (d baselineDest) fromDump(rdURL string) int {
	rd := d.parse(rdURL)
	var got atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, pkg := range rd.Entries {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			n, err := d.unpack(pkg)
			if err != nil {
				d.b.Error(err)
			}
			got.Add(int64(n))
		}()
	}
	wg.Wait()
	return int(got.Load())
}

func (d baselineDest) unpack(pkg rsync.Entry) (int, error) {
	body, err := d.get(pkg.Loc)
	if err != nil {
		return 0, err
	}
	if int64(len(body)) != pkg.MD.Length || sha256Hex(body) != rsync.HashValue(pkg.MD.Hash, "sha-256") {
		return 0, fmt.Errorf("%s: length or SHA-256 differs from the Resource Dump's", pkg.Loc)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", pkg.Loc, err)
	}
	if len(zr.File) == 0 || zr.File[0].Name != "manifest.xml" {
		return 0, fmt.Errorf("%s: manifest.xml is not the first entry", pkg.Loc)
	}
	mf, err := zr.File[0].Open()
	if err != nil {
		return 0, err
	}
	manifest, err := rsync.Parse(mf)
	mf.Close()
	if err != nil {
		return 0, fmt.Errorf("%s: manifest: %w", pkg.Loc, err)
	}
	byPath := make(map[string]*rsync.Entry, len(manifest.Entries))
	for i, e := range manifest.Entries {
		byPath[e.MD.Path] = &manifest.Entries[i]
	}
	var buf []byte
	for _, f := range zr.File[1:] {
		e := byPath["/"+f.Name]
		if e == nil {
			return 0, fmt.Errorf("%s: %s is not in the manifest", pkg.Loc, f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return 0, err
		}
		buf = slices.Grow(buf[:0], int(f.UncompressedSize64))[:f.UncompressedSize64]
		_, err = io.ReadFull(rc, buf)
		rc.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", pkg.Loc, f.Name, err)
		}
		if sha256Hex(buf) != rsync.HashValue(e.MD.Hash, "sha-256") {
			return 0, fmt.Errorf("%s: %s differs from its manifest entry", pkg.Loc, f.Name)
		}
	}
	return len(zr.File) - 1, nil
}

// byGET takes the baseline by one GET per resource, with workers GETs at a
// time (1: one after the other), and returns how many records it checked.
func (d baselineDest) byGET(rlURL string, workers int) int {
	rl := d.parse(rlURL)
	entries := rl.Entries
	if rl.Index {
		entries = nil
		for _, page := range rl.Entries {
			entries = append(entries, d.parse(page.Loc).Entries...)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(entries)); i = next.Add(1) - 1 {
				e := entries[i]
				body, err := d.get(e.Loc)
				if err != nil {
					d.b.Error(err)
					return
				}
				if sha256Hex(body) != rsync.HashValue(e.MD.Hash, "sha-256") {
					d.b.Errorf("%s differs from its Resource List entry", e.Loc)
					return
				}
			}
		}()
	}
	wg.Wait()
	if d.b.Failed() {
		d.b.FailNow()
	}
	return len(entries)
}
