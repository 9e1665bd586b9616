package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// Status is what the home page, /status.json and /admin/status report:
// first a summary of every repository (cheap: read for all of them on
// every request), then one page of repositories in full detail, those
// that need a look first (see the repository states), filtered and paged
// by the request's query (StatusQuery).
type Status struct {
	Version           string        `json:"version"`
	Revision          string        `json:"revision"`
	Now               time.Time     `json:"now"`
	Started           time.Time     `json:"started"`
	SourceDescription string        `json:"source_description"`
	Summary           StatusSummary `json:"summary"`
	Disk              DiskReport    `json:"disk"`
	Dumps             *ErrorReport  `json:"dumps,omitempty"`
	Notification      *NotifyReport `json:"notification,omitempty"`
	Export            *ExportReport `json:"export,omitempty"`
	// Filter is the selection asked for; Matching counts the repositories
	// it selects, Repositories holds page Page (1-based) of them, PerPage
	// a page, Pages pages in all.
	Filter       StatusFilter `json:"filter,omitzero"`
	Matching     int          `json:"matching"`
	Page         int          `json:"page"`
	PerPage      int          `json:"per_page"`
	Pages        int          `json:"pages"`
	Repositories []RepoReport `json:"repositories"`
}

// ExportReport is the static export (export.target): totals since start,
// the last run, and how far the target is behind the store.
type ExportReport struct {
	Target         string         `json:"target"`
	Running        bool           `json:"running"`
	Runs           int64          `json:"runs"`
	Failures       int64          `json:"failures"`
	Objects        int64          `json:"objects"`
	Bytes          int64          `json:"bytes"`
	Deleted        int64          `json:"deleted"`
	Unexportable   int64          `json:"unexportable"`
	Last           *export.Report `json:"last,omitempty"`
	PendingChanges int64          `json:"pending_changes"`
	OldestPending  time.Time      `json:"oldest_pending,omitzero"`
	Error          string         `json:"error,omitempty"`
}

// DiskReport is the store's size and the room left for it.
type DiskReport struct {
	StoreBytes   int64  `json:"store_bytes"`
	FreeBytes    uint64 `json:"free_bytes,omitempty"`
	ReserveBytes uint64 `json:"reserve_bytes,omitempty"`
	// HarvestsStopped: the disk is (nearly) full; what is stored is still served.
	HarvestsStopped bool   `json:"harvests_stopped"`
	Error           string `json:"error,omitempty"`
}

// RepoReport is one repository: what runs now, what ran, what is next, what
// is held.
type RepoReport struct {
	Name string `json:"name"`
	// State is the repository's state (failing, running, waiting, never,
	// ok: see repoState); Host its upstream host name.
	State          string            `json:"state"`
	Host           string            `json:"host,omitempty"`
	BaseURL        string            `json:"base_url"`
	RepositoryName string            `json:"repository_name,omitempty"`
	DeletedRecord  string            `json:"deleted_record,omitempty"`
	Granularity    string            `json:"granularity,omitempty"`
	Running        *harvest.Activity `json:"running,omitempty"`
	LastSuccess    *RunReport        `json:"last_success,omitempty"`
	LastFailure    *RunReport        `json:"last_failure,omitempty"`
	LastReconcile  time.Time         `json:"last_reconcile,omitzero"`
	NextHarvest    time.Time         `json:"next_harvest,omitzero"`
	NextReconcile  time.Time         `json:"next_reconcile,omitzero"`
	Formats        []FormatReport    `json:"formats"`
}

// RunReport is a finished run.
type RunReport struct {
	store.RunRecord
	DurationSeconds float64 `json:"duration_s"`
}

// FormatReport is one metadata format of a repository.
type FormatReport struct {
	Prefix string `json:"prefix"`
	// Live records are served; tombstones are deleted records kept so their
	// URLs answer 410 Gone.
	Live         int64     `json:"live"`
	Tombstones   int64     `json:"tombstones"`
	Events       uint64    `json:"events"` // change events ever stored
	LastEvent    time.Time `json:"last_event,omitzero"`
	Quarantined  int       `json:"quarantined"`
	ResourceSets int       `json:"resource_sets"`
	// Resume is where the next run continues a list that was interrupted
	// (nil when no list is in progress).
	Resume       *ListResume      `json:"resume,omitempty"`
	EventsPerDay []store.DayCount `json:"events_per_day"` // the last chartDays days, oldest first
	// DerivedFrom is the format a derived one is converted from (config
	// derive); "" for a harvested format.
	DerivedFrom string `json:"derived_from,omitempty"`
	// Quality is what IRDB's checks find in the format's records (nil:
	// the format has no checks).
	Quality *QualityReport `json:"quality,omitempty"`
}

