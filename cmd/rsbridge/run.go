package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/config"
)

const usage = `rsbridge publishes OAI-PMH 2.0 repositories as ResourceSync 1.1 sources.

Usage:
  rsbridge serve         -config FILE                        serve ResourceSync and harvest on schedule
  rsbridge serve         -oai URL [-prefix P] [-data DIR] [-listen ADDR]   the same without a config file
  rsbridge harvest       -config FILE [-repo NAME] [-full]   harvest now, then exit
  rsbridge reconcile     -config FILE [-repo NAME] [-force]  find silent deletions now
  rsbridge check-config  -config FILE                        validate a configuration
  rsbridge demo          [-records N] [-data DIR] [-listen ADDR]  offline demo: serve a built-in synthetic repository
  rsbridge demo-upstream [-listen ADDR] [-records N]         serve a synthetic OAI-PMH repository
  rsbridge version

Run "rsbridge COMMAND -h" for a command's flags.
`

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "harvest":
		err = cmdHarvest(ctx, args[1:], stderr, false)
	case "reconcile":
		err = cmdHarvest(ctx, args[1:], stderr, true)
	case "check-config":
		err = cmdCheckConfig(args[1:], stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, stderr)
	case "demo-upstream":
		err = cmdDemoUpstream(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "rsbridge", bridge.Version)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "rsbridge: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "rsbridge %s: %v\n", args[0], err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "rsbridge %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

type usageError struct{ error }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("rsbridge "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// parseWithConfig parses the flags, then loads and validates the -config file
// (path points at the flag's value, set by the parse).
func parseWithConfig(fs *flag.FlagSet, args []string, path *string) (*config.Config, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if *path == "" {
		return nil, usageError{errors.New("-config FILE is required")}
	}
	return config.Load(*path)
}

func cmdCheckConfig(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check-config", stderr)
	path := fs.String("config", "", "configuration file (required)")
	cfg, err := parseWithConfig(fs, args, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: OK, %d repositories\n", *path, len(cfg.Repositories))
	for _, r := range cfg.Repositories {
		s := cfg.Resolved(r)
		rec := r.Reconcile
		if !cfg.HasReconcile(r) {
			rec = "off"
		}
		fmt.Fprintf(stdout, "  %-20s %s  prefixes=%s schedule=%q reconcile=%q delay=%s retries=%d\n",
			r.Name, r.BaseURL, strings.Join(r.MetadataPrefixes, ","), r.Schedule, rec, s.Delay, s.MaxRetries)
	}
	return nil
}

func cmdHarvest(ctx context.Context, args []string, stderr io.Writer, reconcile bool) error {
	name := "harvest"
	if reconcile {
		name = "reconcile"
	}
	fs := newFlags(name, stderr)
	path := fs.String("config", "", "configuration file (required)")
	repoName := fs.String("repo", "", "only this repository (default: all)")
	full := fs.Bool("full", false, "harvest everything again, ignoring the high-water mark and any list in progress")
	force := fs.Bool("force", false, "reconcile even persistent-deletion repositories and lift the mass-deletion safety limit")
	if reconcile {
		fs.Lookup("full").Usage = "(harvest only)"
	} else {
		fs.Lookup("force").Usage = "(reconcile only)"
	}
	cfg, err := parseWithConfig(fs, args, path)
	if err != nil {
		return err
	}
	repos := cfg.Repositories
	if *repoName != "" {
		r, ok := cfg.Repository(*repoName)
		if !ok {
			return usageError{fmt.Errorf("no repository named %q in %s", *repoName, *path)}
		}
		repos = []config.Repository{r}
	}
	return harvestRepos(ctx, cfg, repos, stderr, reconcile, *full, *force)
}

// harvestRepos opens the store and harvests (or reconciles) the repositories one
// after the other, printing progress and a summary per metadata prefix.
func harvestRepos(ctx context.Context, cfg *config.Config, repos []config.Repository, stderr io.Writer, reconcile, full, force bool) error {
	log := newLogger(stderr, cfg.LogLevel)
	db, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()

	var errs []error
	for _, r := range repos {
		pp := newProgressPrinter(stderr, 2*time.Second)
		h, err := bridge.NewHarvester(cfg, r, db, bridge.HarvesterOptions{Logger: log, Progress: pp.print})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var results []bridge.Result
		if reconcile {
			results, err = h.Reconcile(ctx, bridge.ReconcileOptions{Force: force})
		} else {
			results, err = h.Harvest(ctx, bridge.HarvestOptions{Full: full})
		}
		for _, res := range results {
			c := res.Counts
			fmt.Fprintf(stderr, "%s %s: %d pages, %d records: %d created, %d updated, %d deleted, %d unchanged, %d tombstones, %d stale, %d skipped\n",
				r.Name, res.Prefix, c.Pages, c.Records, c.Created, c.Updated, c.Deleted, c.Unchanged, c.Tombstones, c.Stale, c.Skipped)
			if c.Quarantined+c.Repaired+c.BadDatestamps > 0 {
				fmt.Fprintf(stderr, "%s %s: %d quarantined (skipped, retried by later runs; see the home page), %d repaired (U+FFFD), %d without a usable datestamp\n",
					r.Name, res.Prefix, c.Quarantined, c.Repaired, c.BadDatestamps)
			}
			if res.Incomplete {
				fmt.Fprintf(stderr, "%s %s: the list ended with fewer records than the repository announced; the next run harvests the full list\n", r.Name, res.Prefix)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// progressPrinter writes one progress line to stderr at most every interval, and
// always the last one of a list.
type progressPrinter struct {
	w     io.Writer
	every time.Duration
	last  time.Time
}

func newProgressPrinter(w io.Writer, every time.Duration) *progressPrinter {
	return &progressPrinter{w: w, every: every}
}

func (p *progressPrinter) print(pr bridge.Progress) {
	now := time.Now()
	if !pr.Done && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	rate := 0.0
	if s := pr.Elapsed.Seconds(); s > 0 {
		rate = float64(pr.RunRecords) / s
	}
	total := ""
	if pr.Total > 0 {
		total = fmt.Sprintf(" of %d (%.0f%%)", pr.Total, 100*float64(pr.Records)/float64(pr.Total))
	}
	state := "harvesting"
	if pr.Done {
		state = "done"
	}
	fmt.Fprintf(p.w, "%s %s %s: %d records%s, %d pages, %.0f records/s, %s\n",
		pr.Repo, pr.Prefix, state, pr.Records, total, pr.Pages, rate, pr.Elapsed.Round(time.Second))
}
