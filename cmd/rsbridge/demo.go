package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/config"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// cmdDemo runs the main job offline: it serves a synthetic repository on a
// loopback port inside this process and harvests it into -data with the same
// code path as "rsbridge harvest".
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	records := fs.Int("records", 2000, "number of records in the synthetic repository")
	data := fs.String("data", "./demo-data", "data directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	src := oaiserver.New(oaiserver.Options{Records: *records, Prefixes: []string{"oai_dc", "jpcoar_2.0"}, DeletedEvery: 50})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	srv := &http.Server{Handler: bridge.DemoUpstreamHandler(src, *records), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	yaml := fmt.Sprintf("data_dir: %q\nlog_level: warn\ndefaults:\n  delay: 0s\nrepositories:\n  - name: demo\n    base_url: http://%s/oai\n    metadata_prefixes: [oai_dc, jpcoar_2.0]\n", *data, ln.Addr())
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(stdout, "demo: harvesting a synthetic repository of %d records from http://%s/oai into %s\n", *records, ln.Addr(), *data)
	if err := harvestRepos(ctx, cfg, cfg.Repositories, stderr, false, false, false); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo: done; run it again to see an incremental harvest that finds nothing new\n")
	return nil
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
	srv := &http.Server{Handler: bridge.DemoUpstreamHandler(src, *records), ReadHeaderTimeout: 10 * time.Second}
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
