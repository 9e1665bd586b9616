package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rsbridge/rsbridge/config"
)

// preflight checks what the configuration needs from this machine and can
// be checked before anything is written: the admin token file can be read
// and the data directory can be written. Each problem names its key.
func preflight(cfg *config.Config) []error {
	var errs []error
	if cfg.Admin.Enabled() {
		if _, err := cfg.Admin.Secret(); err != nil {
			errs = append(errs, fmt.Errorf("%w (the admin API needs a readable token file of at least 16 characters)", err))
		}
	}
	if err := checkDataDir(cfg.DataDir); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// checkDataDir reports why rsbridge could not create or write its store in
// dir, or nil: dir, or its nearest existing ancestor when it does not exist
// yet, must be a writable directory.
func checkDataDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("data_dir %s: %w", dir, err)
	}
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			if p == abs {
				return fmt.Errorf("data_dir %s is a file, not a directory: name a directory", dir)
			}
			return fmt.Errorf("data_dir %s cannot be created: %s is a file, not a directory", dir, p)
		case err == nil:
			if err := syscall.Access(p, 2 /* W_OK */); err != nil {
				if p == abs {
					return fmt.Errorf("data_dir %s is not writable: %w (the user rsbridge runs as needs write access)", dir, err)
				}
				return fmt.Errorf("data_dir %s cannot be created: %s is not writable: %w", dir, p, err)
			}
			return nil
		case errors.Is(err, syscall.ENOTDIR):
			continue // a file on the way up: the ancestor check names it
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("data_dir %s: %w", dir, err)
		}
		if filepath.Dir(p) == p {
			return fmt.Errorf("data_dir %s: no part of the path exists", dir)
		}
	}
}

// listenAll opens the listeners the configuration names (listen,
// admin.listen, debug.listen), before the store is opened, so a port in use
// leaves nothing behind; on an error none stays open. admin and debug are
// nil when not configured.
func listenAll(cfg *config.Config) (ln, admin, debug net.Listener, err error) {
	open := func(key, addr string) net.Listener {
		if err != nil || addr == "" {
			return nil
		}
		l, lerr := net.Listen("tcp", addr)
		if lerr != nil {
			err = fmt.Errorf("%s %s: %w (is another rsbridge, or another server, using it? set %s: in the configuration)", key, addr, lerr, key)
		}
		return l
	}
	ln = open("listen", cfg.Listen)
	admin = open("admin.listen", cfg.Admin.Listen)
	debug = open("debug.listen", cfg.Debug.Listen)
	if err != nil {
		for _, l := range []net.Listener{ln, admin, debug} {
			if l != nil {
				l.Close()
			}
		}
		return nil, nil, nil, err
	}
	return ln, admin, debug, nil
}
