package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/notify"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

func storeOptions(cfg *config.Config, log *slog.Logger) store.Options {
	return store.Options{
		Dir: cfg.DataDir, SyncWrites: cfg.Store.Sync(), SyncInterval: cfg.Store.SyncInterval, GCInterval: cfg.Store.GCInterval, Logger: log,
		ChangeListLimit: cfg.ResourceSync.PageLimit, ChangeListPeriod: cfg.ResourceSync.ChangeListPeriod,
		ChangeListBytes: source.ChangeListBytes, ChangeEntryBytes: source.ChangeEntryBound(cfg),
		MinFree: uint64(cfg.Store.MinFree), MappedLimit: uint64(cfg.Store.MappedLimit),
	}
}

func openStore(cfg *config.Config, log *slog.Logger) (*store.DB, error) {
	return store.Open(storeOptions(cfg, log))
}

// cmdServe runs the HTTP server and the harvest scheduler until interrupted.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal) error {
	fs := newFlags("serve", stderr)
	path := fs.String("config", "", "configuration file")
	oai := fs.String("oai", "", "quick mode without a config file: the OAI-PMH base URL to publish")
	prefix := fs.String("prefix", "oai_dc", "quick mode: metadata prefix")
	data := fs.String("data", "./data", "quick mode: data directory")
	listen := fs.String("listen", config.DefaultListen, "quick mode: address to listen on")
	baseURL := fs.String("base-url", "", "quick mode: public URL of this server, as clients reach it (default http://<listen>)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var cfg *config.Config
	var err error
	switch {
	case *path != "" && *oai != "":
		return usageError{errors.New("give either -config FILE or -oai URL, not both")}
	case *path != "":
		cfg, err = loadConfig(*path)
	case *oai != "":
		cfg, err = quickConfig(*oai, *prefix, *data, *listen, *baseURL)
	default:
		return usageError{errors.New("-config FILE or -oai URL is required")}
	}
	if err != nil {
		return err
	}
	return serve(ctx, cfg, *path, stdout, stderr, hup)
}

// quickFlag names the flag that sets a configuration key in quick mode:
// problems are reported in the words of the mode in use.
func quickFlag(path string) string {
	switch path {
	case "listen":
		return "-listen"
	case "data_dir":
		return "-data"
	case "base_url":
		return "-base-url"
	case "repositories[0].base_url":
		return "-oai"
	case "repositories[0].metadata_prefixes", "repositories[0].metadata_prefixes[0]":
		return "-prefix"
	}
	return path
}

// quickConfig is the configuration of "serve -oai URL": one repository named
// after the host, defaults for the rest. Its problems are usage errors
// naming flags.
func quickConfig(oai, prefix, data, listen, baseURL string) (*config.Config, error) {
	u, err := url.Parse(oai)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, usageError{fmt.Errorf("-oai %q: must be an absolute http or https URL", oai)}
	}
	nonName := regexp.MustCompile(`[^a-z0-9-]+`)
	name := strings.Trim(nonName.ReplaceAllString(strings.ToLower(u.Hostname()), "-"), "-")
	if name == "" {
		name = "repo"
	}
	cfg := config.Default()
	cfg.Listen, cfg.DataDir, cfg.BaseURL = listen, data, baseURL
	cfg.Repositories = []config.Repository{{Name: name, BaseURL: oai, MetadataPrefixes: []string{prefix}}}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, usageError{flagWords(err)}
	}
	return cfg, nil
}

