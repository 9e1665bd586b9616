package bridge

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/store"
)

// The admin API: present only when admin.token (or admin.token_file) is set,
// every request authenticated with "Authorization: Bearer <token>".
//
//	GET  /admin/status                  the full status (error texts never hidden); takes
//	                                    status.json's query: state, host, q, page, per_page
//	GET  /admin/repos/{repo}            one repository's RepoReport
//	POST /admin/harvest?state=S&host=H  harvest every repository in state S (failing, ok,
//	                                    running, waiting, never: see repoState) and/or on
//	                                    upstream host H; ?full=1 for full harvests
//	POST /admin/repos/{repo}/harvest    start a harvest; ?full=1 for a full one
//	POST /admin/repos/{repo}/reconcile  start a reconciliation; ?force=1 lifts its safety limits
//	POST /admin/repos/{repo}/cancel     stop the running run after its last committed page
//	GET  /admin/backup                  an online backup of the store (rsbridge restore reads it)
//
// Answers are JSON: 202 for a run started, 409 when the repository is busy
// (with what runs), 404 for an unknown repository, 401 without the token.
//
// POST /admin/harvest is the bulk action ("harvest every repository whose
// last run failed", "everything on the host that was down"): it needs
// state or host (both: repositories that match both; q narrows further
// by name), else 400, as for an unknown state. It queues a run of each
// repository selected, through the scheduler's queue (concurrency and
// per-host limits hold), and answers 202 with AdminBulk: the kind, how
// many matched, which were queued and which were busy (a run of them is
// going or waiting already; they are left alone). A selection that
// matches nothing is no error: 200 with matched 0.

// AdminRun is the answer to a harvest, reconcile or cancel request.
type AdminRun struct {
	Repository string            `json:"repository"`
	Kind       string            `json:"kind,omitempty"`
	Started    bool              `json:"started,omitempty"`
	Cancelled  bool              `json:"cancelled,omitempty"`
	Running    *harvest.Activity `json:"running,omitempty"`
	Message    string            `json:"message,omitempty"`
}

// AdminBulk is the answer to a bulk harvest.
type AdminBulk struct {
	Kind    string       `json:"kind"`
	Filter  StatusFilter `json:"filter"`
	Matched int          `json:"matched"`
	Queued  []string     `json:"queued"`
	Busy    []string     `json:"busy"`
	Message string       `json:"message,omitempty"`
}

// adminRoutes adds the admin API to r.
func (s *Server) adminRoutes(r *mux.Router) {
	get := []string{http.MethodGet, http.MethodHead}
	for _, route := range []struct {
		path    string
		h       http.HandlerFunc
		methods []string
	}{
		{"/admin/status", s.adminStatus, get},
		{"/admin/repos/{repo}", s.adminRepo, get},
		{"/admin/harvest", s.adminBulkHarvest, []string{http.MethodPost}},
		{"/admin/repos/{repo}/harvest", s.adminTrigger(harvest.KindHarvest), []string{http.MethodPost}},
		{"/admin/repos/{repo}/reconcile", s.adminTrigger(harvest.KindReconcile), []string{http.MethodPost}},
		{"/admin/repos/{repo}/cancel", s.adminCancel, []string{http.MethodPost}},
		{"/admin/backup", s.adminBackup, []string{http.MethodGet}},
		{"/admin/repos/{repo}/quality/{prefix}", s.adminQuality, get},
	} {
		r.Handle(route.path, s.requireToken(route.h)).Methods(route.methods...)
	}
}

