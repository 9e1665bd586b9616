package bridge

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/notify"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// Metrics are rsbridge's Prometheus metrics, in a registry of their own (no
// global state). Their names and labels are a public interface: they are
// listed in docs/operations.md and pinned by testdata/metrics.txt. A nil
// *Metrics records nothing.
//
// Cardinality. A consortium runs hundreds of repositories (700 × 2
// formats is the size this is built for), and every label that carries
// the repository multiplies by it. What stays labelled per repository is a
// small, fixed set of series per repository, each worth an alert or a
// graph for that one repository (with F formats, F = 2 here):
//
//	rsbridge_runs_total{repository,kind,outcome}            ≤ 3 kinds × 3 outcomes = 9, only those that happened
//	rsbridge_run_last_success_timestamp_seconds{repository,kind}, rsbridge_run_running{repository,kind}   3 + 3
//	rsbridge_errors_total{repository,kind}                   ≤ 7 causes, only those that happened
//	rsbridge_upstream_retries_total{repository,reason}       ≤ 4 causes (retries are for network, http_status,
//	                                                         bad_response; other), only those that happened
//	rsbridge_harvest_pages_total, rsbridge_harvest_records_total, rsbridge_quarantined_records_total,
//	rsbridge_change_events_stored  {repository,prefix}       F each
//	rsbridge_records{repository,prefix,state}                2F (live, deleted)
//	rsbridge_change_events_total{repository,prefix,change}   3F (created, updated, deleted)
//	rsbridge_quality_records{repo,prefix,level}              3F, formats with checks only
//	rsbridge_run_records{repository,prefix}                  1, while a run goes (at most scheduler.concurrency in all)
//
// At most 9+6+7+4+4F+2F+3F+3F+1 = 27+12F series per repository: 51 with
// two formats, about 36,000 for 700 repositories if every one of them had
// had every outcome and every cause of failure; 36 each in a typical
// life (runs of every kind that succeed, a failure, two causes of retry).
// metrics_cardinality_test.go counts them at 700 × 2 and fails above 51
// (worst case) and 40 (typical).
//
// rsbridge_run_running is 1 only while a run holds a slot: a run waiting
// in the scheduler's queue is not going yet (rsbridge_scheduler_waiting
// counts those).
//
// Aggregated over repositories (no repository label), because their
// per-repository series multiplied by something large:
//
//	rsbridge_run_duration_seconds{kind}           was {repository,kind}: 13 series (buckets, sum,
//	                                              count) × 3 kinds = 39 per repository
//	rsbridge_upstream_request_duration_seconds{verb}  was {repository,verb}: 14 × 5 verbs = 70 per repository
//	rsbridge_quality_code_records{prefix,code}    was {repo,prefix,code}: up to the crosswalk's dozens
//	                                              of reason codes per format
//
// Their names stay; a query that summed over repository works unchanged,
// one that selected a repository does not. How long one repository's runs
// take is on the status page (each run's duration); which repositories
// have which findings is in status.json and rsbridge check-records.
//
// The scheduler's queue and the repositories by state are gauges without
// per-repository labels: rsbridge_scheduler_{running,waiting,concurrency,
// oldest_wait_seconds} and rsbridge_repositories{state}.
type Metrics struct {
	reg *prometheus.Registry

	runs            *prometheus.CounterVec
	runDuration     *prometheus.HistogramVec
	lastSuccess     *prometheus.GaugeVec
	pages           *prometheus.CounterVec
	records         *prometheus.CounterVec
	events          *prometheus.CounterVec
	quarantined     *prometheus.CounterVec
	errors          *prometheus.CounterVec
	upstreamLatency *prometheus.HistogramVec
	upstreamRetries *prometheus.CounterVec
	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
}

