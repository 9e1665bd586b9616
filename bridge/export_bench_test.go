package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/export/objstore/objstoretest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/store"
)

// BenchmarkExport measures rsbridge export on a 100,000-record store
// (RSBRIDGE_BENCH_RECORDS to change it) with its Resource Dump: the first
// export to a directory and to versitygw (objects/s, MB/s), an incremental
// export after 1,000 changes to each, then resource GETs at 32 clients for
// 5 s from nginx over the directory and from rsbridge serve over the
// store, side by side.
//
//	go test -run '^$' -bench 'BenchmarkExport$' -benchtime 1x -timeout 30m ./bridge/
func BenchmarkExport(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	db, cfg, dumpDir := dumpBenchStore(b, n)
	root := b.TempDir()
	nginxURL := objstoretest.Nginx(b, root, export.NginxServer)
	vgw := objstoretest.Versity(b)
	vgw.MakeBucket(b, "bench")
	ctx := context.Background()

	// The Resource Dump, built once, is exported to both targets.
	cfg.BaseURL = nginxURL
	dirSrc := source.New(cfg, db)
	if err := dumps.New(dirSrc, db, dumps.Options{Dir: dumpDir}).BuildResourceDump(ctx, dirSrc.All(cfg.Repositories[0], "oai_dc")); err != nil {
		b.Fatal(err)
	}
	dir, err := objstore.OpenDir(root)
	if err != nil {
		b.Fatal(err)
	}
	vcfg := *cfg
	vcfg.BaseURL = vgw.Endpoint + "/bench"
	s3, err := objstore.OpenS3(ctx, vgw.Config("bench", ""))
	if err != nil {
		b.Fatal(err)
	}
	targets := []struct {
		name string
		e    *export.Exporter
	}{
		{"directory", export.New(dirSrc, db, dir, export.Options{DumpDir: dumpDir, TempDir: b.TempDir()})},
		{"versitygw", export.New(source.New(&vcfg, db), db, s3, export.Options{DumpDir: dumpDir, TempDir: b.TempDir()})},
	}
	for i := 0; i < b.N; i++ {
		for _, t := range targets {
			runtime.GC()
			stop := heapSampler()
			rep, err := t.e.Run(ctx)
			peak := stop()
			anon, _ := rss()
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("first export to %s: peak live heap %.1f MiB, RssAnon after %.1f MiB", t.name, float64(peak)/(1<<20), float64(anon)/1024)
			took := rep.Ended.Sub(rep.Started)
			if took <= 0 {
				took = time.Nanosecond
			}
			b.Logf("first export to %s: %d objects, %.1f MB in %v: %.0f objects/s, %.1f MB/s", t.name, rep.Objects, float64(rep.Bytes)/1e6,
				took.Round(time.Millisecond), float64(rep.Objects)/took.Seconds(), float64(rep.Bytes)/1e6/took.Seconds())
		}
		changeRecords(b, db, n, 1000)
		for _, t := range targets {
			started := time.Now()
			rep, err := t.e.Run(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("incremental export to %s after 1,000 changes: %v, %d objects written, %d removed, %d documents unchanged",
				t.name, time.Since(started).Round(time.Millisecond), rep.Objects, rep.Deleted, rep.Skipped)
		}
	}
	// Serving: the same resource URLs from nginx and from serve.
	srv := httptest.NewUnstartedServer(nil)
	scfg := *cfg
	scfg.BaseURL = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = mustServer(b, &scfg, db, ServerOptions{DumpDir: dumpDir, CacheDir: b.TempDir()}).Handler()
	srv.Start()
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	for _, s := range []struct{ name, base string }{{"nginx (1 worker process)", nginxURL}, {"rsbridge serve", scfg.BaseURL}} {
		var urls []string
		for i := range 2000 {
			urls = append(urls, source.ResourceURL(s.base, "bench", "oai_dc", fmt.Sprintf("oai:bench.example:%08d", (i*7919)%n)))
		}
		rps, p50, p99 := load(b, hc, urls, 32, 5*time.Second)
		b.Logf("resource GETs from %s, 32 clients: %.0f requests/s, p50 %v, p99 %v", s.name, rps, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond))
	}
}

// changeRecords updates k records (every n/k-th) with new bytes and
// events, as a harvest would.
func changeRecords(b testing.TB, db *store.DB, n, k int) {
	b.Helper()
	batch, err := db.NewBatch("bench", "oai_dc")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for j := range k {
		i := j * (n / k)
		meta := []byte(fmt.Sprintf(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Record %d, revised</dc:title><dc:description>%s</dc:description></oai_dc:dc>`,
			i, strings.Repeat("A revised abstract. ", 80)))
		sh := sha256.Sum256(meta)
		rec := &store.Record{Identifier: fmt.Sprintf("oai:bench.example:%08d", i), Datestamp: now, Length: int64(len(meta)),
			MD5: strings.Repeat("0", 32), SHA256: hex.EncodeToString(sh[:]), Modified: now, FirstSeen: now}
		if err := batch.Apply(rec, meta, &store.Event{Identifier: rec.Identifier, Change: store.Updated, SHA256: rec.SHA256, Length: rec.Length}); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(); err != nil {
		b.Fatal(err)
	}
}
