package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/source"
)

// errMethod answers a method a route does not take.
var errMethod = &source.Error{Code: codeMethod,
	Msg: "method not allowed: documents are read with GET or HEAD; the admin API starts runs with POST"}

// Codes of the HTTP face, beyond the source's.
const (
	codeMethod source.Code = 100 + iota
	codeBusy
)

// statusOf is the one mapping from an error to an HTTP status: the source's
// codes, the scheduler's refusals, and 500 for everything else (a fault of
// rsbridge or its store, which is logged).
func statusOf(err error) int {
	if e, ok := errors.AsType[*source.Error](err); ok {
		switch e.Code {
		case source.CodeNotFound, source.CodeNotYet:
			return http.StatusNotFound
		case source.CodeGone:
			return http.StatusGone
		case source.CodeConflict:
			return http.StatusConflict
		case source.CodeInvalid:
			return http.StatusBadRequest
		case codeMethod:
			return http.StatusMethodNotAllowed
		case codeBusy:
			return http.StatusServiceUnavailable
		}
	}
	switch {
	case errors.Is(err, harvest.ErrUnknownRepository):
		return http.StatusNotFound
	case errors.Is(err, harvest.ErrBusy):
		return http.StatusConflict
	case errors.Is(err, harvest.ErrShuttingDown):
		return http.StatusServiceUnavailable
	case errors.Is(err, errNoScheduler):
		return http.StatusServiceUnavailable
	case errors.Is(err, harvest.ErrUnknownKind):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// errNoScheduler refuses admin runs on a server without a scheduler.
var errNoScheduler = errors.New("this server runs no scheduler")

// fail answers an error that happened before anything was written, with
// the status statusOf gives it. A request the client gave up on gets no
// answer; an internal error is logged and its details stay in the log.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	status := statusOf(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "path", source.Clip(r.URL.Path, 200), "err", err)
		msg = "internal error; see the rsbridge log"
	}
	if e, ok := errors.AsType[*source.Error](err); ok && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter.Seconds())))
	}
	httpError(w, status, msg)
}

// httpError writes a plain-text error; the message is clipped, since parts
// of it may echo the request.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Del("Content-Length")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, source.Clip(msg, 1024))
}
