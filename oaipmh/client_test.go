package oaipmh

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// script is an httptest upstream that answers requests from a list of steps.
type script struct {
	mu    sync.Mutex
	steps []func(w http.ResponseWriter, r *http.Request)
	reqs  []*http.Request
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
	if i >= len(s.steps) {
		http.Error(w, "script exhausted", http.StatusTeapot)
		return
	}
	s.steps[i](w, r)
}

func xmlBody(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func fileBody(t *testing.T, name string) func(http.ResponseWriter, *http.Request) {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return xmlBody(200, string(b))
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newTestClient(t *testing.T, h http.Handler, mod func(*Options)) (*Client, *sleeps, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	sl := &sleeps{}
	opts := Options{Repository: "test", BaseURL: srv.URL + "/oai", MaxRetries: 3, BackoffBase: time.Second, BackoffMax: 8 * time.Second, MaxRetryAfter: time.Hour, Sleep: sl.sleep, UserAgent: "rsbridge/test (mailto:ops@example.org)"}
	if mod != nil {
		mod(&opts)
	}
	c, err := NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl, srv
}

const page1 = `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2024-05-01T00:00:00Z</responseDate><ListRecords>
<record><header><identifier>oai:x:1</identifier><datestamp>2024-01-01T00:00:00Z</datestamp></header><metadata><t xmlns="urn:t">1</t></metadata></record>
<resumptionToken completeListSize="2" cursor="0">a b+c/d=&amp;e</resumptionToken></ListRecords></OAI-PMH>`

func TestRetryAfterSecondsDateAnd429(t *testing.T) {
	// The client's clock is pinned, so the HTTP date is exactly 90 s ahead
	// however long the test takes to get there.
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	date := now.Add(90 * time.Second).Format(http.TimeFormat)
	s := &script{steps: []func(http.ResponseWriter, *http.Request){
		func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Retry-After", "7"); w.WriteHeader(503) },
		func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Retry-After", date); w.WriteHeader(503) },
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "99999")
			w.WriteHeader(429)
		},
		xmlBody(200, page1),
	}}
	c, sl, _ := newTestClient(t, s, func(o *Options) {
		o.MaxRetryAfter = 30 * time.Minute
		o.Now = func() time.Time { return now }
	})
	n := 0
	p, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || p.Token.Value != "a b+c/d=&e" || p.Token.CompleteListSize != 2 {
		t.Errorf("n=%d page=%+v", n, p)
	}
	if len(sl.d) != 3 || sl.d[0] != 7*time.Second || sl.d[1] != 90*time.Second || sl.d[2] != 30*time.Minute {
		t.Errorf("waits %v", sl.d)
	}
}

