package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

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
	srv := &http.Server{Handler: src, ReadHeaderTimeout: 10 * time.Second}
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
