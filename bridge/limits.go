package bridge

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Limits on what one client can hold (issue "never stuck"): a large document
// holds a store snapshot and a goroutine while it streams, so at most
// server.max_streams of them stream at once, and a client that stops reading
// is cut off after server.write_idle.

// maxIdentifierBytes bounds an identifier given in a request (start=, a
// resource path); the harvest refuses longer ones (oaipmh.Options.MaxIdentifierBytes).
const maxIdentifierBytes = 8192

// streaming wraps a handler of a large document: it refuses with 503 and
// Retry-After when max_streams documents are already streaming, and gives the
// response an idle write deadline that each write pushes back. The slot
// bounds what a document holds while it is produced (a store snapshot, a
// goroutine): a handler that goes on to send a finished file (a dump
// package, a document from the cache) gives it back first with
// releaseSlot, so clients that stop reading a file hold no slot and cannot
// lock everyone else out (issue 21, item 5).
func (s *Server) streaming(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.streams <- struct{}{}:
		default:
			w.Header().Set("Retry-After", "10")
			httpError(w, http.StatusServiceUnavailable, "busy: too many large documents are being sent; retry in a few seconds")
			return
		}
		var once sync.Once
		release := func() { once.Do(func() { <-s.streams }) }
		defer release()
		iw := &idleWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: s.writeIdle}
		iw.rc.SetWriteDeadline(time.Now().Add(s.writeIdle))
		h(iw, r.WithContext(context.WithValue(r.Context(), slotKey{}, release)))
	}
}

type slotKey struct{}

// releaseSlot gives back the streaming slot the request holds, if any.
func releaseSlot(r *http.Request) {
	if release, ok := r.Context().Value(slotKey{}).(func()); ok {
		release()
	}
}

// idleWriter pushes the connection's write deadline back before every write,
// so a document of any size may take as long as the client keeps reading.
type idleWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
}

func (w *idleWriter) Write(b []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.idle))
	return w.ResponseWriter.Write(b)
}

func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ReadFrom keeps sendfile for files (the document cache, dump packages):
// it copies 8 MiB at a time through the connection's own ReadFrom, pushing
// the deadline back before each. http.ServeContent hands it the file inside
// an io.LimitedReader; that one is unwrapped, since the connection sends a
// file with sendfile only when it is at most one LimitedReader deep.
func (w *idleWriter) ReadFrom(r io.Reader) (int64, error) {
	src, left := r, int64(-1) // -1: to EOF
	if lr, ok := r.(*io.LimitedReader); ok {
		src, left = lr.R, lr.N
		defer func() { lr.N = left }()
	}
	var total int64
	for left != 0 {
		chunk := int64(8 << 20)
		if left > 0 {
			chunk = min(chunk, left)
		}
		w.rc.SetWriteDeadline(time.Now().Add(w.idle))
		n, err := io.Copy(w.ResponseWriter, &io.LimitedReader{R: src, N: chunk})
		total += n
		if left > 0 {
			left -= n
		}
		if err != nil || n < chunk {
			return total, err
		}
	}
	return total, nil
}

// clientGone reports an error that means the client went away or stopped
// reading: not the server's failure, so not worth an ERROR line.
func clientGone(r *http.Request, err error) bool {
	if r.Context().Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// validIdentifier reports whether a request names an identifier the store
// could hold.
func validIdentifier(id string) bool {
	return id != "" && len(id) <= maxIdentifierBytes && utf8.ValidString(id) && !strings.ContainsRune(id, 0)
}

// clip shortens text echoed from a request for an error body or a log line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
