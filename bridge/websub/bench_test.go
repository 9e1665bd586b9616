package websub

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFanOut publishes one ~20 KB payload to 1,000 subscriptions on
// local callbacks (4 servers, 250 callback paths each) with the default 16
// workers, and reports the time from Publish to the last delivery and the
// peak live heap during the fan-out.
//
//	go test -run '^$' -bench FanOut -benchtime 1x ./bridge/websub/
func BenchmarkFanOut(b *testing.B) {
	const servers, perServer = 4, 250
	const subs = servers * perServer
	var got atomic.Int64
	done := make(chan struct{}, 1)
	var target atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if got.Add(1) == target.Load() {
			done <- struct{}{}
		}
	})
	db := openStore(b, "")
	h, err := New(Options{HubURL: testHub, DB: db, Topic: knownTopics, AllowPrivateCallbacks: true,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	expires := time.Now().Add(24 * time.Hour)
	for range servers {
		srv := httptest.NewServer(handler)
		b.Cleanup(srv.Close)
		for i := range perServer {
			if err := db.PutSubscription(storeSub(topicA, fmt.Sprintf("%s/cb/%d", srv.URL, i), expires)); err != nil {
				b.Fatal(err)
			}
		}
	}
	h.Start()
	body := bytes.Repeat([]byte(`<url><loc>https://rs.example.org/r/oai_dc/resource/oai:example.org:000001</loc><rs:md change="updated"/></url>`+"\n"), 20<<10/110)
	b.Logf("payload %d bytes, %d subscriptions", len(body), subs)

	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heapNow := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := heapNow()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // owned: stopped and awaited below
		defer close(sampled)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := heapNow(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()

	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		target.Store(int64(subs * (i + 1)))
		start := time.Now()
		if err := h.Publish(context.Background(), topicA, body); err != nil {
			b.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			b.Fatalf("only %d of %d deliveries after 5 minutes", got.Load(), target.Load())
		}
		total += time.Since(start)
	}
	b.StopTimer()
	close(stop)
	<-sampled
	waitFor(b, "the last deliveries to settle", func() bool { return h.Stats().Pending == 0 })
	if st := h.Stats(); st.Delivered != uint64(subs*b.N) || st.Failed != 0 {
		b.Fatalf("stats %+v", st)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/fanout")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "heap-growth-MiB")
}