// bearer returns the credentials of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 9110 §11.1; "bearer x" was
// refused).
func bearer(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

// requireToken lets a request through only with the admin token. Tokens
// are compared as SHA-256 digests in constant time, so neither the content
// nor the length of the token leaks through timing.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], s.ops.digest[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rsbridge admin"`)
			writeJSON(w, http.StatusUnauthorized, AdminRun{Message: "the admin API needs Authorization: Bearer <admin.token>"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) adminStatus(w http.ResponseWriter, r *http.Request) {
	s.serveStatusJSON(w, r, false)
}

func (s *Server) adminRepo(w http.ResponseWriter, r *http.Request) {
	name := vars(r)["repo"]
	repo, ok := s.cfg().Repository(name)
	if !ok {
		writeJSON(w, http.StatusNotFound, AdminRun{Repository: name, Message: fmt.Sprintf("no repository %q in the configuration", name)})
		return
	}
	rr, err := s.repoReport(r.Context(), repo, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rr)
}

// adminBulkHarvest queues a harvest of every repository the state and
// host selectors match (see the admin API above).
func (s *Server) adminBulkHarvest(w http.ResponseWriter, r *http.Request) {
	q, err := ParseStatusQuery(r.URL.Query())
	if err == nil && q.Filter.State == "" && q.Filter.Host == "" {
		err = invalid("say which repositories to harvest: ?state=failing (or ok, running, waiting, never) and/or ?host=NAME")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := AdminBulk{Kind: harvest.KindHarvest, Filter: q.Filter, Queued: []string{}, Busy: []string{}}
	if truthy(r.URL.Query().Get("full")) {
		out.Kind = harvest.KindFullHarvest
	}
	if s.ops.sched == nil {
		out.Message = errNoScheduler.Error()
		writeJSON(w, statusOf(errNoScheduler), out)
		return
	}
	names, err := s.selectNames(r.Context(), q.Filter)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.bulkTrigger(w, r, out, names)
}

// selectNames names the repositories a filter selects, in list order.
func (s *Server) selectNames(ctx context.Context, f StatusFilter) ([]string, error) {
	var rows []repoRow
	err := s.db.View(ctx, func(snap *store.Snap) error {
		var err error
		rows, _, err = s.survey(snap)
		return err
	})
	var names []string
	for _, r := range selectRows(rows, f) {
		names = append(names, r.repo.Name)
	}
	return names, err
}

// bulkTrigger queues runs of the named repositories and answers.
func (s *Server) bulkTrigger(w http.ResponseWriter, r *http.Request, out AdminBulk, names []string) {
	out.Matched = len(names)
	if len(names) == 0 {
		out.Message = "no repository matches"
		writeJSON(w, http.StatusOK, out)
		return
	}
	queued, busy, err := s.ops.sched.TriggerAll(names, out.Kind, false)
	out.Queued, out.Busy = append(out.Queued, queued...), append(out.Busy, busy...)
	s.log.Info("bulk harvest by the admin API", "kind", out.Kind, "state", out.Filter.State, "host", out.Filter.Host,
		"matched", out.Matched, "queued", len(queued), "busy", len(busy), "remote", r.RemoteAddr)
	if err != nil {
		// Shutting down: what was queued before stays queued.
		out.Message = fmt.Errorf("bulk harvest stopped after %d of %d: %w", len(queued)+len(busy), len(names), err).Error()
		writeJSON(w, statusOf(err), out)
		return
	}
	writeJSON(w, http.StatusAccepted, out)
}

// adminTrigger starts a run: harvest (full=1: a full harvest) or reconcile
// (force=1).
func (s *Server) adminTrigger(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := vars(r)["repo"]
		if s.ops.sched == nil {
			adminError(w, AdminRun{Repository: name}, errNoScheduler)
			return
		}
		k := kind
		if kind == harvest.KindHarvest && truthy(r.URL.Query().Get("full")) {
			k = harvest.KindFullHarvest
		}
		force := truthy(r.URL.Query().Get("force"))
		err := s.ops.sched.Trigger(name, k, force)
		out := AdminRun{Repository: name, Kind: k, Running: s.ops.sched.Activity(name)}
		if err != nil {
			adminError(w, out, err)
			return
		}
		out.Started = true
		s.log.Info("run started by the admin API", "repo", name, "kind", k, "force", force, "remote", r.RemoteAddr)
		writeJSON(w, http.StatusAccepted, out)
	}
}

// adminError answers a refused admin request with the status statusOf
// gives the error and a message saying what to do.
func adminError(w http.ResponseWriter, out AdminRun, err error) {
	switch {
	case errors.Is(err, harvest.ErrUnknownRepository):
		out.Message = fmt.Sprintf("no repository %q in the configuration", out.Repository)
	case errors.Is(err, harvest.ErrBusy):
		out.Message = "a run of this repository is going; cancel it or try when it ends"
	default:
		out.Message = err.Error()
	}
	writeJSON(w, statusOf(err), out)
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func (s *Server) adminCancel(w http.ResponseWriter, r *http.Request) {
	name := vars(r)["repo"]
	if s.ops.sched == nil {
		adminError(w, AdminRun{Repository: name}, errNoScheduler)
		return
	}
	running := s.ops.sched.Activity(name)
	ok, err := s.ops.sched.Cancel(name)
	switch {
	case err != nil:
		adminError(w, AdminRun{Repository: name}, err)
	case !ok:
		writeJSON(w, http.StatusConflict, AdminRun{Repository: name, Message: "nothing is running"})
	default:
		s.log.Info("run cancelled by the admin API", "repo", name, "kind", running.Kind, "remote", r.RemoteAddr)
		writeJSON(w, http.StatusOK, AdminRun{Repository: name, Kind: running.Kind, Cancelled: true, Running: running,
			Message: "the run stops after its last committed page; the next run resumes there"})
	}
}

// adminBackup streams an online backup; one at a time.
func (s *Server) adminBackup(w http.ResponseWriter, r *http.Request) {
	if !s.ops.backupMu.TryLock() {
		writeJSON(w, http.StatusConflict, AdminRun{Message: "a backup is being written; try when it ends"})
		return
	}
	defer s.ops.backupMu.Unlock()
	name := "rsbridge-" + s.now().UTC().Format("20060102T150405Z") + ".backup"
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	began := time.Now()
	st, err := s.db.Backup(r.Context(), &idleWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: s.lim.writeIdle})
	if err != nil {
		// Headers are out: cut the response so the client sees a broken
		// transfer, not a short file it could take for a backup.
		s.log.Warn("backup aborted", "err", err, "remote", r.RemoteAddr)
		panic(http.ErrAbortHandler)
	}
	s.log.Info("backup written", "bytes", st.Bytes, "took", time.Since(began).Round(time.Millisecond).String(), "remote", r.RemoteAddr)
}

// healthz answers 200 while the process serves (liveness).
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "ok")
}