// flagWords rewrites configuration problems to name the flags that set the
// keys.
func flagWords(err error) error {
	var ps config.Problems
	if !errors.As(err, &ps) {
		return err
	}
	var lines []string
	for _, p := range ps {
		lines = append(lines, quickFlag(p.Path)+": "+p.Message)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// serve runs until ctx ends, then shuts down in order: stop accepting and finish
// requests, stop the scheduler (a running harvest stops after its last committed
// page), close the store last. cfgPath is the configuration file SIGHUP
// reloads ("" in quick and demo mode).
func serve(ctx context.Context, cfg *config.Config, cfgPath string, stdout, stderr io.Writer, hup <-chan os.Signal) error {
	log, level := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	loaded := *cfg // as the file says, for SIGHUP to compare with
	// What can fail on this machine fails before anything is written: the
	// token file and the data directory (configuration errors, exit 2),
	// then the listeners (a port in use may free up: exit 1), then the
	// store.
	if errs := preflight(cfg); len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	ln, adminLn, debugLn, err := listenAll(cfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	if adminLn != nil {
		defer adminLn.Close()
	}
	if debugLn != nil {
		defer debugLn.Close()
	}
	db, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()

	if u, err := url.Parse(cfg.BaseURL); err == nil && u.Port() == "0" {
		// listen: host:0 picked a free port; the public URL derived from it
		// must name the real one. Everything built below sees it.
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		u.Host = net.JoinHostPort(u.Hostname(), port)
		cfg.BaseURL = u.String()
	}

	svc, err := assemble(ctx, cfg, db, log)
	if err != nil {
		return err
	}
	defer svc.close()
	servers := []*http.Server{newHTTPServer(svc.srv.Handler(), 5*time.Minute)}
	listeners := []net.Listener{ln}
	if adminLn != nil {
		// A backup streams for as long as it takes (each write pushes the
		// idle deadline back).
		servers = append(servers, newHTTPServer(svc.srv.AdminHandler(), 0))
		listeners = append(listeners, adminLn)
	}
	if debugLn != nil {
		servers = append(servers, newHTTPServer(debugHandler(), 0))
		listeners = append(listeners, debugLn)
	}
	errc := make(chan error, len(servers))
	for i, hs := range servers {
		go func() { errc <- hs.Serve(listeners[i]) }()
	}
	svc.sched.Start()
	bgCtx, stopBackground := context.WithCancel(context.Background())
	background := svc.runBackground(bgCtx)
	announce(stdout, log, cfg, ln, adminLn, debugLn)

	var serveErr error
loop:
	for {
		select {
		case serveErr = <-errc:
			break loop
		case <-ctx.Done():
			break loop
		case <-hup:
			reload(cfgPath, &loaded, level, log)
		}
	}
	log.Info("shutting down: finishing requests, stopping runs after their last committed page")
	svc.srv.Drain()
	// A dump build in progress stops and leaves no listed file behind; the
	// hub keeps what it has not delivered for the next start.
	stopBackground()
	shut, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, hs := range servers {
		if err := hs.Shutdown(shut); err != nil {
			// Cut what is still streaming: its snapshot must end before the store closes.
			log.Warn("HTTP shutdown: closing the connections still open", "err", err)
			hs.Close()
		}
	}
	if err := svc.sched.Stop(shut); err != nil {
		log.Warn("scheduler shutdown", "err", err)
	}
	background.Wait()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	log.Info("stopped")
	return nil
}

// service is rsbridge's running parts over one store: the source model
// they share, the harvests, the dumps, the notifications and the HTTP face.
type service struct {
	sched    *harvest.Scheduler
	dumper   *dumps.Dumper
	notifier *notify.Notifier // nil with notification off
	exporter *export.Exporter // nil without export.target
	target   objstore.Store
	interval time.Duration
	srv      *bridge.Server
}

// close releases the export target.
func (svc *service) close() {
	if svc.target != nil {
		svc.target.Close()
	}
}

// assemble builds the service. Harvests announce their commits to the
// metrics, the dumper and the notifier through one observer.
func assemble(ctx context.Context, cfg *config.Config, db *store.DB, log *slog.Logger) (*service, error) {
	src := source.New(cfg, db)
	metrics := bridge.NewMetrics()
	svc := &service{}
	dopts := dumps.Options{Logger: log}
	if cfg.Notification.On() {
		var err error
		if svc.notifier, err = notify.New(src, db, notify.Options{Logger: log}); err != nil {
			return nil, err
		}
		// Quiet channels' topic documents are stored before retention
		// removes the entries they are built from.
		dopts.BeforePrune = svc.notifier.KeepQuiet
	}
	svc.dumper = dumps.New(src, db, dopts)
	obs := harvest.Observers{metrics, harvest.OnChange(svc.dumper)}
	if svc.notifier != nil {
		obs = append(obs, harvest.OnChange(svc.notifier))
	}
	if cfg.Export.On() {
		var err error
		if svc.target, err = openTarget(ctx, cfg.Export); err != nil {
			return nil, err
		}
		svc.exporter, svc.interval = newExporter(cfg, db, src, svc.target, log), cfg.Export.Interval
		obs = append(obs, harvest.OnChange(svc.exporter))
	}
	pacer := harvest.NewPacer(cfg.Server.HarvestShare)
	var err error
	if svc.sched, err = harvest.NewScheduler(cfg, db, harvest.Options{Logger: log, Observer: obs, Pacer: pacer}); err != nil {
		return nil, err
	}
	svc.srv, err = bridge.NewServer(cfg, db, bridge.ServerOptions{Logger: log, Source: src, CacheDir: filepath.Join(cfg.DataDir, "cache"),
		Scheduler: svc.sched, Dumper: svc.dumper, Notifier: svc.notifier, Exporter: svc.exporter, Metrics: metrics, Pacer: pacer})
	if err != nil {
		return nil, err
	}
	metrics.Watch(cfg, db, svc.sched, svc.notifier)
	metrics.WatchExport(svc.exporter)
	return svc, nil
}

// runBackground starts the dumper and the notifier; the WaitGroup ends when
// both returned after ctx ended.
func (svc *service) runBackground(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() { svc.dumper.Run(ctx) })
	if svc.notifier != nil {
		wg.Go(func() { svc.notifier.Run(ctx) })
	}
	if svc.exporter != nil {
		wg.Go(func() { svc.exporter.Loop(ctx, svc.interval) })
	}
	return &wg
}

// announce says where rsbridge listens, on stdout and in the log.
func announce(stdout io.Writer, log *slog.Logger, cfg *config.Config, ln, adminLn, debugLn net.Listener) {
	fmt.Fprintf(stdout, "rsbridge %s listening on http://%s\nSource Description: %s/.well-known/resourcesync\n", bridge.Version, ln.Addr(), cfg.BaseURL)
	if adminLn != nil {
		fmt.Fprintf(stdout, "admin API, /metrics and health checks on http://%s\n", adminLn.Addr())
	}
	if debugLn != nil {
		fmt.Fprintf(stdout, "pprof on http://%s/debug/pprof/\n", debugLn.Addr())
	}
	log.Info("serving", "listen", ln.Addr().String(), "base_url", cfg.BaseURL, "repositories", len(cfg.Repositories),
		"admin_api", cfg.Admin.Enabled(), "notification", cfg.Notification.On())
}

func newHTTPServer(h http.Handler, writeTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// Large documents push their own deadline back as the client reads
		// (server.write_idle); this bounds everything else.
		WriteTimeout: writeTimeout,
		IdleTimeout:  2 * time.Minute,
	}
}

// debugHandler serves net/http/pprof on debug.listen.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// reload applies what SIGHUP can change safely: the log level. Other
// changes to the file are named, to be applied by a restart. A bad file
// changes nothing.
func reload(path string, cur *config.Config, level *slog.LevelVar, log *slog.Logger) {
	if path == "" {
		log.Info("SIGHUP: no configuration file to reload (quick or demo mode); logs go to stderr, nothing to reopen")
		return
	}
	next, err := config.Load(path)
	if err != nil {
		log.Error("SIGHUP: the configuration has problems; nothing was changed", "file", path, "err", err)
		return
	}
	if next.LogLevel != cur.LogLevel {
		var l slog.Level
		if err := l.UnmarshalText([]byte(next.LogLevel)); err == nil {
			level.Set(l)
			log.Info("SIGHUP: log level changed", "from", cur.LogLevel, "to", next.LogLevel)
			cur.LogLevel = next.LogLevel
		}
	}
	if changed := changedKeys(cur, next); len(changed) > 0 {
		log.Warn("SIGHUP: these settings changed and take effect after a restart", "keys", strings.Join(changed, ", "))
		return
	}
	log.Info("SIGHUP: configuration reloaded", "file", path)
}

// changedKeys names the top-level configuration keys whose values differ.
func changedKeys(a, b *config.Config) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		f := va.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" || name == "log_level" {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, name)
		}
	}
	return out
}