// QualityReport sums a format's record checks: the live records checked,
// the records with findings of each level (record-error, item-error,
// warning) and with each code, and the first records with findings (all
// of them: rsbridge check-records, or the admin API's /admin/quality).
type QualityReport struct {
	Checked  int64            `json:"checked"`
	Records  map[string]int64 `json:"records"`
	Codes    map[string]int64 `json:"codes"`
	Affected []QualityRecord  `json:"affected,omitempty"`
}

// QualityRecord is one record's findings, "level code" each.
type QualityRecord struct {
	Identifier string   `json:"identifier"`
	Issues     []string `json:"issues"`
}

// qualityShown is how many records with findings status.json lists.
const qualityShown = 20

// qualityReport reads a format's quality, nil when it is never checked.
func qualityReport(snap *store.Snap, repo, prefix string) (*QualityReport, error) {
	q, err := snap.Quality(repo, prefix)
	if err != nil || q.Version == "" {
		return nil, err
	}
	r := &QualityReport{Checked: q.Checked, Records: q.Records, Codes: q.Codes}
	err = snap.QualityIssues(repo, prefix, "", func(id string, issues []store.QualityIssue) error {
		if len(r.Affected) == qualityShown {
			return errQualityShown
		}
		qr := QualityRecord{Identifier: id}
		for _, i := range issues {
			qr.Issues = append(qr.Issues, i.Level+" "+i.Code)
		}
		r.Affected = append(r.Affected, qr)
		return nil
	})
	if errors.Is(err, errQualityShown) {
		err = nil
	}
	return r, err
}

var errQualityShown = errors.New("enough records shown")

// ListResume is the first page of an interrupted list not yet committed.
type ListResume struct {
	Page    int64 `json:"page"`
	Records int64 `json:"records_kept"`
}

// ErrorReport is a background component's last failure.
type ErrorReport struct {
	LastError string `json:"last_error,omitempty"`
}

// NotifyReport is the WebSub hub's state.
type NotifyReport struct {
	Subscriptions int            `json:"subscriptions"`
	PerChannel    map[string]int `json:"subscriptions_per_channel"` // channel (changenotification.xml URL): live subscriptions
	Delivered     uint64         `json:"delivered"`
	Failed        uint64         `json:"failed_attempts"`
	Dropped       uint64         `json:"dropped"`
	Pending       int            `json:"pending"`
	OldestPending time.Time      `json:"oldest_pending,omitzero"` // created time of the oldest undelivered notification
	LastError     string         `json:"last_error,omitempty"`
}

// chartDays is how many days the events-per-day chart shows.
const chartDays = 30

// hiddenError replaces error texts on the public status with
// status.hide_errors.
const hiddenError = "(details hidden: see the log or /admin/status)"

// statusView is a status with what the home page needs beside it: the
// configuration and the published sets of the repositories shown.
type statusView struct {
	*Status
	repos []config.Repository // as Status.Repositories
	specs [][]string          // their published sets
}

// status gathers the status; public applies status.hide_errors. The
// summary and the selection come from one snapshot; the detail of the
// page's repositories from a second one, opened after their published sets
// are looked up (the set catalog opens snapshots of its own, and snapshots
// are not nested).
func (s *Server) status(ctx context.Context, public bool, q StatusQuery) (*statusView, error) {
	now := s.now().UTC()
	st := &Status{Version: Version, Revision: BuildRevision(), Now: now, Started: s.ops.started, SourceDescription: s.src.SourceDescriptionURL()}
	hide := s.hider(public)
	s.backgroundStatus(st, hide)
	var rows []repoRow
	err := s.db.View(ctx, func(snap *store.Snap) error {
		var err error
		rows, st.Summary, err = s.survey(snap)
		return err
	})
	if err != nil {
		return nil, err
	}
	st.Summary.Queue = s.queueSummary()
	shown := paginate(st, rows, q)
	v := &statusView{Status: st}
	if v.Repositories, v.specs, err = s.details(ctx, shown, now, hide); err != nil {
		return nil, err
	}
	for _, r := range shown {
		v.repos = append(v.repos, r.repo)
	}
	return v, nil
}