// NewMetrics registers rsbridge's metrics with the Go runtime and process
// collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_runs_total",
		Help: "Harvest, full harvest and reconciliation runs that ended, by outcome (success, failure, interrupted)."},
		[]string{"repository", "kind", "outcome"})
	m.runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rsbridge_run_duration_seconds",
		Help:    "Duration of runs that ended (any outcome), all repositories together.",
		Buckets: []float64{1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 24 * 3600}},
		[]string{"kind"})
	m.lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rsbridge_run_last_success_timestamp_seconds",
		Help: "Unix time the last successful run of the kind ended (this process's runs)."},
		[]string{"repository", "kind"})
	m.pages = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_harvest_pages_total",
		Help: "OAI-PMH list pages committed to the store."}, []string{"repository", "prefix"})
	m.records = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_harvest_records_total",
		Help: "Records (or headers, in reconciliation) read from committed pages."}, []string{"repository", "prefix"})
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_change_events_total",
		Help: "Change events stored, by change (created, updated, deleted)."}, []string{"repository", "prefix", "change"})
	m.quarantined = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_quarantined_records_total",
		Help: "Records set aside as unusable (malformed, too large, bad identifier)."}, []string{"repository", "prefix"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_errors_total",
		Help: "Failed runs by cause: network, http_status, oai_error, bad_response, resumption_guard, disk_full, other."},
		[]string{"repository", "kind"})
	m.upstreamLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rsbridge_upstream_request_duration_seconds",
		Help:    "OAI-PMH request attempts, from sending the request to the end of the body, all repositories together.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}},
		[]string{"verb"})
	m.upstreamRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_upstream_retries_total",
		Help: "OAI-PMH requests retried, by reason (network, http_status, bad_response)."},
		[]string{"repository", "reason"})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rsbridge_http_requests_total",
		Help: "HTTP requests served, by route template and status code."}, []string{"route", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rsbridge_http_request_duration_seconds",
		Help:    "Time to serve HTTP requests, by route template (large documents stream for as long as the client reads).",
		Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 30, 120}}, []string{"route"})
	for _, c := range []prometheus.Collector{m.runs, m.runDuration, m.lastSuccess, m.pages, m.records, m.events,
		m.quarantined, m.errors, m.upstreamLatency, m.upstreamRetries, m.httpRequests, m.httpDuration} {
		f(c)
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	bi := prometheus.NewGauge(prometheus.GaugeOpts{Name: "rsbridge_build_info",
		Help:        "Always 1; the labels name the running build.",
		ConstLabels: prometheus.Labels{"version": Version, "revision": BuildRevision(), "goversion": runtime.Version()}})
	bi.Set(1)
	f(bi)
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: nil, ErrorHandling: promhttp.ContinueOnError})
}

// Watch adds gauges read at scrape time: store size and free space, record
// counts per repository and format, repositories by state, running runs and
// the queue, the hub's backlog.
func (m *Metrics) Watch(cfg *config.Config, db *store.DB, sched *harvest.Scheduler, notifier *notify.Notifier) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&stateCollector{cfg: cfg, db: db, sched: sched, notifier: notifier, d: newStateDescs()})
}

// Metrics observe harvests (harvest.Observer).
var _ harvest.Observer = (*Metrics)(nil)

// Progress is not counted: the status page shows it.
func (m *Metrics) Progress(harvest.Progress) {}

// Committed counts one committed batch.
func (m *Metrics) Committed(repo, prefix string, c harvest.Counts) {
	if m == nil {
		return
	}
	m.pages.WithLabelValues(repo, prefix).Add(float64(c.Pages))
	m.records.WithLabelValues(repo, prefix).Add(float64(c.Records))
	for change, n := range map[string]int64{"created": c.Created, "updated": c.Updated, "deleted": c.Deleted} {
		if n > 0 {
			m.events.WithLabelValues(repo, prefix, change).Add(float64(n))
		}
	}
	if c.Quarantined > 0 {
		m.quarantined.WithLabelValues(repo, prefix).Add(float64(c.Quarantined))
	}
}

// RunEnded counts a run that ended.
func (m *Metrics) RunEnded(repo, kind string, took time.Duration, end time.Time, err error) {
	if m == nil {
		return
	}
	outcome := "success"
	switch {
	case harvest.Interrupted(err):
		outcome = "interrupted"
	case err != nil:
		outcome = "failure"
		m.errors.WithLabelValues(repo, errorKind(err)).Inc()
	default:
		m.lastSuccess.WithLabelValues(repo, kind).Set(float64(end.Unix()))
	}
	m.runs.WithLabelValues(repo, kind, outcome).Inc()
	m.runDuration.WithLabelValues(kind).Observe(took.Seconds())
}

// Attempt counts one OAI-PMH request attempt of a repository.
func (m *Metrics) Attempt(repo string, a oaipmh.Attempt) {
	if m == nil {
		return
	}
	m.upstreamLatency.WithLabelValues(a.Verb).Observe(a.Duration.Seconds())
	if a.Retry {
		m.upstreamRetries.WithLabelValues(repo, errorKind(a.Err)).Inc()
	}
}

