// Package mirror is a ResourceSync destination: it keeps a copy of every
// resource of a source's resource sets in a directory, for any ResourceSync
// 1.1 source, rsbridge or not (resourcesync.md §18, RS-183..RS-187).
//
// A run discovers the sets, takes a baseline the first time (from the
// Resource Dump when there is one, streaming each package and checking
// every file against its manifest, then the Resource List for what the
// dump lacks or got wrong), and then applies the changes after the
// baseline from the Change Lists. Every file is written beside its place
// and renamed into it; the state (store.MirrorDB) commits after a batch of
// files, with the change log's length, so a crash at any moment loses
// nothing committed and the next run redoes only the batch it cut short.
package mirror

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// Options configure a mirror.
type Options struct {
	Dir     string   // the copy
	Log     string   // the JSON-lines change log ("" = none)
	Sets    []string // path.Match patterns of Capability List paths ("" = all)
	Delete  bool     // delete files the source deleted
	NoDumps bool     // take baselines and changes from the lists alone (GETs)
	Force   bool     // lift the deletion limit
	// MaxDeleteShare is the largest share of a set's copy one run may
	// delete without Force (default 0.5).
	MaxDeleteShare float64
	Workers        int           // GETs at once (default 8)
	Batch          int           // files per state commit (default 500)
	Headers        http.Header   // sent with every request (a bearer token, say)
	Delay          time.Duration // between requests
	Timeout        time.Duration // per request (default 60 s)
	Retries        int           // after the first attempt (default 4)
	MaxDocBytes    int64         // largest document read (default 64 MiB)
	MaxFileBytes   int64         // largest resource without a length (default 256 MiB)
	UserAgent      string
	Transport      http.RoundTripper // tests route hosts to local servers
	Logger         *slog.Logger
	Now            func() time.Time
	// Hook runs after each committed batch that changed the copy, with the
	// batch's change-log lines on its standard input (sh -c; nil: none).
	// Its failure is logged; the batch stays committed.
	Hook []string
	// Progress is told of the counts as a run goes (nil: nobody).
	Progress func(Counts)
}

// Counts are what a run did.
type Counts struct {
	Sets      int   `json:"sets"`
	FromDump  int64 `json:"from_dump"`
	Shared    int64 `json:"shared"`  // held already for another set: recorded, not fetched
	Fetched   int64 `json:"fetched"` // GETs of resources that changed the copy
	Unchanged int64 `json:"unchanged"`
	Created   int64 `json:"created"`
	Updated   int64 `json:"updated"`
	Deleted   int64 `json:"deleted"`
	Kept      int64 `json:"kept"`   // deleted at the source, kept without -delete
	Failed    int64 `json:"failed"` // not taken for a transient fault: retried by the next run
	// Superseded resources were not as their list described them (changed
	// since, or gone): not kept, and left to the later change that
	// describes them; -audit names any the source never corrects.
	Superseded int64 `json:"superseded"`
	Bytes      int64 `json:"bytes"`
}

// Mirror keeps one copy of a source.
type Mirror struct {
	opts     Options
	f        *fetcher
	state    *store.MirrorDB
	sink     *sink
	log      *slog.Logger
	now      func() time.Time
	sets     []Set      // the sets of the current run
	known    []string   // every set the state knows, and the run's (Capability Lists)
	mu       sync.Mutex // guards counts and quirks
	counts   Counts
	quirks   map[string]bool
	lastRun  time.Time // the last run's end, in follow mode
	runs     int       // whole runs ended, in follow mode
	lastErr  string
	callback string // the callback server's URL, in follow mode
	stateDir string
	// auditPage is how many resources of the state an audit reads at a
	// time when it looks for extras (defaultAuditPage; tests make it small).
	auditPage int
}