// readyz answers 200 when documents can be served: the store reads and the
// server is not shutting down. A full disk stops harvests, not serving, so
// it is reported but stays ready.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if s.ops.draining.Load() {
		httpError(w, http.StatusServiceUnavailable, "not ready: shutting down")
		return
	}
	if err := s.db.Ping(r.Context()); err != nil {
		httpError(w, http.StatusServiceUnavailable, "not ready: the store cannot be read: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	msg := "ready"
	if err := s.db.CheckSpace(); err != nil {
		msg += " (harvests stopped: the disk is nearly full; serving goes on)"
	}
	fmt.Fprintln(w, msg)
}

// adminQuality streams a format's record checks as JSON lines: first the
// summary ({"quality": …}), then one line per record with findings
// ({"identifier": …, "issues": ["level code", …]}), in identifier order,
// from one snapshot.
func (s *Server) adminQuality(w http.ResponseWriter, r *http.Request) {
	v := vars(r)
	if _, err := s.src.Format(v["repo"], v["prefix"]); err != nil {
		s.fail(w, r, err)
		return
	}
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		q, err := snap.Quality(v["repo"], v["prefix"])
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		if err := enc.Encode(map[string]store.Quality{"quality": q}); err != nil {
			return err
		}
		return snap.QualityIssues(v["repo"], v["prefix"], "", func(id string, issues []store.QualityIssue) error {
			qr := QualityRecord{Identifier: id}
			for _, i := range issues {
				qr.Issues = append(qr.Issues, i.Level+" "+i.Code)
			}
			return enc.Encode(qr)
		})
	})
	if err != nil {
		s.abort(r, err)
	}
}
