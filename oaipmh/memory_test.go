package oaipmh

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// heapSampler keeps the peak of HeapInuse (heap spans in use: live objects and
// garbage not yet swept, the part of RSS the decoder can drive). It samples when
// body bytes arrive, in the record handler, and from a background goroutine;
// nothing here measures time.
type heapSampler struct {
	mu   sync.Mutex
	base uint64
	peak uint64
	n    int
	stop chan struct{}
	done chan struct{}
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := &heapSampler{base: ms.HeapInuse, peak: ms.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			select {
			case <-h.stop:
				return
			case <-time.After(time.Millisecond):
				h.sample()
			}
		}
	}()
	return h
}

func (h *heapSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.mu.Lock()
	h.peak = max(h.peak, ms.HeapInuse)
	h.n++
	h.mu.Unlock()
}

// growth stops sampling and returns the peak growth over the baseline.
func (h *heapSampler) growth() (uint64, int) {
	close(h.stop)
	<-h.done
	h.sample()
	return h.peak - min(h.base, h.peak), h.n
}

// sampledTransport samples the heap every 64 KiB of response body.
type sampledTransport struct {
	rt http.RoundTripper
	h  *heapSampler
	n  *int64
}

func (t *sampledTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		resp.Body = &sampledBody{ReadCloser: resp.Body, t: t}
	}
	return resp, err
}

type sampledBody struct {
	io.ReadCloser
	t    *sampledTransport
	next int64
}

func (b *sampledBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	*b.t.n += int64(n)
	if *b.t.n >= b.next {
		b.t.h.sample()
		b.next = *b.t.n + 64<<10
	}
	return n, err
}

func gzipMember(tb testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		tb.Fatal(err)
	}
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestGzipBombStopsWhileStreaming: 1 GiB inside one record, sent as ~1 MB of
// gzip members (which the client reads as one stream), is stopped by
// MaxBodyBytes while streaming, after the first record was delivered, with the
// heap bounded by MaxRecordBytes rather than by the body.
func TestGzipBombStopsWhileStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 32 MiB")
	}
	const maxRecord = 1 << 20
	for _, fill := range []string{"<a>", "\x00"} {
		t.Run(strings.Replace(strings.Replace(fill, "\x00", "zeros", 1), "<a>", "tags", 1), func(t *testing.T) {
			unit := gzipMember(t, bytes.Repeat([]byte(fill), (1<<20)/len(fill)))
			var bomb bytes.Buffer
			bomb.Write(gzipMember(t, []byte(hostileHead+hrec("oai:x:1", dcMeta("one"))+`<record><header><identifier>oai:x:bomb</identifier></header><metadata><oai_dc:dc><dc:description>`)))
			for range 1024 {
				bomb.Write(unit)
			}
			bomb.Write(gzipMember(t, []byte(`</dc:description></oai_dc:dc></metadata></record>`+hostileTail)))
			t.Logf("bomb: %s compressed, ~1 GiB decompressed", fmtSize(int64(bomb.Len())))

			var read int64
			st := &sampledTransport{rt: http.DefaultTransport.(*http.Transport).Clone(), n: &read}
			c, sl, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, bomb.String())}}, func(o *Options) {
				o.MaxRecordBytes = maxRecord
				o.MaxBodyBytes = 32 << 20
				o.Transport = st
			})
			h := startHeapSampler()
			st.h = h
			var ids []string
			_, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(r *Record) error {
				h.sample()
				ids = append(ids, r.Header.Identifier)
				return nil
			})
			growth, samples := h.growth()
			t.Logf("heap growth %s at peak (%d samples), %s of %s compressed read", fmtSize(int64(growth)), samples, fmtSize(read), fmtSize(int64(bomb.Len())))
			if !errors.Is(err, ErrBodyTooLarge) || len(sl.d) != 0 {
				t.Fatalf("got %v (waits %v)", err, sl.d)
			}
			if len(ids) != 1 || ids[0] != "oai:x:1" {
				t.Errorf("records before the bomb: %q", ids)
			}
			if read >= int64(bomb.Len()) {
				t.Errorf("the whole bomb was read")
			}
			// The decoder holds about one record (1 MiB) plus fixed buffers; the
			// bound leaves room for garbage between collections and a busy machine.
			if growth > 16*maxRecord {
				t.Errorf("heap grew by %s, more than 16 × MaxRecordBytes", fmtSize(int64(growth)))
			}
		})
	}
}

