package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
)

// fetcher is the mirror's one HTTP client: timeouts, retries with backoff
// and Retry-After, a delay between requests, extra headers, bounded
// bodies. TLS is verified (the default transport's settings).
type fetcher struct {
	hc         *http.Client
	headers    http.Header
	ua         string
	retries    int
	backoff    time.Duration
	maxBackoff time.Duration
	delay      time.Duration
	maxDoc     int64
	log        *slog.Logger

	mu   sync.Mutex
	next time.Time // no request starts before it (the politeness delay)
}

// errStatus is an HTTP answer that is not a success.
type errStatus struct {
	url    string
	status int
}

func (e *errStatus) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.url, e.status, http.StatusText(e.status))
}

// notFound reports a 404 or 410.
func notFound(err error) bool {
	e, ok := errors.AsType[*errStatus](err)
	return ok && (e.status == http.StatusNotFound || e.status == http.StatusGone)
}

// retryable reports a status worth asking again.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
}

// wait holds a request until the politeness delay since the last one has
// passed.
func (f *fetcher) wait(ctx context.Context) error {
	if f.delay <= 0 {
		return nil
	}
	f.mu.Lock()
	now := time.Now()
	at := f.next
	if at.Before(now) {
		at = now
	}
	f.next = at.Add(f.delay)
	f.mu.Unlock()
	return sleep(ctx, time.Until(at))
}

func sleep(ctx context.Context, d time.Duration) error {
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

// get sends a GET with the headers given (conditional headers, say) and
// returns a response whose status is 2xx or 304, retrying network errors
// and retryable statuses. The caller closes the body.
func (f *fetcher) get(ctx context.Context, url string, hdr http.Header) (*http.Response, error) {
	var last error
	for attempt := 0; ; attempt++ {
		if err := f.wait(ctx); err != nil {
			return nil, err
		}
		resp, err := f.do(ctx, url, hdr)
		var after time.Duration
		switch {
		case err != nil:
			last = fmt.Errorf("GET %s: %w", url, err)
		case resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusNotModified:
			return resp, nil
		default:
			resp.Body.Close()
			last = &errStatus{url: url, status: resp.StatusCode}
			if !retryable(resp.StatusCode) {
				return nil, last
			}
			after = retryAfter(resp.Header.Get("Retry-After"), f.maxBackoff)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if attempt >= f.retries {
			return nil, fmt.Errorf("%w (after %d attempts)", last, attempt+1)
		}
		if after == 0 {
			after = min(f.backoff<<attempt, f.maxBackoff)
			after = after/2 + rand.N(after/2+1)
		}
		f.log.Debug("retrying", "url", url, "after", after, "err", last)
		if err := sleep(ctx, after); err != nil {
			return nil, err
		}
	}
}

func (f *fetcher) do(ctx context.Context, url string, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range f.headers {
		req.Header[k] = vs
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", f.ua)
	return f.hc.Do(req)
}

// retryAfter reads Retry-After (seconds or an HTTP date), capped.
func retryAfter(v string, maxWait time.Duration) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, maxWait)
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), maxWait)
	}
	return 0
}

// doc fetches and parses a ResourceSync document (small ones: a
// Capability List, a dump's package list).
func (f *fetcher) doc(ctx context.Context, url string) (*rsync.Document, *http.Response, error) {
	return f.read(ctx, url, "", rsync.Parse)
}

// stream fetches a document and hands its entries to fn as they are read
// (rsync.Stream: constant memory, whatever the list's size); with an etag,
// a 304 answers a nil document.
func (f *fetcher) stream(ctx context.Context, url, etag string, fn func(*rsync.Document, rsync.Entry) error) (*rsync.Document, *http.Response, error) {
	return f.read(ctx, url, etag, func(r io.Reader) (*rsync.Document, error) { return rsync.Stream(r, fn) })
}

// read fetches a document (If-None-Match with an etag: a 304 answers a
// nil document) and parses at most maxDoc bytes of it.
func (f *fetcher) read(ctx context.Context, url, etag string, parse func(io.Reader) (*rsync.Document, error)) (*rsync.Document, *http.Response, error) {
	var hdr http.Header
	if etag != "" {
		hdr = http.Header{"If-None-Match": {etag}}
	}
	resp, err := f.get(ctx, url, hdr)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return nil, resp, nil
	}
	body := &io.LimitedReader{R: resp.Body, N: f.maxDoc + 1}
	doc, err := parse(body)
	if body.N == 0 {
		return nil, resp, fmt.Errorf("%s: larger than %d bytes, more than a sitemap may hold", url, f.maxDoc)
	}
	if err != nil {
		return nil, resp, fmt.Errorf("%s: %w", url, err)
	}
	return doc, resp, nil
}
