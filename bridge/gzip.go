package bridge

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// gzipDocuments compresses ResourceSync documents and pages, only for clients
// that ask with Accept-Encoding: gzip (the reference client never does).
// Resources are served as stored, so their bytes, length and hash agree with
// the lists; dump packages are ZIP files already; a handler that sets
// Content-Encoding itself (a cached document served in its stored gzip form)
// is passed through. Compressors are pooled: each holds about 1 MB.
func gzipDocuments(next http.Handler) http.Handler {
	var pool sync.Pool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/resource/") {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w, pool: &pool}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

// acceptsGzip reads Accept-Encoding: gzip listed without q=0.
func acceptsGzip(v string) bool {
	for _, part := range strings.Split(v, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.TrimSpace(k) == "q" {
				q, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				return err == nil && q > 0
			}
		}
		return true
	}
	return false
}

// gzipWriter decides when the status is known: error responses, responses
// the handler encoded itself and content that does not compress go out as
// they are; the rest is compressed.
type gzipWriter struct {
	http.ResponseWriter
	pool  *sync.Pool
	zw    *gzip.Writer // nil: passed through
	wrote bool
}

func compressible(contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	switch strings.TrimSpace(ct) {
	case "application/xml", "text/xml", "application/atom+xml", "text/html", "text/plain", "application/json":
		return true
	}
	return false
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.wrote {
		g.wrote = true
		h := g.Header()
		if code < 300 && code != http.StatusNoContent && h.Get("Content-Encoding") == "" && compressible(h.Get("Content-Type")) {
			h.Del("Content-Length")
			h.Set("Content-Encoding", "gzip")
			// Compressed on the fly, the bytes are another representation:
			// the ETag becomes weak, which If-None-Match still matches.
			if etag := h.Get("ETag"); strings.HasPrefix(etag, `"`) {
				h.Set("ETag", "W/"+etag)
			}
			if z, ok := g.pool.Get().(*gzip.Writer); ok {
				z.Reset(g.ResponseWriter)
				g.zw = z
			} else {
				g.zw = gzip.NewWriter(g.ResponseWriter)
			}
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if g.zw == nil {
		return g.ResponseWriter.Write(b)
	}
	return g.zw.Write(b)
}

func (g *gzipWriter) close() {
	if g.zw != nil {
		g.zw.Close()
		g.pool.Put(g.zw)
	}
}