// hider replaces error texts with hiddenError on the public status when
// status.hide_errors is set.
func (s *Server) hider(public bool) func(string) string {
	hideAll := public && s.cfg().Status.HideErrors
	return func(msg string) string {
		if hideAll && msg != "" {
			return hiddenError
		}
		return msg
	}
}

// details reports the repositories shown in full: their published sets,
// then every format's counters, quarantine, chart and quality from one
// snapshot.
func (s *Server) details(ctx context.Context, rows []repoRow, now time.Time, hide func(string) string) ([]RepoReport, [][]string, error) {
	specs := make([][]string, len(rows))
	for i, r := range rows {
		var err error
		if specs[i], err = s.src.Published(ctx, r.repo); err != nil {
			return nil, nil, err
		}
	}
	reports := make([]RepoReport, 0, len(rows))
	err := s.db.View(ctx, func(snap *store.Snap) error {
		for i, r := range rows {
			rr, err := s.repoStatus(snap, r, len(specs[i])+1, now, hide)
			if err != nil {
				return err
			}
			reports = append(reports, rr)
		}
		return nil
	})
	return reports, specs, err
}

// repoReport is one repository's full report (GET /admin/repos/{repo}),
// without the summary of the others.
func (s *Server) repoReport(ctx context.Context, repo config.Repository, public bool) (RepoReport, error) {
	var row repoRow
	err := s.db.View(ctx, func(snap *store.Snap) error {
		var err error
		row, err = s.row(snap, repo)
		return err
	})
	if err != nil {
		return RepoReport{}, err
	}
	reports, _, err := s.details(ctx, []repoRow{row}, s.now().UTC(), s.hider(public))
	if err != nil {
		return RepoReport{}, err
	}
	return reports[0], nil
}

// backgroundStatus reports the disk, the dumper and the notifier.
func (s *Server) backgroundStatus(st *Status, hide func(string) string) {
	st.Disk.StoreBytes = s.storeBytes()
	if free, reserve, err := s.db.Space(); err == nil {
		st.Disk.FreeBytes, st.Disk.ReserveBytes = free, reserve
	}
	if err := s.db.CheckSpace(); err != nil {
		st.Disk.HarvestsStopped = true
		st.Disk.Error = hide(err.Error())
	}
	if s.ops.dumper != nil {
		st.Dumps = &ErrorReport{}
		if err := s.ops.dumper.LastError(); err != nil {
			st.Dumps.LastError = hide(err.Error())
		}
	}
	if s.ops.exporter != nil {
		st.Export = s.exportStatus(hide)
	}
	if s.ops.notifier != nil {
		hs := s.ops.notifier.Stats()
		n := &NotifyReport{Delivered: hs.Delivered, Failed: hs.Failed, Dropped: hs.Dropped, Pending: hs.Pending, OldestPending: hs.OldestPending,
			PerChannel: map[string]int{}}
		for topic, k := range hs.Subscribers {
			n.Subscriptions += k
			n.PerChannel[topic] = k
		}
		if err := s.ops.notifier.LastError(); err != nil {
			n.LastError = hide(err.Error())
		}
		st.Notification = n
	}
}

// repoStatus reports one repository: what it is, its runs, each format.
// The row's RepoInfo and activity are the ones its state was read from, so
// the report and the state agree.
func (s *Server) repoStatus(snap *store.Snap, row repoRow, sets int, now time.Time, hide func(string) string) (RepoReport, error) {
	repo, info := row.repo, row.info
	rr := RepoReport{Name: repo.Name, State: row.state, Host: row.host, BaseURL: s.cfg().PublicBaseURL(repo), RepositoryName: info.RepositoryName,
		DeletedRecord: info.DeletedRecord, Granularity: info.Granularity, LastReconcile: info.LastReconcile, Running: row.act}
	rr.LastSuccess = runReport(info.LastSuccess, hide)
	rr.LastFailure = runReport(info.LastFailure, hide)
	if s.ops.sched != nil {
		rr.NextHarvest, rr.NextReconcile = s.ops.sched.Next(repo.Name)
	}
	for _, p := range repo.MetadataPrefixes {
		fr, err := formatStatus(snap, repo.Name, p, sets, now)
		if err != nil {
			return RepoReport{}, err
		}
		rr.Formats = append(rr.Formats, fr)
	}
	return rr, nil
}