// New opens the copy and its state (stateDir: one process at a time).
func New(stateDir string, o Options) (*Mirror, error) {
	if o.Dir == "" {
		return nil, errors.New("mirror: no directory for the copy (-dir)")
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	if o.Now == nil {
		o.Now = time.Now
	}
	o.MaxDeleteShare = cmp.Or(o.MaxDeleteShare, 0.5)
	o.Workers, o.Batch = cmp.Or(o.Workers, 8), cmp.Or(o.Batch, 500)
	o.Timeout, o.Retries = cmp.Or(o.Timeout, time.Minute), cmp.Or(o.Retries, 4)
	o.MaxDocBytes, o.MaxFileBytes = cmp.Or(o.MaxDocBytes, 64<<20), cmp.Or(o.MaxFileBytes, 256<<20)
	o.UserAgent = cmp.Or(o.UserAgent, "rsbridge-mirror (+https://github.com/rsbridge/rsbridge)")
	st, err := store.OpenMirror(stateDir, o.Logger)
	if err != nil {
		return nil, err
	}
	committed, err := st.Log()
	if err != nil {
		st.Close()
		return nil, err
	}
	sk, err := openSink(o.Dir, o.Log, committed.Bytes, filepath.Join(stateDir, aheadName))
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("mirror: %w", err)
	}
	transport := o.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	f := &fetcher{hc: &http.Client{Transport: transport, Timeout: o.Timeout}, headers: o.Headers, ua: o.UserAgent,
		retries: o.Retries, backoff: 500 * time.Millisecond, maxBackoff: time.Minute, delay: o.Delay, maxDoc: o.MaxDocBytes, log: o.Logger}
	sk.hooked = len(o.Hook) > 0
	return &Mirror{opts: o, f: f, state: st, sink: sk, log: o.Logger, now: o.Now, quirks: map[string]bool{}, stateDir: stateDir, auditPage: defaultAuditPage}, nil
}

// Close closes the change log and the state.
func (m *Mirror) Close() error {
	return errors.Join(m.sink.close(), m.state.Close())
}

// Counts are what the runs so far did.
func (m *Mirror) Counts() Counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts
}

func (m *Mirror) count(fn func(*Counts)) {
	m.mu.Lock()
	fn(&m.counts)
	c := m.counts
	m.mu.Unlock()
	if m.opts.Progress != nil {
		m.opts.Progress(c)
	}
}

// quirk reports something odd about the source once per run.
func (m *Mirror) quirk(where, what string) {
	m.mu.Lock()
	seen := m.quirks[what]
	m.quirks[what] = true
	m.mu.Unlock()
	if !seen {
		m.log.Warn("source quirk: "+what, "url", where)
	}
}

// Run brings the copy up to date with the source at start once: a baseline
// where there is none, then the changes since. One set failing does not
// stop the others; the error joins every set's.
func (m *Mirror) Run(ctx context.Context, start string) error {
	sets, err := m.discover(ctx, start)
	if err != nil {
		return err
	}
	if err := m.begin(ctx, sets); err != nil {
		return err
	}
	var errs []error
	for _, s := range sets {
		if err := m.runSet(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("set %s: %w", s.CapabilityList, err))
			if ctx.Err() != nil {
				break
			}
		}
		m.count(func(c *Counts) { c.Sets++ })
	}
	return errors.Join(errs...)
}

// begin starts a run over sets: it notes every set the state knows (a
// -sets filter may leave some out, and their files are theirs too), then
// mends what a run that died left ahead of the state.
func (m *Mirror) begin(ctx context.Context, sets []Set) error {
	m.sets = sets
	known, err := m.state.Sets(ctx)
	if err != nil {
		return err
	}
	for _, s := range sets {
		if !slices.Contains(known, s.CapabilityList) {
			known = append(known, s.CapabilityList)
		}
	}
	m.known = known
	if err := m.recoverAhead(ctx); err != nil {
		return fmt.Errorf("mending the copy after a run that died: %w", err)
	}
	return nil
}

// runSet takes the set's baseline if it has none, then its changes.
func (m *Mirror) runSet(ctx context.Context, s Set) error {
	st, err := m.state.Set(s.CapabilityList)
	if err != nil {
		return err
	}
	if m.opts.NoDumps {
		s.ResourceDump, s.ChangeDump = "", ""
	}
	r := &setRun{m: m, set: s, st: st, batch: m.state.Batch(), live: -1}
	if !st.BaselineDone {
		if err := r.baseline(ctx); err != nil {
			return err
		}
	}
	return r.changes(ctx)
}

// runHook runs the per-batch hook with the batch's change-log lines.
func (m *Mirror) runHook(lines []byte) {
	if len(m.opts.Hook) == 0 || len(lines) == 0 {
		return
	}
	cmd := exec.Command(m.opts.Hook[0], m.opts.Hook[1:]...)
	cmd.Stdin = bytes.NewReader(lines)
	cmd.Env = append(os.Environ(), "RSBRIDGE_MIRROR_DIR="+m.opts.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		m.log.Error("hook failed; the batch stays applied", "hook", m.opts.Hook, "err", err, "output", strings.TrimSpace(string(out)))
	}
}
