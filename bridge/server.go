// Package bridge is rsbridge's HTTP face: the route table, handlers that
// parse a request, ask the source model (bridge/source) for a document and
// send it, one mapping from errors to statuses, the document cache, gzip,
// limits on large documents, the status and about pages, the admin API
// and the metrics. Harvesting (bridge/harvest), dumps (bridge/dumps) and
// notification (bridge/notify) run beside it; cmd/rsbridge wires them.
package bridge

import (
	"cmp"
	"crypto/sha256"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/notify"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// Version is reported in the User-Agent, the status and the metrics.
const Version = harvest.Version

// Server serves the store as a ResourceSync 1.1 source. Every document is
// planned and rendered from one store snapshot and streamed to the client
// entry by entry, or sent from the document cache.
type Server struct {
	src     *source.Source
	db      *store.DB
	log     *slog.Logger
	now     func() time.Time
	pages   *template.Template
	cache   *docCache // nil: documents are rendered from the store every time
	lim     limits
	ops     *operations
	metrics *Metrics // nil: no /metrics
	pacer   *harvest.Pacer
	hub     http.Handler
	dumpDir string
}

// operations is what the operator sees and controls besides the documents.
type operations struct {
	sched    *harvest.Scheduler // nil: no runs to report or start
	dumper   *dumps.Dumper
	notifier *notify.Notifier
	exporter *export.Exporter
	started  time.Time
	admin    bool              // the admin API is configured
	digest   [sha256.Size]byte // SHA-256 of the admin token
	backupMu sync.Mutex        // one backup at a time
	draining atomic.Bool       // shutting down: /readyz says 503
}

// ServerOptions are the optional parts of NewServer.
type ServerOptions struct {
	Logger *slog.Logger
	Now    func() time.Time
	// Source is the source model the dumper and the notifier share (nil:
	// one of the server's own over the same configuration and store).
	Source  *source.Source
	DumpDir string // default dumps.Dir(cfg)
	// Hub is mounted at {base}/websub (Notifier.Hub); nil with notification
	// off. Channels are advertised whenever notification is on.
	Hub http.Handler
	// CacheDir holds rendered documents (emptied at start); "" renders every
	// document afresh.
	CacheDir string
	// Scheduler, Dumper and Notifier are reported on the status page; the
	// admin API starts and cancels the Scheduler's runs. Any may be nil.
	Scheduler *harvest.Scheduler
	Dumper    *dumps.Dumper
	Notifier  *notify.Notifier
	// Exporter is the static export, reported on the status page (nil: none).
	Exporter *export.Exporter
	// Metrics are served at /metrics and count requests (nil: no /metrics).
	Metrics *Metrics
	// Pacer learns from every request that the server is busy, so
	// harvests give way (nil: harvests never pause).
	Pacer *harvest.Pacer
}

// NewServer builds a server over an open store. It fails only when the
// admin token is configured but cannot be read.
func NewServer(cfg *config.Config, db *store.DB, o ServerOptions) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Source == nil {
		o.Source = source.New(cfg, db)
	}
	if o.DumpDir == "" {
		o.DumpDir = dumps.Dir(cfg)
	}
	if o.Hub == nil && o.Notifier != nil {
		o.Hub = o.Notifier.Hub()
	}
	srv := &Server{src: o.Source, db: db, log: o.Logger, now: o.Now, pages: parsePages(), lim: newLimits(cfg),
		ops:     &operations{sched: o.Scheduler, dumper: o.Dumper, notifier: o.Notifier, exporter: o.Exporter, started: o.Now().UTC()},
		metrics: o.Metrics, pacer: o.Pacer, hub: o.Hub, dumpDir: o.DumpDir}
	if cfg.Admin.Enabled() {
		token, err := cfg.Admin.Secret()
		if err != nil {
			return nil, err
		}
		srv.ops.admin, srv.ops.digest = true, sha256.Sum256([]byte(token))
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

// cfg is the configuration the server publishes.
func (s *Server) cfg() *config.Config { return s.src.Config() }

// Drain marks the server as shutting down: /readyz answers 503 from now on.
func (s *Server) Drain() { s.ops.draining.Store(true) }

// Handler is the route table: every URL rsbridge serves, in one place. With
// admin.listen set, the admin API and /metrics are on AdminHandler instead.
func (s *Server) Handler() http.Handler {
	// Encoded paths: identifiers are one escaped segment and may contain
	// slashes; "." and ".." are sent as %2E and %2E%2E (source.Segment),
	// which the router must not clean away.
	r := mux.NewRouter().UseEncodedPath().SkipClean(true)
	r.Use(s.metrics.instrument)
	get := []string{http.MethodGet, http.MethodHead}
	s.operations(r, s.cfg().Admin.Listen == "")
	r.HandleFunc("/", s.home).Methods(get...)
	r.HandleFunc("/status.json", s.statusJSON).Methods(get...)
	r.HandleFunc("/.well-known/resourcesync", s.sourceDescription).Methods(get...)
	r.HandleFunc("/sourcedescription-{page:[0-9]+}.xml", s.sourceDescriptionPage).Methods(get...)
	r.HandleFunc("/robots.txt", s.robots).Methods(get...)
	r.HandleFunc("/{repo}/{prefix}/resource/{id}", s.resource).Methods(get...)
	if s.hub != nil && s.cfg().Notification.On() {
		r.Handle("/websub", s.hub)
	}
	r.HandleFunc("/{repo}/map/{id}", s.resourceMap).Methods(get...)
	r.HandleFunc("/{repo}/map-0.2/{id}", s.resourceMap02).Methods(get...)
	for _, set := range []string{"/{repo}/{prefix}/all", "/{repo}/{prefix}/set/{set}"} {
		r.HandleFunc(set+"/capabilitylist.xml", s.snapDoc(s.src.CapabilityList)).Methods(get...)
		r.HandleFunc(set+"/about.html", s.withSet(s.about)).Methods(get...)
		r.HandleFunc(set+"/resourcelist.xml", s.streaming(s.snapDoc(s.src.ResourceList))).Methods(get...)
		r.HandleFunc(set+"/resourcelist-{page:[0-9]+}.xml", s.streaming(s.withSet(s.resourceListPage))).Methods(get...)
		r.HandleFunc(set+"/changelist.xml", s.snapDoc(s.src.ChangeListIndex)).Methods(get...)
		r.HandleFunc(set+"/changelist-{list}.xml", s.streaming(s.withSet(s.changeList))).Methods(get...)
		r.HandleFunc(set+"/changenotification.xml", s.withSet(s.channel)).Methods(get...)
		r.HandleFunc(set+"/resourcedump.xml", s.snapDoc(s.src.ResourceDump)).Methods(get...)
		r.HandleFunc(set+"/changedump.xml", s.withSet(s.changeDump)).Methods(get...)
		r.HandleFunc(set+"/dump/{file}", s.streaming(s.withSet(s.dumpFile))).Methods(get...)
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.fail(w, req, source.NotFound("not found: %s\nstart at /.well-known/resourcesync", source.Clip(req.URL.Path, 200)))
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.fail(w, req, errMethod)
	})
	return s.track(gzipDocuments(s.bodyDeadline(r)))
}

// AdminHandler serves the admin API, /metrics and the health checks on
// admin.listen.
func (s *Server) AdminHandler() http.Handler {
	r := mux.NewRouter().UseEncodedPath()
	r.Use(s.metrics.instrument)
	s.operations(r, true)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.fail(w, req, source.NotFound("not found: %s\nthis address serves /admin/, /metrics, /healthz and /readyz", source.Clip(req.URL.Path, 200)))
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
	if s.ops.admin {
		s.adminRoutes(r)
	}
}

// track tells the pacer a request is being served, so harvests give way:
// destinations' requests, not the operator's. A Prometheus scrape or a
// status poll every few seconds would otherwise hold every harvest at
// server.harvest_share (with 700 repositories, /metrics polled every 2 s
// took the consortium bench's harvest rate from ~12,000 to ~3,000
// records/s).
func (s *Server) track(next http.Handler) http.Handler {
	if s.pacer == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !operatorPath(r.URL.Path) {
			s.pacer.Begin()
			defer s.pacer.End()
		}
		next.ServeHTTP(w, r)
	})
}

// operatorPath reports the operator's pages: status, metrics, health checks
// and the admin API.
func operatorPath(p string) bool {
	switch p {
	case "/", "/status.json", "/metrics", "/healthz", "/readyz":
		return true
	}
	return strings.HasPrefix(p, "/admin/")
}

// vars are the route's variables, unescaped.
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

// withSet resolves the resource set a request names; an unknown one is a
// 404.
func (s *Server) withSet(h func(http.ResponseWriter, *http.Request, source.Set)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := vars(r)
		spec, perSet := v["set"]
		rs, err := s.src.Find(r.Context(), v["repo"], v["prefix"], perSet, spec)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		h(w, r, rs)
	}
}
