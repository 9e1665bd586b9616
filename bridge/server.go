package bridge

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// Server serves the store as a ResourceSync 1.1 source. Every document is read
// from one store snapshot and streamed to the client entry by entry.
type Server struct {
	setCatalog
	cfg         *config.Config
	db          *store.DB
	log         *slog.Logger
	now         func() time.Time
	base        string
	limit       int           // entries per Resource List page
	sdLimit     int           // Capability Lists in one Source Description (rsync.MaxEntries; tests lower it)
	bodyTimeout time.Duration // longest read of a request body (bodyTimeout; tests lower it)
	pages       *template.Template

	streams   chan struct{} // one token per large document streaming now
	writeIdle time.Duration
	dumpDir   string
	hub       http.Handler
	cache     *docCache // nil: documents are streamed from the store every time

	sched       *Scheduler // nil: no runs to report or start
	dumper      *Dumper
	notifier    *Notifier
	metrics     *Metrics
	pacer       *Pacer
	started     time.Time
	adminDigest [sha256.Size]byte // SHA-256 of the admin token
	admin       bool              // the admin API is configured
	backupMu    sync.Mutex        // one backup at a time
	draining    atomic.Bool       // shutting down: /readyz says 503
}

// ServerOptions are the optional parts of NewServer.
type ServerOptions struct {
	Logger  *slog.Logger
	Now     func() time.Time
	DumpDir string // default DumpDir(cfg)
	// Hub is mounted at {base}/websub (Notifier.Hub); nil with notification
	// off. Channels are advertised whenever notification is on.
	Hub http.Handler
	// CacheDir holds rendered documents (emptied at start); "" renders every
	// document afresh.
	CacheDir string
	// Scheduler, Dumper and Notifier are reported on the status page; the
	// admin API starts and cancels the Scheduler's runs. Any may be nil.
	Scheduler *Scheduler
	Dumper    *Dumper
	Notifier  *Notifier
	// Metrics are served at /metrics and count requests (nil: no /metrics).
	Metrics *Metrics
	// Pacer learns from every request that the server is busy, so
	// harvests give way (nil: harvests never pause).
	Pacer *Pacer
}

// NewServer builds a server over an open store. Change Lists are cut by the
// store's own policy; the server only asks the store for them. It fails only
// when the admin token is configured but cannot be read.
func NewServer(cfg *config.Config, db *store.DB, o ServerOptions) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if o.DumpDir == "" {
		o.DumpDir = DumpDir(cfg)
	}
	srv := &Server{setCatalog: newSetCatalog(cfg, db, base), cfg: cfg, db: db, log: o.Logger, now: o.Now, base: base,
		limit: cfg.ResourceSync.PageLimit, sdLimit: rsync.MaxEntries, bodyTimeout: bodyTimeout, pages: parsePages(),
		streams: make(chan struct{}, max(cfg.Server.MaxStreams, 1)), writeIdle: cmp.Or(cfg.Server.WriteIdle, config.DefaultWriteIdle),
		dumpDir: o.DumpDir, hub: o.Hub,
		sched: o.Scheduler, dumper: o.Dumper, notifier: o.Notifier, metrics: o.Metrics, pacer: o.Pacer, started: o.Now().UTC()}
	if srv.hub == nil && o.Notifier != nil {
		srv.hub = o.Notifier.Hub()
	}
	if cfg.Admin.Enabled() {
		token, err := cfg.Admin.Secret()
		if err != nil {
			return nil, err
		}
		srv.admin, srv.adminDigest = true, sha256.Sum256([]byte(token))
	}
	if o.CacheDir != "" {
		c, err := newDocCache(o.CacheDir, cmp.Or(cfg.Server.CacheBytes, config.DefaultCacheBytes), o.Logger, db.CheckSpace)
		if err != nil {
			o.Logger.Error("document cache off", "err", err)
		} else {
			srv.cache = c
		}
	}
	return srv, nil
}

// Drain marks the server as shutting down: /readyz answers 503 from now on.
func (s *Server) Drain() { s.draining.Store(true) }

const xmlType = "application/xml"

