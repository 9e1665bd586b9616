package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

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
	adminURL := fs.String("admin-url", "", "when serve holds the data directory: its admin API (default from admin.listen or listen)")
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
	kind := harvest.KindHarvest
	switch {
	case reconcile:
		kind = harvest.KindReconcile
	case *full:
		kind = harvest.KindFullHarvest
	}
	log, _ := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	db, err := openStore(cfg, log)
	if errors.Is(err, store.ErrLocked) {
		// serve holds the data directory: ask it to do the runs.
		c, cerr := newAdminClient(cfg, *adminURL)
		if cerr != nil {
			return fmt.Errorf("%w\n%v", err, cerr)
		}
		fmt.Fprintf(stderr, "the data directory is in use by a running rsbridge; handing the %s to it at %s\n", kind, c.base)
		return remoteRuns(ctx, c, repos, kind, *force, stderr)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return localRuns(ctx, cfg, db, log, repos, kind, *force, stderr)
}

// localRuns harvests (or reconciles) the repositories one after the other,
// printing progress and a summary per metadata prefix.
func localRuns(ctx context.Context, cfg *config.Config, db *store.DB, log *slog.Logger, repos []config.Repository, kind string, force bool, stderr io.Writer) error {
	var errs []error
	for _, r := range repos {
		pp := newProgressPrinter(stderr, 2*time.Second)
		h, err := harvest.New(cfg, r, db, harvest.Options{Logger: log, Observer: harvest.ProgressFunc(pp.print)})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var results []harvest.Result
		if kind == harvest.KindReconcile {
			results, err = h.Reconcile(ctx, harvest.ReconcileOptions{Force: force})
		} else {
			results, err = h.Harvest(ctx, harvest.HarvestOptions{Full: kind == harvest.KindFullHarvest})
		}
		for _, res := range results {
			c := res.Counts
			if res.Err != nil && ctx.Err() != nil {
				continue // reported below as an interruption
			}
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
		if ctx.Err() != nil {
			if kind == harvest.KindReconcile {
				return interruptedError{fmt.Sprintf("interrupted; %s: the next reconciliation starts a new pass", r.Name)}
			}
			return interruptedError{resumeMessage(db, r)}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resumeMessage says where the next run of an interrupted repository starts.
func resumeMessage(db *store.DB, r config.Repository) string {
	var parts []string
	err := db.View(context.Background(), func(s *store.Snap) error {
		for _, p := range r.MetadataPrefixes {
			cp, err := s.Checkpoint(r.Name, p)
			if err != nil {
				return err
			}
			if cp.InProgress && cp.Token != "" {
				parts = append(parts, fmt.Sprintf("%s at page %d (%d records kept)", p, cp.SeqPages+1, cp.SeqRecords))
			}
		}
		return nil
	})
	if err != nil || len(parts) == 0 {
		return fmt.Sprintf("interrupted; %s: what was committed is kept, and the next run starts from there", r.Name)
	}
	return fmt.Sprintf("interrupted; %s: the next run resumes %s", r.Name, strings.Join(parts, ", "))
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

func (p *progressPrinter) print(pr harvest.Progress) {
	now := time.Now()
	if !pr.Done && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	rate := 0.0
	if s := pr.Elapsed.Seconds(); s > 0 {
		rate = float64(pr.RunRecords) / s
	}
	state := "harvesting"
	if pr.Done {
		state = "done"
	}
	fmt.Fprintf(p.w, "%s %s %s: %s\n", pr.Repo, pr.Prefix, state, progressLine(pr.Records, pr.Total, pr.Pages, rate, pr.Elapsed))
}

// progressLine is the shared wording of local and remote progress.
func progressLine(records, total, pages int64, rate float64, elapsed time.Duration) string {
	of := ""
	if total > 0 {
		of = fmt.Sprintf(" of %d (%.0f%%)", total, 100*float64(records)/float64(total))
	}
	return fmt.Sprintf("%d records%s, %d pages, %.0f records/s, %s", records, of, pages, rate, elapsed.Round(time.Second))
}
