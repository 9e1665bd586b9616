package oaipmh

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progressReader calls onData whenever bytes arrive, to push the idle timeout back.
type progressReader struct {
	r      io.Reader
	onData func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.onData()
	}
	return n, err
}

// Options configure a Client. Zero durations and sizes take the defaults noted.
type Options struct {
	Repository string // name used in every error message
	BaseURL    string
	UserAgent  string            // default "rsbridge"
	Headers    map[string]string // extra request headers
	// SecretParams are query parameters of BaseURL that carry secrets: sent,
	// but left out of every URL the client reports (errors, logs, Page.URL,
	// URL). Userinfo in BaseURL is sent as Basic auth (unless Headers has an
	// Authorization) and never reported either.
	SecretParams   []string
	Timeout        time.Duration // longest wait for data (headers or the next body bytes), default 120s
	ConnectTimeout time.Duration // default 10s
	Delay          time.Duration // politeness delay between requests, 0 = none
	MaxRetries     int           // retries for network errors, 5xx, 429, 503
	BackoffBase    time.Duration // default 2s
	BackoffMax     time.Duration // default 5m
	MaxRetryAfter  time.Duration // cap on Retry-After, default 1h
	MaxBodyBytes   int64         // default 256 MiB, applies after gzip too
	// MaxRecordBytes is the largest record, default 16 MiB; a larger record is
	// quarantined. It also bounds every single token (text, tag, comment) outside
	// the records, so decoding memory depends on it, not on the repository.
	MaxRecordBytes int
	// MaxIdentifierBytes is the longest identifier (and setSpec), default 8192,
	// at most 30000; a record with a longer one is quarantined. Badger keys are
	// limited to 65,000 bytes and rsbridge's keys hold the repository name, the
	// metadata prefix, a setSpec and the identifier, so both must stay well below.
	MaxIdentifierBytes int
	Transport          http.RoundTripper // default: a fresh transport with TLS verification on
	Logger             *slog.Logger
	// Sleep waits d or until ctx is done; tests replace it. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	// Observe, if set, is called after every request attempt (metrics).
	Observe func(Attempt)
}

// Attempt is one HTTP request to the repository, as Options.Observe sees it.
type Attempt struct {
	Verb     string
	Duration time.Duration // from sending the request to the end of the body
	Err      error         // nil on success; the cause of a failed attempt
	Retry    bool          // the request is sent again
}

// Client talks to one OAI-PMH repository. It is safe for concurrent use, but sends
// one request at a time and keeps the politeness delay between them.
type Client struct {
	opts Options
	base *url.URL // without userinfo, with every query parameter
	hc   *http.Client
	log  *slog.Logger

	mu   sync.Mutex // serialises requests to the repository
	last time.Time  // end of the previous request
}

// NewTransport is the HTTP transport a client makes when Options.Transport
// is nil: TLS verified, the proxy from the environment, connect and
// response-header timeouts. Clients with the same timeouts may share one.
func NewTransport(connectTimeout, timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: timeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   2,
		ForceAttemptHTTP2:     true,
	}
}

// Transports shares one transport (and its connection pool) among clients
// with the same timeouts: with hundreds of repositories, a pool each would
// each keep idle connections. The zero value is ready; it is safe for
// concurrent use.
type Transports struct {
	mu sync.Mutex
	m  map[[2]time.Duration]*http.Transport
}

// For is the shared transport for these timeouts (NewTransport's).
func (ts *Transports) For(connectTimeout, timeout time.Duration) http.RoundTripper {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	k := [2]time.Duration{connectTimeout, timeout}
	t, ok := ts.m[k]
	if !ok {
		if ts.m == nil {
			ts.m = map[[2]time.Duration]*http.Transport{}
		}
		t = NewTransport(connectTimeout, timeout)
		ts.m[k] = t
	}
	return t
}

// CloseIdle closes the idle connections of every transport.
func (ts *Transports) CloseIdle() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.m {
		t.CloseIdleConnections()
	}
}

