package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
)

// adminClient talks to the admin API of a running serve.
type adminClient struct {
	base  string // http://host:port, no trailing slash
	token string
	hc    *http.Client
	poll  time.Duration // how often runs are polled
}

// newAdminClient finds the running server's admin API from the
// configuration (admin.listen, else listen) unless override names it.
func newAdminClient(cfg *config.Config, override string) (*adminClient, error) {
	if !cfg.Admin.Enabled() {
		return nil, errors.New("to hand runs to the running server, set admin.token_file (or admin.token) in the configuration and restart serve; or stop serve and run this command again")
	}
	token, err := cfg.Admin.Secret()
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(override, "/")
	if base == "" {
		addr := cfg.Admin.Listen
		if addr == "" {
			addr = cfg.Listen
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("cannot find the admin API from %q: %w (give -admin-url)", addr, err)
		}
		switch host {
		case "", "0.0.0.0", "::":
			host = "127.0.0.1"
		}
		base = "http://" + net.JoinHostPort(host, port)
	}
	// No overall timeout: a backup streams for as long as it takes. Each
	// call has its own context.
	return &adminClient{base: base, token: token, hc: &http.Client{}, poll: time.Second}, nil
}

// adminError is a refusal from the admin API.
type adminError struct {
	Status int
	Body   bridge.AdminRun
}

func (e *adminError) Error() string {
	msg := e.Body.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("admin API: %d %s", e.Status, msg)
}

// call sends a request and decodes a JSON answer into out; non-2xx answers
// are *adminError.
func (c *adminClient) call(ctx context.Context, method, path string, out any) error {
	resp, err := c.send(ctx, method, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("admin API %s %s: %w", method, c.base+path, err)
	}
	if resp.StatusCode/100 != 2 {
		ae := &adminError{Status: resp.StatusCode}
		json.Unmarshal(body, &ae.Body)
		if resp.StatusCode == http.StatusUnauthorized {
			ae.Body.Message = "the server refused the token: is admin.token the same in this configuration and the server's?"
		}
		return ae
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("admin API %s %s: %w", method, c.base+path, err)
		}
	}
	return nil
}

func (c *adminClient) send(ctx context.Context, method, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API of the running server: %w (is serve running with this configuration? give -admin-url if it listens elsewhere)", err)
	}
	return resp, nil
}

func repoPath(name string) string { return "/admin/repos/" + url.PathEscape(name) }

// remoteRuns has the running server do a run of each repository in turn and
// follows it to the end, printing progress like a local run. Interrupted,
// it asks the server to cancel the run it started.
func remoteRuns(ctx context.Context, c *adminClient, repos []config.Repository, kind string, force bool, stderr io.Writer) error {
	var errs []error
	for _, r := range repos {
		err := remoteRun(ctx, c, r.Name, kind, force, stderr)
		var ie interruptedError
		if errors.As(err, &ie) {
			return err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
		}
	}
	return errors.Join(errs...)
}

func remoteRun(ctx context.Context, c *adminClient, name, kind string, force bool, stderr io.Writer) error {
	path := repoPath(name) + "/harvest"
	switch {
	case kind == harvest.KindReconcile:
		path = repoPath(name) + "/reconcile"
		if force {
			path += "?force=1"
		}
	case kind == harvest.KindFullHarvest:
		path += "?full=1"
	}
	// Start it, waiting for a run already going to end first.
	var started bridge.AdminRun
	waiting := false
	for {
		err := c.call(ctx, http.MethodPost, path, &started)
		var ae *adminError
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			if !waiting && ae.Body.Running != nil {
				fmt.Fprintf(stderr, "%s: a %s is running on the server (since %s); waiting for it to end\n",
					name, ae.Body.Running.Kind, ae.Body.Running.Started.Format(time.RFC3339))
			}
			waiting = true
			if err := sleepCtx(ctx, c.poll); err != nil {
				return interruptedError{fmt.Sprintf("interrupted while waiting; %s: nothing was started", name)}
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return interruptedError{fmt.Sprintf("interrupted; %s: nothing was started", name)}
			}
			return err
		}
		break
	}
	if started.Running == nil {
		return fmt.Errorf("the server started a %s but does not report it", kind)
	}
	since := started.Running.Started
	fmt.Fprintf(stderr, "%s: %s started on the server at %s\n", name, kind, since.Format(time.RFC3339))
	var last time.Time
	for {
		var rep bridge.RepoReport
		err := c.call(ctx, http.MethodGet, repoPath(name), &rep)
		if ctx.Err() != nil {
			return cancelRemote(c, name, kind)
		}
		if err != nil {
			return err
		}
		if rep.Running != nil && rep.Running.Started.Equal(since) {
			if time.Since(last) >= 2*time.Second {
				last = time.Now()
				a := rep.Running
				fmt.Fprintf(stderr, "%s %s %s: %s\n", name, a.Prefix, a.Kind, progressLine(a.Records, a.Total, a.Pages, a.Rate, time.Since(cmp.Or(a.Began, a.Started))))
			}
		} else {
			return remoteOutcome(rep, name, kind, since, stderr)
		}
		if err := sleepCtx(ctx, c.poll); err != nil {
			return cancelRemote(c, name, kind)
		}
	}
}

// remoteOutcome reports how the followed run ended.
func remoteOutcome(rep bridge.RepoReport, name, kind string, since time.Time, stderr io.Writer) error {
	ours := func(r *bridge.RunReport) bool { return r != nil && r.Kind == kind && !r.Started.Before(since) }
	switch {
	case ours(rep.LastSuccess):
		r := rep.LastSuccess
		fmt.Fprintf(stderr, "%s: %s done on the server in %s: %d pages, %d records: %d created, %d updated, %d deleted, %d quarantined\n",
			name, kind, time.Duration(r.DurationSeconds*float64(time.Second)).Round(time.Second), r.Pages, r.Records, r.Created, r.Updated, r.Deleted, r.Quarantined)
		return nil
	case ours(rep.LastFailure):
		return fmt.Errorf("%s failed on the server: %s", kind, rep.LastFailure.Error)
	}
	return interruptedError{fmt.Sprintf("interrupted on the server (cancelled, or the server stopped); %s: the next run starts where it stopped", name)}
}

// cancelRemote asks the server to stop the run this command started and
// waits (a little) for it to stop.
func cancelRemote(c *adminClient, name, kind string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.call(ctx, http.MethodPost, repoPath(name)+"/cancel", nil); err != nil {
		var ae *adminError
		if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
			return interruptedError{fmt.Sprintf("interrupted, but the server did not confirm the cancellation: %v", err)}
		}
	}
	var rep bridge.RepoReport
	for ctx.Err() == nil {
		if err := c.call(ctx, http.MethodGet, repoPath(name), &rep); err != nil || rep.Running == nil {
			break
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
	if kind == harvest.KindReconcile {
		return interruptedError{fmt.Sprintf("interrupted; the server stopped the reconciliation; %s: the next one starts a new pass", name)}
	}
	var where []string
	for _, f := range rep.Formats {
		if f.Resume != nil {
			where = append(where, fmt.Sprintf("%s at page %d (%d records kept)", f.Prefix, f.Resume.Page, f.Resume.Records))
		}
	}
	if len(where) == 0 {
		return interruptedError{fmt.Sprintf("interrupted; the server stopped the run; %s: what was committed is kept", name)}
	}
	return interruptedError{fmt.Sprintf("interrupted; the server stopped the run; %s: the next run resumes %s", name, strings.Join(where, ", "))}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
