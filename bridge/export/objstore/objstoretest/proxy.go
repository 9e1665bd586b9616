package objstoretest

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a reverse proxy on 127.0.0.1 that counts requests by method and
// forwards them unchanged, Host header included (it is part of the S3
// signature), to a server such as versitygw. Point an S3Config's Endpoint at
// URL to count the PUTs an export makes.
type Proxy struct {
	URL string // "http://127.0.0.1:PORT"

	mu     sync.Mutex
	counts map[string]int
}

// NewProxy starts a counting proxy to target (e.g. Server.Endpoint) and
// stops it when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("proxy target %q: %v", target, err)
	}
	p := &Proxy{counts: map[string]int{}}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host
	}, ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
		// Quietly: a client giving up mid-body is a test's business.
		w.WriteHeader(http.StatusBadGateway)
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.counts[r.Method]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Proxy starts a counting proxy in front of s; use it with
// Config(bucket, prefix) and the proxy's URL as Endpoint.
func (s *Server) Proxy(t testing.TB) *Proxy { return NewProxy(t, s.Endpoint) }

// Count is the number of requests with method seen so far.
func (p *Proxy) Count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[method]
}

// Counts is a copy of the request counts by method.
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// Reset sets every count to zero.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.counts)
}
