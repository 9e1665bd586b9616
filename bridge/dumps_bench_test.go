package bridge

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
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
			d := NewDumper(cfg, db, DumperOptions{Dir: dir})
			rs := resourceSet{repo: cfg.Repositories[0], prefix: "oai_dc", set: store.AllSet, base: "http://bench"}
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
// from the Resource Dump (download every package, unzip, check every hash)
// with the same baseline by one GET per resource (the Resource List, then
// each resource, one after the other as the reference client does), against
// the same server: on loopback, and with 1 ms added to every request's round
// trip (a LAN; the Internet's are 10 to 100 times longer), since per-resource
// fetching pays the round trip once per record and a dump once per package.
//
//	go test -run '^$' -bench DumpBaseline -benchtime 1x -timeout 30m ./bridge/
func BenchmarkDumpBaseline(b *testing.B) {
	for _, rtt := range []time.Duration{0, time.Millisecond} {
		b.Run("rtt="+rtt.String(), func(b *testing.B) { benchDumpBaseline(b, rtt) })
	}
}

// latency adds a round-trip time to every request.
type latency struct {
	rt  http.RoundTripper
	rtt time.Duration
}

func (l latency) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(l.rtt)
	return l.rt.RoundTrip(r)
}

func benchDumpBaseline(b *testing.B, rtt time.Duration) {
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
	d := NewDumper(cfg, db, DumperOptions{Dir: dir})
	rs := resourceSet{repo: cfg.Repositories[0], prefix: "oai_dc", set: store.AllSet, base: srv.URL}
	if err := d.BuildResourceDump(context.Background(), rs); err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: latency{&http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}, rtt}}
	get := func(u string) []byte {
		resp, err := hc.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
		}
		return body
	}
	for b.Loop() {
		// From the dump: the packages are independent, so the destination
		// reads them concurrently, one per core, as any bulk client would.
		start := time.Now()
		rd, err := rsync.Parse(bytes.NewReader(get(rs.resourceDump())))
		if err != nil {
			b.Fatal(err)
		}
		var got atomic.Int64
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for _, e := range rd.Entries {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				body := get(e.Loc)
				zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
				if err != nil {
					b.Error(err)
					return
				}
				var buf []byte
				for _, f := range zr.File[1:] {
					rc, err := f.Open()
					if err != nil {
						b.Error(err)
						return
					}
					buf = slices.Grow(buf[:0], int(f.UncompressedSize64))[:f.UncompressedSize64]
					if _, err := io.ReadFull(rc, buf); err != nil {
						b.Error(err)
					}
					rc.Close()
					sha256.Sum256(buf)
					got.Add(1)
				}
			}()
		}
		wg.Wait()
		dumpTime := time.Since(start)
		if got.Load() != int64(n) {
			b.Fatalf("dump baseline got %d records", got.Load())
		}

		start = time.Now()
		rl, err := rsync.Parse(bytes.NewReader(get(rs.resourceList())))
		if err != nil {
			b.Fatal(err)
		}
		var locs []string
		if rl.Index {
			for _, e := range rl.Entries {
				page, err := rsync.Parse(bytes.NewReader(get(e.Loc)))
				if err != nil {
					b.Fatal(err)
				}
				for _, pe := range page.Entries {
					locs = append(locs, pe.Loc)
				}
			}
		} else {
			for _, e := range rl.Entries {
				locs = append(locs, e.Loc)
			}
		}
		for _, loc := range locs {
			sha256.Sum256(get(loc))
		}
		getTime := time.Since(start)
		if len(locs) != n {
			b.Fatalf("GET baseline got %d records", len(locs))
		}
		b.ReportMetric(dumpTime.Seconds(), "dump-s")
		b.ReportMetric(getTime.Seconds(), "get-s")
		b.ReportMetric(getTime.Seconds()/dumpTime.Seconds(), "speedup")
		b.ReportMetric(float64(n)/dumpTime.Seconds(), "dump-records/s")
	}
}
