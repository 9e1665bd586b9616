package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// cmdExport writes the whole source to the export target once (or every
// -every until interrupted): only what changed after the first time.
func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", stderr)
	path := fs.String("config", "", "configuration file (required)")
	target := fs.String("target", "", "a directory or s3://bucket[/prefix] (default: export.target)")
	every := fs.Duration("every", 0, "export again this often until interrupted (0: once)")
	// -nginx needs no configuration, so it is looked for before the flags
	// that do are checked; it is declared for -h.
	fs.Bool("nginx", false, "print the nginx server-block settings an exported directory needs, and exit")
	if slices.ContainsFunc(args, func(a string) bool {
		return slices.Contains([]string{"-nginx", "--nginx", "-nginx=true", "--nginx=true"}, a)
	}) {
		fmt.Fprint(stdout, export.NginxServer)
		return nil
	}
	cfg, err := parseWithConfig(fs, args, path)
	if err != nil {
		return err
	}
	if *target != "" {
		cfg.Export.Target = *target
	}
	if !cfg.Export.On() {
		return usageError{errors.New("no export target: set export.target in the configuration, or -target DIR|s3://bucket[/prefix]")}
	}
	log, _ := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	db, err := openStore(cfg, log)
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w\na running serve holds the data directory: set export.target in its configuration, and serve exports continuously", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := openTarget(ctx, cfg.Export)
	if err != nil {
		return err
	}
	defer st.Close()
	e := newExporter(cfg, db, source.New(cfg, db), st, log)
	for {
		rep, err := e.Run(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return interruptedError{"interrupted; the next export finishes the work"}
			}
			return err
		}
		fmt.Fprintf(stdout, "exported to %s in %s: %d objects written (%s), %d removed, %d documents unchanged, %d changes\n",
			st, rep.Ended.Sub(rep.Started).Round(time.Millisecond), rep.Objects, store.BytesIEC(uint64(rep.Bytes)), rep.Deleted, rep.Skipped, rep.Changes)
		if rep.Unexportable > 0 {
			fmt.Fprintf(stdout, "%d records not exported: their identifiers cannot be static paths (see the log)\n", rep.Unexportable)
		}
		if *every <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*every):
		}
	}
}

// newExporter builds the exporter of a configuration.
func newExporter(cfg *config.Config, db *store.DB, src *source.Source, st objstore.Store, log *slog.Logger) *export.Exporter {
	x := cfg.Export
	return export.New(src, db, st, export.Options{Instance: x.Instance, DumpDir: dumps.Dir(cfg), Workers: x.Workers,
		Grace: x.Grace, MaxAge: x.MaxAge, Logger: log})
}

// openTarget opens export.target: s3://bucket[/prefix], or a directory.
func openTarget(ctx context.Context, x config.Export) (objstore.Store, error) {
	if rest, ok := strings.CutPrefix(x.Target, "s3://"); ok {
		bucket, prefix, _ := strings.Cut(rest, "/")
		return objstore.OpenS3(ctx, objstore.S3Config{Endpoint: cmp.Or(x.Endpoint, "https://s3.amazonaws.com"), Bucket: bucket,
			Prefix: strings.Trim(prefix, "/"), Region: x.Region, VirtualHostStyle: x.VirtualHost})
	}
	return objstore.OpenDir(strings.TrimPrefix(x.Target, "dir:"))
}