func TestBackoffOn5xxAndNetworkThenGiveUp(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){
		func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
		func(w http.ResponseWriter, r *http.Request) { // connection dropped mid-body
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			fmt.Fprint(w, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>`)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		},
		func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) },
		func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(504) },
	}}
	c, sl, _ := newTestClient(t, s, nil)
	_, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil })
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "giving up after 3 retries") || !strings.Contains(err.Error(), "HTTP 504") || re.Repository != "test" || !strings.Contains(re.URL, "verb=ListRecords") {
		t.Fatalf("got %v after %d requests, waits %v", err, len(s.reqs), sl.d)
	}
	if len(sl.d) != 3 {
		t.Fatalf("waits %v", sl.d)
	}
	for i, d := range sl.d { // [base*2^i/2, base*2^i]
		lo, hi := time.Second<<i/2, time.Second<<i
		if d < lo || d > hi {
			t.Errorf("backoff %d = %v, want in [%v, %v]", i, d, lo, hi)
		}
	}
}

func TestOAIErrorWith422(t *testing.T) {
	b, _ := os.ReadFile("testdata/scythe__zenodo__error-badResumptionToken.xml")
	s := &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(422, string(b))}}
	c, sl, _ := newTestClient(t, s, nil)
	_, err := c.ListRecords(context.Background(), Query{Token: "expired"}, func(*Record) error { return nil })
	if !IsCode(err, BadResumptionToken) || len(sl.d) != 0 {
		t.Fatalf("got %v (waits %v)", err, sl.d)
	}
}

func TestNoRecordsMatchIsEmptySuccess(t *testing.T) {
	b, _ := os.ReadFile("testdata/sickle__noRecordsMatch.xml")
	s := &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, string(b))}}
	c, _, _ := newTestClient(t, s, nil)
	p, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil })
	if err != nil || p.Count != 0 || !p.Done() {
		t.Fatalf("%v %+v", err, p)
	}
}

func TestNonOAIBodies(t *testing.T) {
	html, _ := os.ReadFile("testdata/scythe__httpbun__Identify-html.html")
	cases := []struct {
		name string
		step func(http.ResponseWriter, *http.Request)
		want string
	}{
		{"html 200", xmlBody(200, string(html)), `root element is <html>`},
		{"html 404", xmlBody(404, "<html>not here</html>"), `HTTP 404 Not Found; body starts "<html>not here</html>"`},
		{"plain 200", xmlBody(200, "Database error"), `body starts "Database error"`},
		{"403", xmlBody(403, "forbidden"), "HTTP 403"},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			c, sl, srv := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){cs.step}}, nil)
			_, err := c.Identify(context.Background())
			if err == nil || !strings.Contains(err.Error(), cs.want) || !strings.Contains(err.Error(), "repository test: GET "+srv.URL+"/oai?verb=Identify") {
				t.Fatalf("got %v", err)
			}
			if len(sl.d) != 0 {
				t.Errorf("must not retry: %v", sl.d)
			}
		})
	}
}

func TestHeadersGzipAndEscaping(t *testing.T) {
	var got *http.Request
	s := &script{steps: []func(http.ResponseWriter, *http.Request){
		func(w http.ResponseWriter, r *http.Request) {
			got = r
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write([]byte(page1))
			zw.Close()
			w.Write(b.Bytes()) // gzip without Content-Encoding
		},
	}}
	c, _, _ := newTestClient(t, s, func(o *Options) { o.Headers = map[string]string{"Authorization": "Bearer xyz"} })
	p, err := c.ListRecords(context.Background(), Query{Token: "a b+c/d=&e", MetadataPrefix: "ignored", Set: "ignored"}, func(*Record) error { return nil })
	if err != nil || p.Count != 1 {
		t.Fatal(err, p)
	}
	q := got.URL.Query()
	if len(q) != 2 || q.Get("verb") != "ListRecords" || q.Get("resumptionToken") != "a b+c/d=&e" {
		t.Errorf("query %q", got.URL.RawQuery)
	}
	if got.Header.Get("User-Agent") != "rsbridge/test (mailto:ops@example.org)" || got.Header.Get("Authorization") != "Bearer xyz" {
		t.Errorf("headers %v", got.Header)
	}
}

func TestGranularityFormatting(t *testing.T) {
	at := time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, c := range []struct {
		g    Granularity
		want string
	}{{GranularityDay, "from=2024-03-04&metadataPrefix=oai_dc&until=2024-03-04&verb=ListRecords"}, {GranularitySeconds, "from=2024-03-04T05%3A06%3A07Z&metadataPrefix=oai_dc&until=2024-03-04T05%3A06%3A07Z&verb=ListRecords"}} {
		if got := (Query{MetadataPrefix: "oai_dc", From: at, Until: at, Granularity: c.g}).values("ListRecords").Encode(); got != c.want {
			t.Errorf("%v: %s", c.g, got)
		}
	}
}

func TestBodyCap(t *testing.T) {
	big := strings.Replace(page1, "<t xmlns=\"urn:t\">1</t>", "<t xmlns=\"urn:t\">"+strings.Repeat("x", 4096)+"</t>", 1)
	c, sl, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, big)}}, func(o *Options) { o.MaxBodyBytes = 2048 })
	_, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil })
	if !errors.Is(err, ErrBodyTooLarge) || len(sl.d) != 0 {
		t.Fatalf("got %v", err)
	}
}

func TestPolitenessDelay(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, page1), xmlBody(200, page1)}}
	c, sl, _ := newTestClient(t, s, func(o *Options) { o.Delay = 5 * time.Second })
	for i := 0; i < 2; i++ {
		if _, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if len(sl.d) != 1 || sl.d[0] <= 4*time.Second {
		t.Errorf("waits %v", sl.d)
	}
}

func TestHandlerErrorStopsWithoutRetry(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(200, page1)}}
	c, sl, _ := newTestClient(t, s, nil)
	boom := errors.New("store full")
	_, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return boom })
	if !errors.Is(err, boom) || len(sl.d) != 0 {
		t.Fatalf("got %v", err)
	}
}

func TestIdentifyCorpus(t *testing.T) {
	cases := []struct {
		file    string
		gran    Granularity
		deleted string
		warn    bool
	}{
		{"pyoai__dspace-eur-2003__Identify.xml", GranularitySeconds, "no", false},
		{"sickle__Identify.xml", GranularityDay, "persistent", false},
		{"scythe__zenodo__Identify.xml", GranularitySeconds, "no", false},
		{"pyoai__broken-datestamp__Identify.xml", GranularitySeconds, "", true},
	}
	for _, cs := range cases {
		t.Run(cs.file, func(t *testing.T) {
			c, _, _ := newTestClient(t, &script{steps: []func(http.ResponseWriter, *http.Request){fileBody(t, cs.file)}}, nil)
			id, err := c.Identify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if id.Granularity != cs.gran || (cs.deleted != "" && id.DeletedRecord != cs.deleted) || (len(id.Warnings) > 0) != cs.warn || id.RepositoryName == "" {
				t.Errorf("%+v", id)
			}
		})
	}
}

func TestListSetsPagedAndMetadataFormats(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){fileBody(t, "scythe__zenodo__ListSets-page1.xml"), fileBody(t, "scythe__zenodo__ListSets-page2.xml"), fileBody(t, "weko-document__dev-ir-rcos__ListMetadataFormats.xml")}}
	c, _, _ := newTestClient(t, s, nil)
	var sets []Set
	if err := c.ListSets(context.Background(), 3, func(st Set) error { sets = append(sets, st); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(sets) < 2 || sets[0].Spec == "" || sets[0].Name == "" {
		t.Fatalf("%+v", sets)
	}
	if q := s.reqs[1].URL.Query(); q.Get("resumptionToken") == "" || len(q) != 2 {
		t.Errorf("second ListSets request %q", s.reqs[1].URL.RawQuery)
	}
	fs, err := c.ListMetadataFormats(context.Background(), "")
	if err != nil || len(fs) != 7 || fs[0].Prefix == "" || fs[0].Namespace == "" {
		t.Fatalf("%v %+v", err, fs)
	}
}

func TestGuard(t *testing.T) {
	g := Guard{MaxEmptyPages: 3}
	tok := func(v string, n int) *Page { return &Page{Token: ResumptionToken{Value: v}, Count: n} }
	if err := g.Check("", tok("t1", 10)); err != nil {
		t.Fatal(err)
	}
	if err := g.Check("t1", tok("t1", 10)); err == nil || !strings.Contains(err.Error(), "just sent") {
		t.Fatalf("repeated token: %v", err)
	}
	g = Guard{MaxEmptyPages: 3}
	for i, want := range []bool{false, false, true} {
		err := g.Check(fmt.Sprint("t", i), tok(fmt.Sprint("t", i+1), 0))
		if (err != nil) != want {
			t.Fatalf("empty page %d: %v", i, err)
		}
	}
	g = Guard{MaxEmptyPages: 2}
	g.Check("a", tok("b", 0))
	g.Check("b", tok("c", 5)) // progress resets the run
	if err := g.Check("c", tok("d", 0)); err != nil {
		t.Fatal(err)
	}
	if err := g.Check("d", tok("", 0)); err != nil { // an empty last page ends the list
		t.Fatal(err)
	}
}

func TestContextCancelStopsBackoff(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }}}
	ctx, cancel := context.WithCancel(context.Background())
	c, _, _ := newTestClient(t, s, func(o *Options) {
		o.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	})
	_, err := c.Identify(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// pipeTransport is an upstream without sockets: request i is answered by
// steps[i]. Bodies are io.Pipes fed by a goroutine of the step's own, so inside
// a synctest bubble every pause an upstream takes is on the fake clock and the
// client's idle timer (time.AfterFunc) fires exactly when it should, however
// loaded the machine is. Like net/http, cancelling the request's context breaks
// off a body being read.
type pipeTransport struct {
	mu    sync.Mutex
	steps []func(r *http.Request) (*http.Response, error)
	n     int
}

func (p *pipeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	i := p.n
	p.n++
	p.mu.Unlock()
	if i >= len(p.steps) {
		return nil, errors.New("pipeTransport: script exhausted")
	}
	return p.steps[i](r)
}

// pipeResponse answers 200 with a body that write produces; the body ends when
// write returns and breaks off with the context's error once r is cancelled.
func pipeResponse(r *http.Request, write func(w io.Writer)) *http.Response {
	pr, pw := io.Pipe()
	ctx := r.Context()
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	go func() {
		defer stop()
		write(pw)
		pw.Close()
	}()
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/xml; charset=utf-8"}}, Body: pr, ContentLength: -1, Request: r}
}

// attempts records what Options.Observe sees.
type attempts struct {
	mu sync.Mutex
	a  []Attempt
}

func (a *attempts) observe(at Attempt) {
	a.mu.Lock()
	a.a = append(a.a, at)
	a.mu.Unlock()
}

func (a *attempts) list() []Attempt {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Attempt(nil), a.a...)
}

// TestIdleTimeout runs in a synctest bubble (fake clock): a body that keeps
// trickling, each chunk arriving 1 ms before the idle timeout would fire, is read
// to the end although the whole transfer takes many times the timeout; a body
// that stalls halfway, and a response whose headers never come, are each cut
// after exactly the timeout with the timeout error, and retried.
func TestIdleTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	const chunks = 8
	trickle := func(r *http.Request) (*http.Response, error) {
		return pipeResponse(r, func(w io.Writer) {
			step := len(page1)/chunks + 1
			for i := 0; i < len(page1); i += step {
				if i > 0 {
					time.Sleep(timeout - time.Millisecond)
				}
				if _, err := io.WriteString(w, page1[i:min(i+step, len(page1))]); err != nil {
					return
				}
			}
		}), nil
	}
	stallBody := func(r *http.Request) (*http.Response, error) {
		return pipeResponse(r, func(w io.Writer) {
			io.WriteString(w, page1[:len(page1)/2])
			<-r.Context().Done()
		}), nil
	}
	stallHeaders := func(r *http.Request) (*http.Response, error) {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	whole := func(r *http.Request) (*http.Response, error) {
		return pipeResponse(r, func(w io.Writer) { io.WriteString(w, page1) }), nil
	}
	list := func(c *Client) error {
		p, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil })
		if err == nil && (p.Count != 1 || p.Token.Value != "a b+c/d=&e") {
			err = fmt.Errorf("incomplete page %+v", p)
		}
		return err
	}
	synctest.Test(t, func(t *testing.T) {
		var at attempts
		sl := &sleeps{}
		rt := &pipeTransport{steps: []func(*http.Request) (*http.Response, error){trickle, stallBody, whole, stallHeaders, whole}}
		c, err := NewClient(Options{Repository: "test", BaseURL: "http://upstream.test/oai", MaxRetries: 3, Timeout: timeout,
			Transport: rt, Sleep: sl.sleep, Observe: at.observe})
		if err != nil {
			t.Fatal(err)
		}

		// (a) trickling: never idle for the timeout, so never cut.
		if err := list(c); err != nil {
			t.Fatalf("slow but steady body failed: %v", err)
		}
		a := at.list()
		if len(a) != 1 || a[0].Err != nil || len(sl.d) != 0 {
			t.Fatalf("steady body: attempts %+v, waits %v", a, sl.d)
		}
		if want := (chunks - 2) * (timeout - time.Millisecond); a[0].Duration < want {
			t.Fatalf("steady body took %v, want at least %v: the test no longer outlasts the timeout", a[0].Duration, want)
		}

		// (b) stalls, in the body and before the headers: cut with the timeout error and retried.
		for _, where := range []string{"body", "headers"} {
			n := len(at.list())
			if err := list(c); err != nil {
				t.Fatalf("stalled %s was not retried: %v", where, err)
			}
			a := at.list()[n:]
			if len(a) != 2 || a[1].Err != nil {
				t.Fatalf("stalled %s: attempts %+v", where, a)
			}
			if a[0].Err == nil || !strings.Contains(a[0].Err.Error(), "no data from the repository for 2s (timeout)") || !a[0].Retry {
				t.Errorf("stalled %s: first attempt err %v, retry %v; want the timeout error, retried", where, a[0].Err, a[0].Retry)
			}
			if a[0].Duration != timeout {
				t.Errorf("stalled %s: cut after %v, want exactly %v", where, a[0].Duration, timeout)
			}
		}
		if len(sl.d) != 2 {
			t.Fatalf("waits %v, want one backoff per stall", sl.d)
		}
	})
}

// TestIdleTimeoutRealConn checks the same cut over a real socket, where the
// cancellation must reach a body read inside net/http. Only a lower bound on
// time is asserted (the timer cannot fire early), so load cannot make it fail;
// the upstream stalls until the client gives up, however long that takes.
func TestIdleTimeoutRealConn(t *testing.T) {
	const timeout = 200 * time.Millisecond
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		fmt.Fprint(w, page1[:len(page1)/2])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute): // the body then ends short: not the timeout error
		}
	}
	var at attempts
	s := &script{steps: []func(http.ResponseWriter, *http.Request){stall, xmlBody(200, page1)}}
	c, sl, _ := newTestClient(t, s, func(o *Options) { o.Timeout = timeout; o.Observe = at.observe })
	if _, err := c.ListRecords(context.Background(), Query{MetadataPrefix: "oai_dc"}, func(*Record) error { return nil }); err != nil {
		t.Fatalf("stalled body was not retried: %v", err)
	}
	a := at.list()
	if len(a) != 2 || len(sl.d) != 1 || a[1].Err != nil {
		t.Fatalf("attempts %+v, waits %v", a, sl.d)
	}
	if a[0].Err == nil || !strings.Contains(a[0].Err.Error(), "(timeout)") || !a[0].Retry || a[0].Duration < timeout {
		t.Fatalf("stalled attempt: err %v, retry %v, after %v; want the timeout error after at least %v", a[0].Err, a[0].Retry, a[0].Duration, timeout)
	}
}

// TestOAIErrorWith5xx: an OAI error document sent with a 500 is a protocol
// answer (PMH-003), not a reason to retry.
func TestOAIErrorWith5xx(t *testing.T) {
	b, _ := os.ReadFile("testdata/scythe__zenodo__error-badResumptionToken.xml")
	s := &script{steps: []func(http.ResponseWriter, *http.Request){xmlBody(500, string(b))}}
	c, sl, _ := newTestClient(t, s, nil)
	_, err := c.ListRecords(context.Background(), Query{Token: "x"}, func(*Record) error { return nil })
	if !IsCode(err, BadResumptionToken) || len(sl.d) != 0 {
		t.Fatalf("got %v (waits %v)", err, sl.d)
	}
}

func TestGuardCycleAndCap(t *testing.T) {
	g := Guard{}
	tok := func(v string) *Page { return &Page{Token: ResumptionToken{Value: v}, Count: 5} }
	if err := g.Check("", tok("A")); err != nil {
		t.Fatal(err)
	}
	if err := g.Check("A", tok("B")); err != nil {
		t.Fatal(err)
	}
	if err := g.Check("B", tok("A")); err == nil || !strings.Contains(err.Error(), "already used (a cycle)") {
		t.Fatalf("cycle: %v", err)
	}
	g = Guard{MaxPages: 3}
	g.Check("", tok("1"))
	g.Check("1", tok("2"))
	if err := g.Check("2", tok("3")); err == nil || !strings.Contains(err.Error(), "more than 3 pages") {
		t.Fatalf("cap: %v", err)
	}
}
