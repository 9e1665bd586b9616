package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// cmdCheckRecords prints the record checks of a repository's formats
// (issue 20's quality report) from the store, or through the admin API
// of a serve that holds it.
func cmdCheckRecords(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check-records", stderr)
	path := fs.String("config", "", "configuration file (required)")
	repoName := fs.String("repo", "", "the repository (required)")
	format := fs.String("format", "", "one of its formats (default: every format that is checked)")
	adminURL := fs.String("admin-url", "", "when serve holds the data directory: its admin API (default from admin.listen or listen)")
	cfg, err := parseWithConfig(fs, args, path)
	if err != nil {
		return err
	}
	repo, ok := cfg.Repository(*repoName)
	if !ok {
		return usageError{fmt.Errorf("no repository named %q in the configuration (-repo)", *repoName)}
	}
	formats := repo.MetadataPrefixes
	if *format != "" {
		if !slices.Contains(formats, *format) {
			return usageError{fmt.Errorf("repository %s has no format %q (-format): it has %s", repo.Name, *format, strings.Join(formats, ", "))}
		}
		formats = []string{*format}
	}
	log, _ := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	db, err := openStore(cfg, log)
	if errors.Is(err, store.ErrLocked) {
		c, cerr := newAdminClient(cfg, *adminURL)
		if cerr != nil {
			return fmt.Errorf("%w\n%v", err, cerr)
		}
		for _, p := range formats {
			if err := c.quality(ctx, stdout, repo.Name, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(ctx, func(snap *store.Snap) error {
		for _, p := range formats {
			if err := printQuality(stdout, snap, repo, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// printQuality writes one format's report: the summary, then every record
// with findings.
func printQuality(w io.Writer, snap *store.Snap, repo config.Repository, prefix string) error {
	q, err := snap.Quality(repo.Name, prefix)
	if err != nil {
		return err
	}
	writeSummary(w, repo.Name, prefix, q)
	if q.Version == "" {
		return nil
	}
	return snap.QualityIssues(repo.Name, prefix, "", func(id string, issues []store.QualityIssue) error {
		var list []string
		for _, i := range issues {
			list = append(list, i.Level+" "+i.Code)
		}
		_, err := fmt.Fprintf(w, "  %s\t%s\n", id, strings.Join(list, "; "))
		return err
	})
}

func writeSummary(w io.Writer, repo, prefix string, q store.Quality) {
	if q.Version == "" {
		fmt.Fprintf(w, "%s %s: not checked (rsbridge checks junii2 and jpcoar_2.0 records, after each harvest)\n", repo, prefix)
		return
	}
	fmt.Fprintf(w, "%s %s: %d records checked; %d with record errors, %d with item errors, %d with warnings\n",
		repo, prefix, q.Checked, q.Records["record-error"], q.Records["item-error"], q.Records["warning"])
	for _, code := range slices.Sorted(maps.Keys(q.Codes)) {
		fmt.Fprintf(w, "  %-40s %d\n", code, q.Codes[code])
	}
}

// quality prints a format's report as a running serve has it.
func (c *adminClient) quality(ctx context.Context, w io.Writer, repo, prefix string) error {
	resp, err := c.send(ctx, http.MethodGet, "/admin/repos/"+repo+"/quality/"+prefix)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	first := true
	for sc.Scan() {
		if first {
			var head struct{ Quality store.Quality }
			if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
				return fmt.Errorf("admin API %s: %w", c.base, err)
			}
			writeSummary(w, repo, prefix, head.Quality)
			first = false
			continue
		}
		var qr bridge.QualityRecord
		if err := json.Unmarshal(sc.Bytes(), &qr); err != nil {
			return fmt.Errorf("admin API %s: %w", c.base, err)
		}
		fmt.Fprintf(w, "  %s\t%s\n", qr.Identifier, strings.Join(qr.Issues, "; "))
	}
	return sc.Err()
}