// TestHugeRecordQuarantinedWithBoundedMemory: one 100 MiB record streamed from
// an upstream is quarantined, the records after it arrive, and the heap stays
// bounded by MaxRecordBytes.
func TestHugeRecordQuarantinedWithBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100 MiB")
	}
	const maxRecord = 1 << 20
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	huge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		io.WriteString(w, hostileHead+hrec("oai:x:1", dcMeta("first &amp; one"))+`<record><header><identifier>oai:x:2</identifier><datestamp>2024-01-02</datestamp></header><metadata><oai_dc:dc><dc:description>`)
		for range 100 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `</dc:description></oai_dc:dc></metadata></record>`+hrec("oai:x:3", dcMeta("third"))+hostileTail)
	}
	var read int64
	st := &sampledTransport{rt: http.DefaultTransport.(*http.Transport).Clone(), n: &read}
	c, _, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){huge}}, func(o *Options) {
		o.MaxRecordBytes = maxRecord
		o.Transport = st
	})
	h := startHeapSampler()
	st.h = h
	var recs []*Record
	page, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(r *Record) error {
		h.sample()
		recs = append(recs, r)
		return nil
	})
	growth, samples := h.growth()
	t.Logf("heap growth %s at peak (%d samples) for a body of %s", fmtSize(int64(growth)), samples, fmtSize(read))
	if err != nil || len(recs) != 3 || page.Quarantined != 1 || page.Token.Value != "tok-2" {
		t.Fatalf("%v, %d records, %+v", err, len(recs), page)
	}
	checkIntact(t, recs[0], "oai:x:1", dcWant("first &amp; one"))
	checkIntact(t, recs[2], "oai:x:3", dcWant("third"))
	if e := recs[1].Err; e == nil || e.Identifier != "oai:x:2" || !strings.Contains(e.Reason, "record of 100 MiB exceeds max_record_bytes (1 MiB)") || !strings.Contains(e.Error(), "raise max_record_bytes") {
		t.Errorf("got %v", e)
	}
	if growth > 16*maxRecord {
		t.Errorf("heap grew by %s, more than 16 × MaxRecordBytes", fmtSize(int64(growth)))
	}
}

// TestAmplificationBounded: records within MaxRecordBytes whose structure would
// cost the decoders far more than their size (nesting 140,000 deep, 100,000
// attributes on one element) are quarantined without being tokenised; a legal
// record of nearly MaxRecordBytes is decoded within the same bound.
func TestAmplificationBounded(t *testing.T) {
	const maxRecord = 1 << 20
	deep := strings.Repeat("<a>", 140_000) + strings.Repeat("</a>", 140_000)
	var attrs strings.Builder
	attrs.WriteString("<x")
	for i := 0; attrs.Len() < maxRecord-4096; i++ {
		fmt.Fprintf(&attrs, " a%d=''", i)
	}
	attrs.WriteString("/>")
	big := strings.Repeat("t", maxRecord-4096)
	cases := []struct {
		name, meta, reason string
	}{
		{"deep", deep, "elements nested more than 1000 deep"},
		{"attributes", attrs.String(), "an element with more than 1000 attributes"},
		{"large but legal", dcMeta(big), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := hostilePage(hrec("oai:x:2", tc.meta))
			h := startHeapSampler()
			var recs []*Record
			resp, err := newDecoder(strings.NewReader(body), maxRecord).decode(handlers{record: func(r *Record) error {
				h.sample()
				recs = append(recs, r)
				return nil
			}})
			growth, _ := h.growth()
			t.Logf("heap growth %s at peak for a record of %s", fmtSize(int64(growth)), fmtSize(int64(len(tc.meta))))
			if err != nil || len(recs) != 3 || resp.token == nil {
				t.Fatalf("%v, %d records", err, len(recs))
			}
			if tc.reason != "" {
				if e := recs[1].Err; e == nil || e.Reason != tc.reason || e.Identifier != "oai:x:2" {
					t.Errorf("got %+v", e)
				}
			} else if recs[1].Err != nil || len(recs[1].Metadata) < maxRecord-4096 {
				t.Errorf("got %v, %d bytes", recs[1].Err, len(recs[1].Metadata))
			}
			if growth > 16*maxRecord {
				t.Errorf("heap grew by %s, more than 16 × MaxRecordBytes", fmtSize(int64(growth)))
			}
		})
	}
}