// runReport reports a finished run (nil: none).
func runReport(rec *store.RunRecord, hide func(string) string) *RunReport {
	if rec == nil {
		return nil
	}
	r := &RunReport{RunRecord: *rec, DurationSeconds: rec.Ended.Sub(rec.Started).Seconds()}
	r.Error = hide(r.Error)
	return r
}

// formatStatus reports one format of a repository.
func formatStatus(snap *store.Snap, repo, prefix string, sets int, now time.Time) (FormatReport, error) {
	c, err := snap.Counter(repo, prefix)
	if err != nil {
		return FormatReport{}, err
	}
	fr := FormatReport{Prefix: prefix, Live: c.Live, Tombstones: c.Deleted, Events: c.Seq, LastEvent: c.LastTime, ResourceSets: sets}
	if fr.Quarantined, err = snap.Quarantine(repo, prefix, 0, func(store.Quarantined) error { return nil }); err != nil {
		return FormatReport{}, err
	}
	from := now.Add(-(chartDays - 1) * 24 * time.Hour)
	if fr.EventsPerDay, err = snap.EventsPerDay(repo, prefix, from, now); err != nil {
		return FormatReport{}, err
	}
	cp, err := snap.Checkpoint(repo, prefix)
	if err != nil {
		return FormatReport{}, err
	}
	if cp.InProgress && cp.Token != "" {
		fr.Resume = &ListResume{Page: cp.SeqPages + 1, Records: cp.SeqRecords}
	}
	fr.DerivedFrom = cp.DerivedFrom
	if fr.Quality, err = qualityReport(snap, repo, prefix); err != nil {
		return FormatReport{}, err
	}
	return fr, nil
}

// storeBytes is the store's size on disk.
func (s *Server) storeBytes() int64 {
	lsm, vlog := s.db.Size()
	return lsm + vlog
}

// statusJSON serves /status.json: the public status, uncached.
func (s *Server) statusJSON(w http.ResponseWriter, r *http.Request) {
	s.serveStatusJSON(w, r, true)
}

