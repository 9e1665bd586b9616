package bridge

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
)

// Limits on what one client can hold (issue "never stuck"): a large document
// holds a store snapshot and a goroutine while it streams, so at most
// server.max_streams of them stream at once, and a client that stops reading
// is cut off after server.write_idle; a request body must arrive within
// bodyTimeout.
type limits struct {
	streams     chan struct{} // one token per large document streaming now
	writeIdle   time.Duration
	bodyTimeout time.Duration // longest read of a request body (tests lower it)
}

func newLimits(cfg *config.Config) limits {
	return limits{streams: make(chan struct{}, max(cfg.Server.MaxStreams, 1)),
		writeIdle: cmp.Or(cfg.Server.WriteIdle, config.DefaultWriteIdle), bodyTimeout: bodyTimeout}
}

// errBusy refuses a large document while max_streams others stream.
var errBusy = &source.Error{Code: codeBusy, RetryAfter: 10 * time.Second,
	Msg: "busy: too many large documents are being sent; retry in a few seconds"}

// bodyTimeout bounds reading a request body (a WebSub subscription, an
// admin call): a client sending it slowly is cut off instead of holding a
// connection and a goroutine for as long as it likes (issue 21, item 4).
const bodyTimeout = 10 * time.Second

// bodyDeadline gives a request that carries a body a read deadline of
// bodyTimeout. Requests without one (every GET of a document) get none:
// net/http's read deadline would also cut a long response, whose
// background read of the connection it bounds too.
func (s *Server) bodyDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.lim.bodyTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

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
		case s.lim.streams <- struct{}{}:
		default:
			s.fail(w, r, errBusy)
			return
		}
		var once sync.Once
		release := func() { once.Do(func() { <-s.lim.streams }) }
		defer release()
		iw := &idleWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: s.lim.writeIdle}
		iw.rc.SetWriteDeadline(time.Now().Add(s.lim.writeIdle))
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
