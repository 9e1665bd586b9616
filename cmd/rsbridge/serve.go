package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

func openStore(cfg *config.Config, log *slog.Logger) (*store.DB, error) {
	return store.Open(store.Options{
		Dir: cfg.DataDir, SyncWrites: cfg.Store.Sync(), SyncInterval: cfg.Store.SyncInterval, GCInterval: cfg.Store.GCInterval, Logger: log,
		ChangeListLimit: cfg.ResourceSync.PageLimit, ChangeListPeriod: cfg.ResourceSync.ChangeListPeriod,
		MinFree: uint64(cfg.Store.MinFree),
	})
}

// cmdServe runs the HTTP server and the harvest scheduler until interrupted.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	path := fs.String("config", "", "configuration file")
	oai := fs.String("oai", "", "quick mode without a config file: the OAI-PMH base URL to publish")
	prefix := fs.String("prefix", "oai_dc", "quick mode: metadata prefix")
	data := fs.String("data", "./data", "quick mode: data directory")
	listen := fs.String("listen", config.DefaultListen, "quick mode: address to listen on")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var cfg *config.Config
	var err error
	switch {
	case *path != "" && *oai != "":
		return usageError{errors.New("give either -config FILE or -oai URL, not both")}
	case *path != "":
		cfg, err = config.Load(*path)
	case *oai != "":
		cfg, err = quickConfig(*oai, *prefix, *data, *listen)
	default:
		return usageError{errors.New("-config FILE or -oai URL is required")}
	}
	if err != nil {
		return err
	}
	return serve(ctx, cfg, stdout, stderr)
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// quickConfig is the configuration of "serve -oai URL": one repository named
// after the host, defaults for the rest.
func quickConfig(oai, prefix, data, listen string) (*config.Config, error) {
	u, err := url.Parse(oai)
	if err != nil || u.Host == "" {
		return nil, usageError{fmt.Errorf("-oai %q is not an absolute http(s) URL", oai)}
	}
	name := strings.Trim(nonName.ReplaceAllString(strings.ToLower(u.Hostname()), "-"), "-")
	if name == "" {
		name = "repo"
	}
	cfg := config.Default()
	cfg.Listen, cfg.DataDir = listen, data
	cfg.Repositories = []config.Repository{{Name: name, BaseURL: oai, MetadataPrefixes: []string{prefix}}}
	cfg.SetDefaults()
	return cfg, cfg.Validate()
}

// serve runs until ctx ends, then shuts down in order: stop accepting and finish
// requests, stop the scheduler (a running harvest stops after its last committed
// page), close the store last.
func serve(ctx context.Context, cfg *config.Config, stdout, stderr io.Writer) error {
	log := newLogger(stderr, cfg.LogLevel)
	db, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	dumper := bridge.NewDumper(cfg, db, bridge.DumperOptions{Logger: log})
	var notifier *bridge.Notifier
	var hub http.Handler
	if cfg.Notification.On() {
		if notifier, err = bridge.NewNotifier(cfg, db, bridge.NotifierOptions{Logger: log}); err != nil {
			return err
		}
		hub = notifier.Hub()
	}
	changed := func(string, string) {
		dumper.Changed()
		if notifier != nil {
			notifier.Changed()
		}
	}
	sched, err := bridge.NewScheduler(cfg, db, bridge.HarvesterOptions{Logger: log, Changed: changed})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another rsbridge running? set listen: in the config)", cfg.Listen, err)
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil && u.Port() == "0" {
		// listen: host:0 picked a free port; the public URL derived from it
		// must name the real one.
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		u.Host = net.JoinHostPort(u.Hostname(), port)
		cfg.BaseURL = u.String()
	}
	hs := &http.Server{
		Handler:           bridge.NewServer(cfg, db, bridge.ServerOptions{Logger: log, Hub: hub, CacheDir: filepath.Join(cfg.DataDir, "cache")}).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// Large documents push their own deadline back as the client reads
		// (server.write_idle); this bounds everything else.
		WriteTimeout: 5 * time.Minute,
		IdleTimeout:  2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	sched.Start()
	bgCtx, stopBackground := context.WithCancel(context.Background())
	var background sync.WaitGroup
	background.Go(func() { dumper.Run(bgCtx) })
	if notifier != nil {
		background.Go(func() { notifier.Run(bgCtx) })
	}
	fmt.Fprintf(stdout, "rsbridge %s listening on http://%s\nSource Description: %s/.well-known/resourcesync\n", bridge.Version, ln.Addr(), cfg.BaseURL)

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		// Cut what is still streaming: its snapshot must end before the store closes.
		log.Warn("HTTP shutdown: closing the connections still open", "err", err)
		hs.Close()
	}
	if err := sched.Stop(shut); err != nil {
		log.Warn("scheduler shutdown", "err", err)
	}
	// A dump build in progress stops and leaves no listed file behind; the
	// hub keeps what it has not delivered for the next start.
	stopBackground()
	background.Wait()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}