// serveStatusJSON answers /status.json or /admin/status with the page and
// selection the query asks for.
func (s *Server) serveStatusJSON(w http.ResponseWriter, r *http.Request, public bool) {
	q, err := ParseStatusQuery(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.status(r.Context(), public, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v.Status)
}

// writeJSON answers a JSON document.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (s *Server) exportStatus(hide func(string) string) *ExportReport {
	e := s.ops.exporter
	t := e.Totals()
	r := &ExportReport{Target: e.Target(), Running: e.Running(), Runs: t.Runs.Load(), Failures: t.Failures.Load(), Objects: t.Objects.Load(),
		Bytes: t.Bytes.Load(), Deleted: t.Deleted.Load(), Unexportable: t.Unexportable.Load()}
	if last := e.Last(); last != nil {
		l := *last
		l.Err = hide(l.Err)
		r.Last = &l
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if lag, err := e.Lag(ctx); err != nil {
		r.Error = hide(err.Error())
	} else {
		r.PendingChanges, r.OldestPending = lag.Changes, lag.Oldest
	}
	return r
}

// The states of a repository, as the status summary, its filter
// (?state=), the bulk harvest (POST /admin/harvest?state=) and the gauge
// rsbridge_repositories{state} name them. Every repository is in exactly
// one: the first of these that applies, in this order, which is also the
// order of the status list (what needs a look comes first).
//
//	failing  the last run that ended, ended in failure: RepoInfo.LastFailure
//	         ended after LastSuccess, or there is no success. A retry that
//	         runs or waits does not clear it; only a run that succeeds does.
//	         An interrupted run (cancelled, shut down) did not end in this
//	         sense: it records neither, and changes nothing.
//	running  a run of it holds one of the scheduler's slots
//	waiting  a run of it is queued for a slot (harvest.Activity.Waiting)
//	never    no run of it has ended yet: no success and no failure
//	ok       the last run that ended succeeded, and none runs or waits
//
// "running" and "waiting" come from the scheduler at the moment of the
// request, the others from the store; a failing repository being retried
// stays "failing" (its report's running field says the retry goes on), so
// the failing count only drops when a retry succeeds.
const (
	stateFailing = "failing"
	stateRunning = "running"
	stateWaiting = "waiting"
	stateNever   = "never"
	stateOK      = "ok"
)

// nStates is the number of repository states.
const nStates = 5

// repoStates are the states in list order.
func repoStates() [nStates]string {
	return [nStates]string{stateFailing, stateRunning, stateWaiting, stateNever, stateOK}
}

// stateRank is a state's place in the list order (-1: no such state).
func stateRank(state string) int {
	states := repoStates()
	return slices.Index(states[:], state)
}

// repoState is a repository's state from its RepoInfo and the scheduler's
// activity (nil: idle).
func repoState(info store.RepoInfo, act *harvest.Activity) string {
	switch {
	case lastRunFailed(info):
		return stateFailing
	case act != nil && !act.Waiting:
		return stateRunning
	case act != nil:
		return stateWaiting
	case info.LastSuccess == nil:
		return stateNever
	}
	return stateOK
}

// lastRunFailed: the last run that ended (interrupted runs do not count)
// ended in failure.
func lastRunFailed(info store.RepoInfo) bool {
	fail, ok := info.LastFailure, info.LastSuccess
	return fail != nil && (ok == nil || fail.Ended.After(ok.Ended))
}

// StatusSummary counts every repository by state (they add up to
// Repositories), the live records of all of them, and the scheduler's
// queue (nil without a scheduler).
type StatusSummary struct {
	Repositories int           `json:"repositories"`
	Failing      int           `json:"failing"`
	Running      int           `json:"running"`
	Waiting      int           `json:"waiting"`
	Never        int           `json:"never"`
	OK           int           `json:"ok"`
	LiveRecords  int64         `json:"live_records"`
	Queue        *QueueSummary `json:"queue,omitempty"`
}

// count adds one repository of a state.
func (sum *StatusSummary) count(state string) {
	sum.Repositories++
	switch state {
	case stateFailing:
		sum.Failing++
	case stateRunning:
		sum.Running++
	case stateWaiting:
		sum.Waiting++
	case stateNever:
		sum.Never++
	default:
		sum.OK++
	}
}

// ByState is the number of repositories in a state.
func (sum StatusSummary) ByState(state string) int {
	switch state {
	case stateFailing:
		return sum.Failing
	case stateRunning:
		return sum.Running
	case stateWaiting:
		return sum.Waiting
	case stateNever:
		return sum.Never
	case stateOK:
		return sum.OK
	}
	return 0
}

// QueueSummary is the scheduler's queue: its limits, the runs holding a
// slot, how many wait and the first of them (FirstWaiting, oldest first,
// at most queueShown).
type QueueSummary struct {
	Concurrency  int                  `json:"concurrency"`
	PerHost      int                  `json:"per_host"`
	Running      []harvest.QueueEntry `json:"running"`
	Waiting      int                  `json:"waiting"`
	FirstWaiting []harvest.QueueEntry `json:"first_waiting,omitempty"`
}

// queueShown is how many waiting runs the summary lists.
const queueShown = 10

// queueSummary reads the scheduler's queue (nil: no scheduler).
func (s *Server) queueSummary() *QueueSummary {
	if s.ops.sched == nil {
		return nil
	}
	q := s.ops.sched.Queue()
	if q.Running == nil {
		q.Running = []harvest.QueueEntry{} // [] in JSON: nothing runs
	}
	return &QueueSummary{Concurrency: q.Concurrency, PerHost: q.PerHost, Running: q.Running,
		Waiting: len(q.Waiting), FirstWaiting: q.Waiting[:min(len(q.Waiting), queueShown)]}
}

// repoRow is one repository as the summary sees it: what the store says
// of its runs (RepoInfo, one point read), what the scheduler says it does,
// the state both give, and its upstream host. Nothing per format.
type repoRow struct {
	repo  config.Repository
	info  store.RepoInfo
	act   *harvest.Activity
	state string
	host  string
}

// row reads one repository's row.
func (s *Server) row(snap *store.Snap, repo config.Repository) (repoRow, error) {
	info, err := snap.RepoInfo(repo.Name)
	if err != nil {
		return repoRow{}, fmt.Errorf("status of %s: %w", repo.Name, err)
	}
	r := repoRow{repo: repo, info: info, host: s.repoHost(repo)}
	if s.ops.sched != nil {
		r.act = s.ops.sched.Activity(repo.Name)
	}
	r.state = repoState(info, r.act)
	return r, nil
}

// repoHost is the upstream host a repository counts under for
// scheduler.per_host (its host group's domain, else its host name): the
// scheduler's, else worked out from the base URL the same way.
func (s *Server) repoHost(repo config.Repository) string {
	if s.ops.sched != nil {
		return s.ops.sched.Host(repo.Name)
	}
	if u, err := url.Parse(repo.BaseURL); err == nil {
		return s.src.Config().Scheduler.PolitenessHost(u.Hostname())
	}
	return ""
}

// survey reads every configured repository's row and the summary from one
// snapshot: per repository its RepoInfo and the scheduler's activity, per
// format one counter (a point read, for the live records); no scans. The
// rows come in list order: by state (repoStates), then configuration
// order.
func (s *Server) survey(snap *store.Snap) ([]repoRow, StatusSummary, error) {
	var byState [nStates][]repoRow // grouped in order: no sort moving large rows around
	var sum StatusSummary
	for _, repo := range s.cfg().Repositories {
		r, err := s.row(snap, repo)
		if err != nil {
			return nil, StatusSummary{}, err
		}
		for _, p := range repo.MetadataPrefixes {
			c, err := snap.Counter(repo.Name, p)
			if err != nil {
				return nil, StatusSummary{}, fmt.Errorf("status of %s/%s: %w", repo.Name, p, err)
			}
			sum.LiveRecords += c.Live
		}
		sum.count(r.state)
		byState[stateRank(r.state)] = append(byState[stateRank(r.state)], r)
	}
	return slices.Concat(byState[:]...), sum, nil
}

// StatusFilter selects repositories: each field set must match.
type StatusFilter struct {
	State string `json:"state,omitempty"` // a repository state
	Host  string `json:"host,omitempty"`  // the upstream host name, case-insensitive
	Name  string `json:"q,omitempty"`     // a substring of the repository's name, case-insensitive
}

// IsZero: the filter selects every repository.
func (f StatusFilter) IsZero() bool { return f == StatusFilter{} }

func (f StatusFilter) match(r repoRow) bool {
	return (f.State == "" || r.state == f.State) &&
		(f.Host == "" || strings.EqualFold(r.host, f.Host)) &&
		(f.Name == "" || strings.Contains(strings.ToLower(r.repo.Name), strings.ToLower(f.Name)))
}

// StatusQuery is what a status request asks for: a selection and a page
// of it.
type StatusQuery struct {
	Filter  StatusFilter
	Page    int // 1-based
	PerPage int
}

// Status pages: perPageDefault repositories unless per_page says
// otherwise, at most perPageMax (larger values are lowered to it).
const (
	perPageDefault = 50
	perPageMax     = 500
)

// ParseStatusQuery reads state, host, q, page and per_page; an unknown
// state, or a page or per_page that is not a positive integer, is a 400.
func ParseStatusQuery(v url.Values) (StatusQuery, error) {
	q := StatusQuery{Filter: StatusFilter{State: strings.ToLower(strings.TrimSpace(v.Get("state"))),
		Host: strings.TrimSpace(v.Get("host")), Name: strings.TrimSpace(v.Get("q"))}, Page: 1, PerPage: perPageDefault}
	if q.Filter.State != "" && stateRank(q.Filter.State) < 0 {
		return StatusQuery{}, invalid("unknown state %q: use failing, running, waiting, never or ok", source.Clip(q.Filter.State, 40))
	}
	for _, p := range []struct {
		name string
		out  *int
	}{{"page", &q.Page}, {"per_page", &q.PerPage}} {
		raw := v.Get(p.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return StatusQuery{}, invalid("%s must be a positive integer, not %q", p.name, source.Clip(raw, 40))
		}
		*p.out = n
	}
	q.PerPage = min(q.PerPage, perPageMax)
	return q, nil
}

// invalid is a 400 answer.
func invalid(format string, args ...any) error {
	return &source.Error{Code: source.CodeInvalid, Msg: fmt.Sprintf(format, args...)}
}

// selectRows keeps the rows the filter matches, in order.
func selectRows(rows []repoRow, f StatusFilter) []repoRow {
	if f.IsZero() {
		return rows
	}
	var out []repoRow
	for _, r := range rows {
		if f.match(r) {
			out = append(out, r)
		}
	}
	return out
}

// paginate notes the selection and the page on st and returns the page's
// rows (none past the last page).
func paginate(st *Status, rows []repoRow, q StatusQuery) []repoRow {
	matching := selectRows(rows, q.Filter)
	st.Filter, st.Page, st.PerPage, st.Matching = q.Filter, q.Page, q.PerPage, len(matching)
	st.Pages = (len(matching) + q.PerPage - 1) / q.PerPage
	if q.Page > st.Pages {
		return nil
	}
	from := (q.Page - 1) * q.PerPage
	return matching[from:min(from+q.PerPage, len(matching))]
}