// NewClient checks the options and builds a client.
func NewClient(opts Options) (*Client, error) {
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("repository %s: base URL %q is not an absolute http(s) URL", opts.Repository, opts.BaseURL)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.Timeout, 120*time.Second)
	def(&opts.ConnectTimeout, 10*time.Second)
	def(&opts.BackoffBase, 2*time.Second)
	def(&opts.BackoffMax, 5*time.Minute)
	def(&opts.MaxRetryAfter, time.Hour)
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 256 << 20
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = defaultMaxRecordBytes
	}
	if opts.MaxIdentifierBytes <= 0 {
		opts.MaxIdentifierBytes = defaultMaxIdentifierBytes
	}
	if opts.MaxIdentifierBytes > maxIdentifierBytesCap {
		return nil, fmt.Errorf("repository %s: max_identifier_bytes %d is above %d: Badger keys are limited to 65,000 bytes and hold a setSpec and the identifier (lower max_identifier_bytes)", opts.Repository, opts.MaxIdentifierBytes, maxIdentifierBytesCap)
	}
	if u.User != nil {
		// Credentials in the URL: Basic auth on every request, and a URL
		// that can be reported.
		headers := make(map[string]string, len(opts.Headers)+1)
		auth := false
		for k, v := range opts.Headers {
			headers[k] = v
			auth = auth || strings.EqualFold(k, "Authorization")
		}
		if !auth {
			pass, _ := u.User.Password()
			headers["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
		}
		opts.Headers = headers
		u.User = nil
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "rsbridge"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	rt := opts.Transport
	if rt == nil {
		rt = NewTransport(opts.ConnectTimeout, opts.Timeout)
	}
	return &Client{
		opts: opts,
		base: u,
		// No whole-request deadline: a large page on a slow link may take longer
		// than Timeout in all; once() cancels a request that stalls instead.
		hc:  &http.Client{Transport: rt},
		log: opts.Logger.With("repo", opts.Repository),
	}, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// URL returns the request URL for the arguments as it may be reported (in
// logs, errors and "via" links): without credentials and secret parameters.
func (c *Client) URL(args url.Values) string {
	return c.requestURL(args, true)
}

// requestURL is the URL for the arguments; public leaves out the secret
// query parameters.
func (c *Client) requestURL(args url.Values, public bool) string {
	u := *c.base
	q := u.Query()
	if public {
		for k := range q {
			for _, s := range c.opts.SecretParams {
				if strings.EqualFold(k, s) {
					delete(q, k)
				}
			}
		}
	}
	for k, vs := range args {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// consumer reads one response body. Errors it returns are classified by do.
type consumer func(body io.Reader) error

// do performs one logical request with politeness, retries and backoff.
func (c *Client) do(ctx context.Context, args url.Values, consume consumer) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, real := c.URL(args), c.requestURL(args, false)
	var lastErr error
	for attempt := 0; ; attempt++ {
		if wait := c.last.Add(c.opts.Delay).Sub(c.opts.Now()); c.opts.Delay > 0 && !c.last.IsZero() && wait > 0 {
			if err := c.opts.Sleep(ctx, wait); err != nil {
				return u, &RequestError{c.opts.Repository, u, err}
			}
		}
		began := c.opts.Now()
		err, retryAfter, retry := c.once(ctx, real, u, consume)
		c.last = c.opts.Now()
		var he handlerError
		if c.opts.Observe != nil && !errors.As(err, &he) {
			c.opts.Observe(Attempt{Verb: args.Get("verb"), Duration: c.last.Sub(began), Err: err,
				Retry: err != nil && retry && attempt < c.opts.MaxRetries && ctx.Err() == nil})
		}
		if err == nil {
			return u, nil
		}
		if errors.As(err, &he) {
			return u, he.err
		}
		lastErr = err
		if ctx.Err() != nil {
			return u, &RequestError{c.opts.Repository, u, ctx.Err()}
		}
		if !retry {
			return u, &RequestError{c.opts.Repository, u, err}
		}
		if attempt >= c.opts.MaxRetries {
			return u, &RequestError{c.opts.Repository, u, fmt.Errorf("giving up after %d retries: %w", attempt, lastErr)}
		}
		d := retryAfter
		if d <= 0 {
			d = c.backoff(attempt)
		}
		c.log.Warn("request failed, retrying", "url", u, "attempt", attempt+1, "wait", d.String(), "err", err)
		if err := c.opts.Sleep(ctx, d); err != nil {
			return u, &RequestError{c.opts.Repository, u, err}
		}
	}
}

// backoff is capped exponential backoff with jitter: a random duration in [d/2, d]
// where d = base * 2^attempt, capped at BackoffMax.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.BackoffBase
	for i := 0; i < attempt && d < c.opts.BackoffMax; i++ {
		d *= 2
	}
	if d > c.opts.BackoffMax {
		d = c.opts.BackoffMax
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// once sends the request and hands the body to consume. It reports whether a
// failure is worth retrying and any Retry-After delay the server asked for.
func (c *Client) once(parent context.Context, u, public string, consume consumer) (err error, retryAfter time.Duration, retry bool) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var stalled atomic.Bool
	idle := time.AfterFunc(c.opts.Timeout, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	defer func() {
		if err != nil && stalled.Load() && parent.Err() == nil {
			err, retry = fmt.Errorf("no data from the repository for %s (timeout): %w", c.opts.Timeout, err), true
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err, 0, false
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", "text/xml, application/xml;q=0.9, */*;q=0.1")
	for k, v := range c.opts.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// The transport's error names the URL sent, secrets and all.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			ue.URL = public
		}
		return err, 0, true
	}
	defer resp.Body.Close()
	raw := &progressReader{r: resp.Body, onData: func() { idle.Reset(c.opts.Timeout) }}
	body := io.Reader(&limitedBody{r: raw, n: c.opts.MaxBodyBytes, max: c.opts.MaxBodyBytes})
	br := bufio.NewReaderSize(body, 32<<10)
	// Some servers gzip without being asked or without saying so.
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, zerr := gzip.NewReader(br)
		if zerr != nil {
			return &FormatError{Reason: "bad gzip body", Err: zerr}, 0, false
		}
		defer zr.Close()
		// The cap applies to what we parse, too: a small gzip body can expand.
		br = bufio.NewReaderSize(&limitedBody{r: zr, n: c.opts.MaxBodyBytes, max: c.opts.MaxBodyBytes}, 32<<10)
	}

	switch {
	case resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests:
		ra := c.retryAfter(resp.Header.Get("Retry-After"))
		return c.statusError(resp, br, ra), ra, true
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout:
		// An OAI-PMH error document is a protocol answer whatever the status
		// (PMH-003); anything else from a 5xx is worth retrying.
		head, _ := br.Peek(2048)
		if !bytes.Contains(head, []byte("OAI-PMH")) || !bytes.Contains(head, []byte("<error")) {
			return c.statusError(resp, br, 0), 0, true
		}
	case resp.StatusCode != http.StatusOK:
		// OAI error documents sent with a 4xx status (WEKO3 uses 422) are read as
		// OAI-PMH; anything else is an HTTP error.
		head, _ := br.Peek(1024)
		if !bytes.Contains(head, []byte("OAI-PMH")) {
			return c.statusError(resp, br, 0), 0, false
		}
	}
	if err := consume(br); err != nil {
		var fe *FormatError
		var es Errors
		var he handlerError
		switch {
		case errors.As(err, &he), errors.As(err, &fe), errors.As(err, &es), errors.Is(err, ErrBodyTooLarge), errors.As(err, new(*GuardError)), errors.As(err, new(*RecordError)):
			return err, 0, false
		}
		return err, 0, true // the body broke off: network
	}
	return nil, 0, false
}

func (c *Client) statusError(resp *http.Response, br *bufio.Reader, ra time.Duration) error {
	head, _ := br.Peek(512)
	return &HTTPError{Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode), RetryAfter: ra, Snippet: snippet(head)}
}

// retryAfter reads a Retry-After value in seconds or as an HTTP date, capped.
func (c *Client) retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		if n > int64(c.opts.MaxRetryAfter/time.Second) {
			return c.opts.MaxRetryAfter
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(c.opts.Now())
	} else {
		return 0
	}
	if d < 0 {
		d = 0
	}
	if d > c.opts.MaxRetryAfter {
		d = c.opts.MaxRetryAfter
	}
	return d
}
