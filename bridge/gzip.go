package bridge

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
)

// gzipDocuments compresses ResourceSync documents and pages, only for clients
// that ask with Accept-Encoding: gzip (the reference client never does).
// Resources are served as stored, so their bytes, length and hash agree with
// the lists.
func gzipDocuments(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/resource/") || !acceptsGzip(r.Header.Get("Accept-Encoding")) || r.Method == http.MethodHead {
			if !strings.Contains(r.URL.Path, "/resource/") {
				w.Header().Add("Vary", "Accept-Encoding")
			}
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		zw := gzip.NewWriter(w)
		gw := &gzipWriter{ResponseWriter: w, zw: zw}
		defer func() {
			if !gw.plain {
				zw.Close()
			}
		}()
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

type gzipWriter struct {
	http.ResponseWriter
	zw    *gzip.Writer
	plain bool // an error response: sent uncompressed
	wrote bool
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.wrote {
		g.wrote = true
		g.Header().Del("Content-Length")
		if code >= 300 {
			g.plain = true
			g.Header().Del("Content-Encoding")
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if g.plain {
		return g.ResponseWriter.Write(b)
	}
	return g.zw.Write(b)
}
