package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rsbridge/rsbridge/config"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// cmdDemo runs the main job offline: a synthetic OAI-PMH repository on a
// loopback port inside this process, published by the real server and
// scheduler. The repository changes a little every 30 s (a record added, one
// updated, one deleted, one moved to another set) so Change Lists fill up.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer, hup <-chan os.Signal) error {
	fs := newFlags("demo", stderr)
	records := fs.Int("records", 2000, "number of records in the synthetic repository")
	data := fs.String("data", "./demo-data", "data directory")
	listen := fs.String("listen", config.DefaultListen, "address rsbridge listens on")
	every := fs.Duration("every", 30*time.Second, "how often the synthetic repository changes and is harvested")
	baseURL := fs.String("base-url", "", "public URL of this server, as clients reach it (default http://<listen>)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	src := oaiserver.New(oaiserver.Options{Records: *records, Prefixes: []string{"oai_dc", "jpcoar_2.0"}, DeletedEvery: 50})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	up := &http.Server{Handler: demoUpstreamHandler(src, *records), ReadHeaderTimeout: 10 * time.Second}
	go up.Serve(ln)
	defer up.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { // the upstream's own activity
		defer close(done)
		t := time.NewTicker(*every)
		defer t.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				src.Add(now)
				src.Update((n*7)%*records, now)
				src.Delete((n*11+3)%*records, now)
				src.SetSets((n*13+5)%*records, []string{fmt.Sprintf("s%d", n%4)}, now, true)
			}
		}
	}()
	defer func() { cancel(); <-done }()

	cfg := config.Default()
	cfg.Listen, cfg.DataDir, cfg.BaseURL = *listen, *data, *baseURL
	cfg.MinInterval = time.Second // its own in-process upstream: no repository to spare
	noDelay := time.Duration(0)
	cfg.Defaults.Delay = &noDelay
	cfg.Repositories = []config.Repository{{Name: "demo", BaseURL: "http://" + ln.Addr().String() + "/oai",
		MetadataPrefixes: []string{"oai_dc", "jpcoar_2.0"}, Schedule: "@every " + every.String()}}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return usageError{fmt.Errorf("demo: %w", err)}
	}
	fmt.Fprintf(stdout, "demo: synthetic OAI-PMH repository of %d records at http://%s/oai, changing every %s\n", *records, ln.Addr(), every)
	return serve(ctx, cfg, "", stdout, stderr, hup)
}

// cmdDemoUpstream serves a synthetic OAI-PMH repository, so rsbridge can be tried
// (and benchmarked) without network access.
func cmdDemoUpstream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo-upstream", stderr)
	listen := fs.String("listen", "127.0.0.1:8081", "address to listen on")
	records := fs.Int("records", 1000, "number of records")
	pageSize := fs.Int("page-size", 100, "records per ListRecords page")
	deleted := fs.String("deleted-record", "persistent", "deletedRecord support to announce: persistent, transient or no")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	src := oaiserver.New(oaiserver.Options{
		Records:       *records,
		Prefixes:      []string{"oai_dc", "jpcoar_2.0"},
		PageSize:      *pageSize,
		DeletedRecord: *deleted,
		DeletedEvery:  50,
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("demo upstream: %w", err)
	}
	srv := &http.Server{Handler: demoUpstreamHandler(src, *records), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "demo OAI-PMH repository with %d records at http://%s/oai\n", *records, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil {
			return err
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// demoUpstreamHandler routes a demo OAI-PMH provider: the endpoint at /oai (GET
// and POST, as OAI-PMH §3.1.1 allows) and a short plain-text page at / that says
// where it is. Other paths are 404.
func demoUpstreamHandler(oai http.Handler, records int) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /oai", oai)
	mux.Handle("POST /oai", oai)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "rsbridge demo OAI-PMH repository: %d synthetic records.\nTry %s/oai?verb=Identify\n", records, "http://"+req.Host)
	})
	return mux
}