// Handler is the route table: every URL rsbridge serves, in one place. With
// admin.listen set, the admin API and /metrics are on AdminHandler instead.
func (s *Server) Handler() http.Handler {
	// Encoded paths: identifiers are one escaped segment and may contain
	// slashes; "." and ".." are sent as %2E and %2E%2E (urls.go), which the
	// router must not clean away.
	r := mux.NewRouter().UseEncodedPath().SkipClean(true)
	r.Use(s.metrics.instrument)
	get := []string{http.MethodGet, http.MethodHead}
	s.operations(r, s.cfg.Admin.Listen == "")
	r.HandleFunc("/", s.home).Methods(get...)
	r.HandleFunc("/status.json", s.statusJSON).Methods(get...)
	r.HandleFunc("/.well-known/resourcesync", s.sourceDescription).Methods(get...)
	r.HandleFunc("/sourcedescription-{page:[0-9]+}.xml", s.sourceDescriptionPage).Methods(get...)
	r.HandleFunc("/robots.txt", s.robots).Methods(get...)
	r.HandleFunc("/{repo}/{prefix}/resource/{id}", s.resource).Methods(get...)
	if s.hub != nil && s.cfg.Notification.On() {
		r.Handle("/websub", s.hub)
	}
	r.HandleFunc("/{repo}/map/{id}", s.resourceMap).Methods(get...)
	r.HandleFunc("/{repo}/map-0.2/{id}", s.resourceMap02).Methods(get...)
	for _, set := range []string{"/{repo}/{prefix}/all", "/{repo}/{prefix}/set/{set}"} {
		r.HandleFunc(set+"/capabilitylist.xml", s.withSet(s.capabilityList)).Methods(get...)
		r.HandleFunc(set+"/about.html", s.withSet(s.about)).Methods(get...)
		r.HandleFunc(set+"/resourcelist.xml", s.streaming(s.withSet(s.resourceList))).Methods(get...)
		r.HandleFunc(set+"/resourcelist-{page:[0-9]+}.xml", s.streaming(s.withSet(s.resourceListPage))).Methods(get...)
		r.HandleFunc(set+"/changelist.xml", s.withSet(s.changeListIndex)).Methods(get...)
		r.HandleFunc(set+"/changelist-{list}.xml", s.streaming(s.withSet(s.changeList))).Methods(get...)
		r.HandleFunc(set+"/changenotification.xml", s.withSet(s.channel)).Methods(get...)
		r.HandleFunc(set+"/resourcedump.xml", s.withSet(s.resourceDumpDoc)).Methods(get...)
		r.HandleFunc(set+"/changedump.xml", s.withSet(s.changeDumpDoc)).Methods(get...)
		r.HandleFunc(set+"/dump/{file}", s.streaming(s.withSet(s.dumpFileHandler))).Methods(get...)
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		httpError(w, http.StatusNotFound, "not found: "+clip(req.URL.Path, 200)+"\nstart at /.well-known/resourcesync")
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		httpError(w, http.StatusMethodNotAllowed, "method not allowed: documents are read with GET or HEAD; the admin API starts runs with POST")
	})
	return s.pacer.track(gzipDocuments(s.bodyDeadline(r)))
}

// bodyTimeout bounds reading a request body (a WebSub subscription, an
// admin call): a client sending it slowly is cut off instead of holding a
// connection and a goroutine for as long as it likes (issue 21, item 4).
const bodyTimeout = 10 * time.Second

// bodyDeadline gives a request that carries a body a read deadline of
// s.bodyTimeout. Requests without one (every GET of a document) get none:
// net/http's read deadline would also cut a long response, whose
// background read of the connection it bounds too.
func (s *Server) bodyDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

// AdminHandler serves the admin API, /metrics and the health checks on
// admin.listen.
func (s *Server) AdminHandler() http.Handler {
	r := mux.NewRouter().UseEncodedPath()
	r.Use(s.metrics.instrument)
	s.operations(r, true)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		httpError(w, http.StatusNotFound, "not found: "+clip(req.URL.Path, 200)+"\nthis address serves /admin/, /metrics, /healthz and /readyz")
	})
	return s.bodyDeadline(r)
}

// operations adds the health checks and, with admin, the admin API and
// /metrics.
func (s *Server) operations(r *mux.Router, admin bool) {
	get := []string{http.MethodGet, http.MethodHead}
	r.HandleFunc("/healthz", s.healthz).Methods(get...)
	r.HandleFunc("/readyz", s.readyz).Methods(get...)
	if !admin {
		return
	}
	if s.metrics != nil {
		r.Handle("/metrics", s.metrics.Handler()).Methods(get...)
	}
	if s.admin {
		s.adminRoutes(r)
	}
}

// httpError answers a plain-text error; the message is clipped, since parts
// of it may echo the request.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Del("Content-Length")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, clip(msg, 1024))
}

func vars(r *http.Request) map[string]string {
	out := map[string]string{}
	for k, v := range mux.Vars(r) {
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		out[k] = v
	}
	return out
}

// withSet resolves the resource set of a request, or answers 404.
func (s *Server) withSet(h func(http.ResponseWriter, *http.Request, resourceSet)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := vars(r)
		repo, ok := s.cfg.Repository(v["repo"])
		if !ok || !slices.Contains(repo.MetadataPrefixes, v["prefix"]) {
			httpError(w, http.StatusNotFound, fmt.Sprintf("no repository %q with metadata prefix %q", v["repo"], v["prefix"]))
			return
		}
		rs := resourceSet{repo: repo, prefix: v["prefix"], set: store.AllSet, base: s.base}
		if spec, ok := v["set"]; ok {
			ok, err := s.isPublished(r.Context(), repo, spec)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			if !ok {
				httpError(w, http.StatusNotFound, fmt.Sprintf("repository %q publishes no set %q", repo.Name, spec))
				return
			}
			rs.set = spec
		}
		h(w, r, rs)
	}
}

// fail answers an error that happened before anything was written.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Error("request failed", "path", r.URL.Path, "err", err)
	httpError(w, http.StatusInternalServerError, "internal error; see the rsbridge log")
}
