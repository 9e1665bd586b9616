package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// Status is what the home page, /status.json and /admin/status report.
type Status struct {
	Version           string        `json:"version"`
	Revision          string        `json:"revision"`
	Now               time.Time     `json:"now"`
	Started           time.Time     `json:"started"`
	SourceDescription string        `json:"source_description"`
	Disk              DiskReport    `json:"disk"`
	Repositories      []RepoReport  `json:"repositories"`
	Dumps             *ErrorReport  `json:"dumps,omitempty"`
	Notification      *NotifyReport `json:"notification,omitempty"`
	Export            *ExportReport `json:"export,omitempty"`
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
	Name           string            `json:"name"`
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

// status gathers the status; public applies status.hide_errors.
func (s *Server) status(ctx context.Context, public bool) (*Status, error) {
	now := s.now().UTC()
	st := &Status{Version: Version, Revision: BuildRevision(), Now: now, Started: s.ops.started, SourceDescription: s.src.SourceDescriptionURL()}
	hide := func(msg string) string {
		if public && s.cfg().Status.HideErrors && msg != "" {
			return hiddenError
		}
		return msg
	}
	s.backgroundStatus(st, hide)
	sets := map[string]int{}
	for _, repo := range s.cfg().Repositories {
		specs, err := s.src.Published(ctx, repo)
		if err != nil {
			return nil, err
		}
		sets[repo.Name] = len(specs) + 1
	}
	err := s.db.View(ctx, func(snap *store.Snap) error {
		for _, repo := range s.cfg().Repositories {
			rr, err := s.repoStatus(snap, repo, sets[repo.Name], now, hide)
			if err != nil {
				return err
			}
			st.Repositories = append(st.Repositories, rr)
		}
		return nil
	})
	return st, err
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
func (s *Server) repoStatus(snap *store.Snap, repo config.Repository, sets int, now time.Time, hide func(string) string) (RepoReport, error) {
	info, err := snap.RepoInfo(repo.Name)
	if err != nil {
		return RepoReport{}, err
	}
	rr := RepoReport{Name: repo.Name, BaseURL: s.cfg().PublicBaseURL(repo), RepositoryName: info.RepositoryName,
		DeletedRecord: info.DeletedRecord, Granularity: info.Granularity, LastReconcile: info.LastReconcile}
	for _, run := range []struct {
		rec *store.RunRecord
		out **RunReport
	}{{info.LastSuccess, &rr.LastSuccess}, {info.LastFailure, &rr.LastFailure}} {
		if run.rec != nil {
			r := &RunReport{RunRecord: *run.rec, DurationSeconds: run.rec.Ended.Sub(run.rec.Started).Seconds()}
			r.Error = hide(r.Error)
			*run.out = r
		}
	}
	if s.ops.sched != nil {
		rr.Running = s.ops.sched.Activity(repo.Name)
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
	st, err := s.status(r.Context(), true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
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
