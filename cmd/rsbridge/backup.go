package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// cmdBackup writes an online backup of the store: through the running
// server's admin API when serve holds the data directory, else from the
// store directly. The file appears under its name only when complete.
func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", stderr)
	path := fs.String("config", "", "configuration file (required)")
	out := fs.String("o", "", `backup file to write ("-" for stdout; required)`)
	adminURL := fs.String("admin-url", "", "when serve holds the data directory: its admin API (default from admin.listen or listen)")
	cfg, err := parseWithConfig(fs, args, path)
	if err != nil {
		return err
	}
	if *out == "" {
		return usageError{errors.New("-o FILE is required")}
	}
	log, _ := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	began := time.Now()
	var n int64
	err = writeAtomically(*out, stdout, func(w io.Writer) error {
		db, err := openStore(cfg, log)
		if errors.Is(err, store.ErrLocked) {
			c, cerr := newAdminClient(cfg, *adminURL)
			if cerr != nil {
				return fmt.Errorf("%w\n%v", err, cerr)
			}
			fmt.Fprintf(stderr, "the data directory is in use by a running rsbridge; taking the backup through its admin API at %s\n", c.base)
			n, err = c.backup(ctx, w)
			return err
		}
		if err != nil {
			return err
		}
		defer db.Close()
		st, err := db.Backup(ctx, w)
		n = st.Bytes
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return interruptedError{"interrupted; no backup file was written"}
		}
		return err
	}
	if *out != "-" {
		fmt.Fprintf(stderr, "backup written to %s: %s in %s\n", *out, store.BytesIEC(uint64(n)), time.Since(began).Round(time.Millisecond))
	}
	return nil
}

// backup streams the server's online backup into w.
func (c *adminClient) backup(ctx context.Context, w io.Writer) (int64, error) {
	resp, err := c.send(ctx, http.MethodGet, "/admin/backup")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, fmt.Errorf("admin API: backup refused: %s %s", resp.Status, body)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("admin API: the backup broke off after %d bytes: %w", n, err)
	}
	return n, nil
}

// writeAtomically runs write into a temporary file beside path and renames
// it to path when write succeeds ("-" writes to stdout).
func writeAtomically(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// cmdRestore loads a backup into the configuration's data directory, which
// must be empty or absent.
func cmdRestore(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("restore", stderr)
	path := fs.String("config", "", "configuration file (required)")
	in := fs.String("i", "", `backup file to read ("-" for stdin; required)`)
	cfg, err := parseWithConfig(fs, args, path)
	if err != nil {
		return err
	}
	if *in == "" {
		return usageError{errors.New("-i FILE is required")}
	}
	var r io.Reader = os.Stdin
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	log, _ := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	began := time.Now()
	opts := storeOptions(cfg, log)
	if err := store.Restore(ctx, opts, r); err != nil {
		if ctx.Err() != nil {
			return interruptedError{fmt.Sprintf("interrupted; %s holds a partial store: remove it before restoring again", cfg.DataDir)}
		}
		if errors.Is(err, store.ErrNotEmpty) {
			return fmt.Errorf("%w\nrestore into a new data_dir (or move the old one away) and point the configuration at it", err)
		}
		return err
	}
	fmt.Fprintf(stderr, "restored %s into %s in %s; dumps are built again when serve starts\n", *in, cfg.DataDir, time.Since(began).Round(time.Millisecond))
	return nil
}

// cmdHealthcheck probes /healthz: exit 0 when the server answers 200. Docker's
// HEALTHCHECK runs it (the image has no curl).
func cmdHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("healthcheck", stderr)
	u := fs.String("url", "", "URL to probe (default: /healthz on -config's listen address, else "+config.DefaultListen+")")
	path := fs.String("config", "", "configuration file whose listen address to probe")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	target := *u
	if target == "" {
		listen := config.DefaultListen
		if *path != "" {
			cfg, err := loadConfig(*path)
			if err != nil {
				return err
			}
			listen = cfg.Listen
		}
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return usageError{fmt.Errorf("listen address %q: %w", listen, err)}
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		target = "http://" + net.JoinHostPort(host, port) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return usageError{err}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s answered %s", target, resp.Status)
	}
	fmt.Fprintln(stdout, "healthy")
	return nil
}
