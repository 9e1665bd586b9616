package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/store"
)

// Series bounds for /metrics (see the comment on Metrics):
//
//   - per repository, worst case: 27 + 12 × formats = 51 with two
//     formats: every run kind with every outcome, every cause of failure
//     and of retry, every change, quality checks on both formats and a
//     list being read. 700 × 51 = 35,700 series, a scrape of a few MB
//     that one Prometheus takes in its stride; the histograms and the
//     reason codes that made it 200+ per repository are aggregated.
//   - per repository, in practice (harvests and reconciliations that
//     succeed, now and then a failure or a retry of one or two causes):
//     at most 40.
//   - without a repository label: what does not grow with the
//     repositories (histograms by kind, verb and route; reason codes by
//     format; the queue; the store): at most 600 here.
const (
	seriesPerRepoWorst   = 51
	seriesPerRepoTypical = 40
	seriesShared         = 600
)

// TestMetricsCardinality: with 700 repositories × 2 formats, /metrics
// stays within a fixed number of series per repository however much
// happened to each, and nothing labelled per repository multiplies by a
// histogram's buckets or by the quality codes.
func TestMetricsCardinality(t *testing.T) {
	f := newScaleFixture(t, scaleRepos, "", true)
	for _, repo := range f.cfg.Repositories { // checks on both formats: the worst case
		q := store.Quality{Version: "1", Checked: 10, Records: map[string]int64{"warning": 1}, Codes: map[string]int64{"dc-title-missing": 1}}
		if err := f.db.PutQuality(repo.Name, "oai_dc", nil, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name     string
		happen   func(*Metrics, string)
		perRepo  int
		minSlots int // the fewest series a repository must have, so the counting is not vacuous
	}{
		{"worst", everythingHappened, seriesPerRepoWorst, 45},
		{"typical", typicalRuns, seriesPerRepoTypical, 25},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewMetrics()
			m.Watch(f.cfg, f.db, f.sched, nil)
			for _, repo := range f.cfg.Repositories {
				c.happen(m, repo.Name)
			}
			perRepo, shared, histos := countSeries(t, scrape(t, m))
			most, fewest, total := 0, 1<<30, 0
			for _, n := range perRepo {
				most, fewest, total = max(most, n), min(fewest, n), total+n
			}
			t.Logf("%s: %d repositories, %d series labelled per repository (%d to %d each), %d others, %d series in all",
				c.name, len(perRepo), total, fewest, most, shared, total+shared)
			if len(perRepo) != scaleRepos || most > c.perRepo || fewest < c.minSlots {
				t.Errorf("%s: %d to %d series per repository over %d repositories, want at most %d", c.name, fewest, most, len(perRepo), c.perRepo)
			}
			if shared > seriesShared {
				t.Errorf("%d series without a repository label, want at most %d", shared, seriesShared)
			}
			if len(histos) > 0 {
				t.Errorf("histograms labelled per repository: %v", histos)
			}
		})
	}
}

// scrape reads a registry's /metrics.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	return rec.Body.String()
}

// countSeries counts the rsbridge_* series of a scrape: per repository
// (a repository or repo label), the others, and the histogram families
// that carry a repository label.
func countSeries(t *testing.T, body string) (perRepo map[string]int, shared int, histos []string) {
	t.Helper()
	repoLabel := regexp.MustCompile(`\brepo(?:sitory)?="([^"]*)"`)
	perRepo = map[string]int{}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rsbridge_") {
			continue
		}
		m := repoLabel.FindStringSubmatch(line)
		if m == nil {
			shared++
			continue
		}
		perRepo[m[1]]++
		if name, _, _ := strings.Cut(line, "{"); strings.HasSuffix(name, "_bucket") && !seen[name] {
			seen[name] = true
			histos = append(histos, name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return perRepo, shared, histos
}

// everythingHappened: every kind of run ended with every outcome, failed
// with every cause, every verb was retried for every cause a retry can
// have, with every change and quarantine in both formats.
func everythingHappened(m *Metrics, repo string) {
	causes := []error{store.ErrDiskFull, &oaipmh.Error{Code: "badArgument"}, &oaipmh.HTTPError{Status: 503},
		&oaipmh.FormatError{Reason: "not XML"}, &oaipmh.GuardError{Reason: "loop"}, &net.OpError{Op: "dial", Err: errors.New("refused")},
		errors.New("something else")}
	for _, kind := range []string{harvest.KindHarvest, harvest.KindFullHarvest, harvest.KindReconcile} {
		m.RunEnded(repo, kind, time.Minute, time.Now(), nil)
		m.RunEnded(repo, kind, time.Minute, time.Now(), context.Canceled)
		for _, err := range causes {
			m.RunEnded(repo, kind, time.Minute, time.Now(), fmt.Errorf("run: %w", err))
		}
	}
	// The client retries network failures (a body that broke off is
	// "other") and HTTP statuses; bad_response is counted in for safety.
	retried := []error{causes[2], causes[3], causes[5], causes[6]}
	for _, verb := range []string{"Identify", "ListMetadataFormats", "ListSets", "ListRecords", "ListIdentifiers", "GetRecord"} {
		for _, err := range retried {
			m.Attempt(repo, oaipmh.Attempt{Verb: verb, Duration: time.Second, Err: err, Retry: true})
		}
	}
	for _, p := range []string{"oai_dc", "jpcoar_2.0"} {
		m.Committed(repo, p, harvest.Counts{Pages: 1, Records: 100, Created: 10, Updated: 5, Deleted: 1, Quarantined: 1})
	}
}

// typicalRuns: harvests and reconciliations that succeed, one harvest
// failed and one interrupted, retries of two causes.
func typicalRuns(m *Metrics, repo string) {
	for _, kind := range []string{harvest.KindHarvest, harvest.KindFullHarvest, harvest.KindReconcile} {
		m.RunEnded(repo, kind, time.Minute, time.Now(), nil)
	}
	m.RunEnded(repo, harvest.KindHarvest, time.Minute, time.Now(), &oaipmh.HTTPError{Status: 503})
	m.RunEnded(repo, harvest.KindHarvest, time.Minute, time.Now(), context.Canceled)
	for _, err := range []error{&oaipmh.HTTPError{Status: 503}, context.DeadlineExceeded} {
		m.Attempt(repo, oaipmh.Attempt{Verb: "ListRecords", Duration: time.Second, Err: err, Retry: true})
	}
	for _, p := range []string{"oai_dc", "jpcoar_2.0"} {
		m.Committed(repo, p, harvest.Counts{Pages: 1, Records: 100, Created: 10, Updated: 5, Deleted: 1})
	}
}