// errorKind sorts a failure for the errors and retries metrics.
func errorKind(err error) string {
	var (
		oaiErr  *oaipmh.Error
		oaiErrs oaipmh.Errors
		httpErr *oaipmh.HTTPError
		fmtErr  *oaipmh.FormatError
		guard   *oaipmh.GuardError
		netErr  net.Error
	)
	switch {
	case errors.Is(err, store.ErrDiskFull):
		return "disk_full"
	case errors.As(err, &oaiErr), errors.As(err, &oaiErrs):
		return "oai_error"
	case errors.As(err, &httpErr):
		return "http_status"
	case errors.As(err, &fmtErr):
		return "bad_response"
	case errors.As(err, &guard):
		return "resumption_guard"
	case errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded):
		return "network"
	}
	return "other"
}

// instrument counts requests by route template and status.
func (m *Metrics) instrument(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := "other"
		if cr := mux.CurrentRoute(r); cr != nil {
			if t, err := cr.GetPathTemplate(); err == nil {
				route = t
			}
		}
		began := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		code := sw.status
		if code == 0 {
			code = http.StatusOK
		}
		m.httpRequests.WithLabelValues(route, strconv.Itoa(code)).Inc()
		m.httpDuration.WithLabelValues(route).Observe(time.Since(began).Seconds())
	})
}

// statusWriter notes the status code; it passes Flush, ReadFrom (sendfile)
// and Unwrap through.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
}

// stateCollector reads gauges at scrape time.
type stateCollector struct {
	cfg      *config.Config
	db       *store.DB
	sched    *harvest.Scheduler
	notifier *notify.Notifier
	d        stateDescs
}

// stateDescs describe the gauges stateCollector reads.
type stateDescs struct {
	storeBytes, free, reserve, records, seq, running, runRecords *prometheus.Desc
	subscribers, pending, delivered, failed, dropped, oldest     *prometheus.Desc
	qualityRecords, qualityCodes                                 *prometheus.Desc
	repositories, queueRunning, queueWaiting, concurrency        *prometheus.Desc
	oldestWait                                                   *prometheus.Desc
}

func newStateDescs() stateDescs {
	return stateDescs{
		// Per repository, format and level (3): bounded. The reason codes
		// (dozens) are summed over repositories: see Metrics.
		qualityRecords: prometheus.NewDesc("rsbridge_quality_records",
			"Live records with findings of IRDB's checks, by level (record-error, item-error, warning).", []string{"repo", "prefix", "level"}, nil),
		qualityCodes: prometheus.NewDesc("rsbridge_quality_code_records",
			"Live records with a finding of each reason code, all repositories together.", []string{"prefix", "code"}, nil),
		storeBytes: prometheus.NewDesc("rsbridge_store_size_bytes",
			"Size of the Badger store on disk, by part (lsm, vlog).", []string{"part"}, nil),
		free: prometheus.NewDesc("rsbridge_disk_free_bytes",
			"Free bytes on the data directory's file system.", nil, nil),
		reserve: prometheus.NewDesc("rsbridge_disk_reserve_bytes",
			"Free bytes harvests keep (store.min_free): below it they stop.", nil, nil),
		records: prometheus.NewDesc("rsbridge_records",
			"Records held, by state: live (served) or deleted (tombstones answering 410).", []string{"repository", "prefix", "state"}, nil),
		seq: prometheus.NewDesc("rsbridge_change_events_stored",
			"Sequence number of the newest change event (events ever stored).", []string{"repository", "prefix"}, nil),
		running: prometheus.NewDesc("rsbridge_run_running",
			"1 while a run of the kind is going.", []string{"repository", "kind"}, nil),
		runRecords: prometheus.NewDesc("rsbridge_run_records",
			"Records of the current list read so far by the running run (resumed parts included).", []string{"repository", "prefix"}, nil),
		repositories: prometheus.NewDesc("rsbridge_repositories",
			"Configured repositories by state: failing (the last run that ended failed), running, waiting (for a slot), never (no run ended yet), ok.",
			[]string{"state"}, nil),
		queueRunning: prometheus.NewDesc("rsbridge_scheduler_running",
			"Runs holding one of the scheduler's slots.", nil, nil),
		queueWaiting: prometheus.NewDesc("rsbridge_scheduler_waiting",
			"Runs waiting in the scheduler's queue for a slot.", nil, nil),
		concurrency: prometheus.NewDesc("rsbridge_scheduler_concurrency",
			"The scheduler's slots: the most runs going at once (scheduler.concurrency).", nil, nil),
		oldestWait: prometheus.NewDesc("rsbridge_scheduler_oldest_wait_seconds",
			"How long the run waiting longest for a slot has waited; 0 when none waits.", nil, nil),
		subscribers: prometheus.NewDesc("rsbridge_websub_subscriptions",
			"Live WebSub subscriptions per channel (a resource set's changenotification.xml).", []string{"channel"}, nil),
		pending: prometheus.NewDesc("rsbridge_websub_pending_deliveries",
			"Notifications owed to subscribers.", nil, nil),
		delivered: prometheus.NewDesc("rsbridge_websub_delivered_total",
			"Notifications delivered since start.", nil, nil),
		failed: prometheus.NewDesc("rsbridge_websub_failed_attempts_total",
			"Delivery attempts that failed since start (retried with backoff).", nil, nil),
		dropped: prometheus.NewDesc("rsbridge_websub_dropped_total",
			"Deliveries given up since start (attempts exhausted, 410, subscription ended).", nil, nil),
		oldest: prometheus.NewDesc("rsbridge_websub_oldest_pending_timestamp_seconds",
			"Creation time of the oldest undelivered notification; 0 when none.", nil, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	d := c.d
	for _, d := range []*prometheus.Desc{d.storeBytes, d.free, d.reserve, d.records, d.seq, d.running, d.runRecords,
		d.subscribers, d.pending, d.delivered, d.failed, d.dropped, d.oldest, d.qualityRecords, d.qualityCodes,
		d.repositories, d.queueRunning, d.queueWaiting, d.concurrency, d.oldestWait} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	lsm, vlog := c.db.Size()
	ch <- prometheus.MustNewConstMetric(d.storeBytes, prometheus.GaugeValue, float64(lsm), "lsm")
	ch <- prometheus.MustNewConstMetric(d.storeBytes, prometheus.GaugeValue, float64(vlog), "vlog")
	if free, reserve, err := c.db.Space(); err == nil {
		ch <- prometheus.MustNewConstMetric(d.free, prometheus.GaugeValue, float64(free))
		ch <- prometheus.MustNewConstMetric(d.reserve, prometheus.GaugeValue, float64(reserve))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.db.View(ctx, func(s *store.Snap) error { return c.collectStore(s, ch) }); err != nil {
		ch <- prometheus.NewInvalidMetric(d.records, err)
	}
	if c.sched != nil {
		c.collectScheduler(ch)
	}
	if c.notifier != nil {
		c.collectNotifier(ch)
	}
}

// collectStore reads, from one snapshot, the records and quality of every
// format and the state of every repository.
func (c *stateCollector) collectStore(s *store.Snap, ch chan<- prometheus.Metric) error {
	d := c.d
	states := map[string]int{}
	codes := map[[2]string]int64{} // prefix, code: summed over repositories
	for _, repo := range c.cfg.Repositories {
		info, err := s.RepoInfo(repo.Name)
		if err != nil {
			return err
		}
		var act *harvest.Activity
		if c.sched != nil {
			act = c.sched.Activity(repo.Name)
		}
		states[repoState(info, act)]++
		for _, p := range repo.MetadataPrefixes {
			if err := c.collectFormat(s, repo.Name, p, codes, ch); err != nil {
				return err
			}
		}
	}
	for _, state := range repoStates() {
		ch <- prometheus.MustNewConstMetric(d.repositories, prometheus.GaugeValue, float64(states[state]), state)
	}
	for k, n := range codes {
		ch <- prometheus.MustNewConstMetric(d.qualityCodes, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	return nil
}

// collectFormat reads one format's counters and quality levels, and adds
// its reason codes to codes.
func (c *stateCollector) collectFormat(s *store.Snap, repo, p string, codes map[[2]string]int64, ch chan<- prometheus.Metric) error {
	d := c.d
	ctr, err := s.Counter(repo, p)
	if err != nil {
		return err
	}
	ch <- prometheus.MustNewConstMetric(d.records, prometheus.GaugeValue, float64(ctr.Live), repo, p, "live")
	ch <- prometheus.MustNewConstMetric(d.records, prometheus.GaugeValue, float64(ctr.Deleted), repo, p, "deleted")
	ch <- prometheus.MustNewConstMetric(d.seq, prometheus.GaugeValue, float64(ctr.Seq), repo, p)
	q, err := s.Quality(repo, p)
	if err != nil || q.Version == "" {
		return err
	}
	for _, level := range []string{"record-error", "item-error", "warning"} {
		ch <- prometheus.MustNewConstMetric(d.qualityRecords, prometheus.GaugeValue, float64(q.Records[level]), repo, p, level)
	}
	for code, n := range q.Codes {
		codes[[2]string{p, code}] += n
	}
	return nil
}

// collectScheduler reads the runs going per repository and the queue.
func (c *stateCollector) collectScheduler(ch chan<- prometheus.Metric) {
	d := c.d
	for _, name := range c.sched.Repositories() {
		a := c.sched.Activity(name)
		for _, kind := range []string{harvest.KindHarvest, harvest.KindFullHarvest, harvest.KindReconcile} {
			v := 0.0
			if a != nil && !a.Waiting && a.Kind == kind {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(d.running, prometheus.GaugeValue, v, name, kind)
		}
		if a != nil && a.Prefix != "" {
			ch <- prometheus.MustNewConstMetric(d.runRecords, prometheus.GaugeValue, float64(a.Records), name, a.Prefix)
		}
	}
	q := c.sched.Queue()
	ch <- prometheus.MustNewConstMetric(d.queueRunning, prometheus.GaugeValue, float64(len(q.Running)))
	ch <- prometheus.MustNewConstMetric(d.queueWaiting, prometheus.GaugeValue, float64(len(q.Waiting)))
	ch <- prometheus.MustNewConstMetric(d.concurrency, prometheus.GaugeValue, float64(q.Concurrency))
	wait := 0.0
	for _, w := range q.Waiting {
		wait = max(wait, time.Since(w.Since).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(d.oldestWait, prometheus.GaugeValue, wait)
}

// collectNotifier reads the WebSub hub's counters and backlog.
func (c *stateCollector) collectNotifier(ch chan<- prometheus.Metric) {
	d := c.d
	st := c.notifier.Stats()
	for topic, n := range st.Subscribers {
		ch <- prometheus.MustNewConstMetric(d.subscribers, prometheus.GaugeValue, float64(n), topic)
	}
	ch <- prometheus.MustNewConstMetric(d.pending, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(d.delivered, prometheus.CounterValue, float64(st.Delivered))
	ch <- prometheus.MustNewConstMetric(d.failed, prometheus.CounterValue, float64(st.Failed))
	ch <- prometheus.MustNewConstMetric(d.dropped, prometheus.CounterValue, float64(st.Dropped))
	oldest := 0.0
	if !st.OldestPending.IsZero() {
		oldest = float64(st.OldestPending.Unix())
	}
	ch <- prometheus.MustNewConstMetric(d.oldest, prometheus.GaugeValue, oldest)
}

// BuildRevision is the VCS revision the binary was built from ("unknown"
// without build info), with "+dirty" for uncommitted changes.
func BuildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "unknown", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// WatchExport adds the static export's counters and lag to /metrics.
func (m *Metrics) WatchExport(e *export.Exporter) {
	if m == nil || e == nil {
		return
	}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	m.reg.MustRegister(&exportCollector{e: e,
		runs:     d("rsbridge_export_runs_total", "Static export runs since start."),
		failures: d("rsbridge_export_failures_total", "Static export runs that failed."),
		objects:  d("rsbridge_export_objects_total", "Objects the static export wrote."),
		bytes:    d("rsbridge_export_bytes_total", "Bytes the static export wrote."),
		deleted:  d("rsbridge_export_deleted_total", "Objects the static export removed."),
		skipped:  d("rsbridge_export_unchanged_total", "Documents rendered but not written: the target held their bytes."),
		unexport: d("rsbridge_export_unexportable_total", "Records whose identifiers cannot be static paths (counted per run)."),
		last:     d("rsbridge_export_last_success_timestamp_seconds", "When the last successful export run ended."),
		pending:  d("rsbridge_export_pending_changes", "Change events not exported yet."),
		lag:      d("rsbridge_export_lag_seconds", "Age of the oldest change event not exported yet (0: none)."),
	})
}

// exportCollector reads the exporter at scrape time.
type exportCollector struct {
	e                                                                              *export.Exporter
	runs, failures, objects, bytes, deleted, skipped, unexport, last, pending, lag *prometheus.Desc
}

func (c *exportCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.runs, c.failures, c.objects, c.bytes, c.deleted, c.skipped, c.unexport, c.last, c.pending, c.lag} {
		ch <- d
	}
}

func (c *exportCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.e.Totals()
	for d, v := range map[*prometheus.Desc]int64{c.runs: t.Runs.Load(), c.failures: t.Failures.Load(), c.objects: t.Objects.Load(),
		c.bytes: t.Bytes.Load(), c.deleted: t.Deleted.Load(), c.skipped: t.Skipped.Load(), c.unexport: t.Unexportable.Load()} {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	if last := c.e.Last(); last != nil && last.Err == "" {
		ch <- prometheus.MustNewConstMetric(c.last, prometheus.GaugeValue, float64(last.Ended.Unix()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if lag, err := c.e.Lag(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(lag.Changes))
		age := 0.0
		if !lag.Oldest.IsZero() {
			age = time.Since(lag.Oldest).Seconds()
		}
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, age)
	}
}
