package harvest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

func (f *deriveFixture) quality(prefix string) (store.Quality, map[string][]store.QualityIssue) {
	f.t.Helper()
	var q store.Quality
	issues := map[string][]store.QualityIssue{}
	err := f.db.View(context.Background(), func(snap *store.Snap) error {
		var err error
		if q, err = snap.Quality("demo", prefix); err != nil {
			return err
		}
		return snap.QualityIssues("demo", prefix, "", func(id string, list []store.QualityIssue) error {
			issues[id] = list
			return nil
		})
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return q, issues
}

// TestQualityChecks: after a harvest every junii2 record and every derived
// jpcoar_2.0 record is checked; the planted faults of the synthetic
// repository show with their codes and counts; fixing a record upstream
// clears its findings; a deleted record's findings go.
func TestQualityChecks(t *testing.T) {
	f := newDeriveFixture(t, 200)
	conv := Conversions(f.cfg.Crosswalk)[0]
	f.harvest(conv)
	q, issues := f.quality("junii2")
	t.Logf("junii2 quality: %+v", q)
	title := f.up.Identifier(29)
	// The synthetic repository's faults: items 29, 79, 129, 179 have no
	// title, 7, 57, 107, 157 an NIItype in the wrong case, and every sixth
	// an organisation as first creator.
	if q.Checked != 200 || q.Records["record-error"] != 8 || q.Codes["title-missing"] != 4 || q.Codes["niitype-unknown"] != 4 ||
		q.Codes["creator-no-comma"] != 33 || len(issues[title]) == 0 {
		t.Errorf("junii2 quality after the first harvest: %+v; issues of item 29: %v", q, issues[title])
	}
	dq, _ := f.quality("jpcoar_2.0")
	t.Logf("jpcoar_2.0 quality: %+v", dq)
	if dq.Checked != 196 || dq.Records["record-error"] != 0 {
		t.Errorf("derived jpcoar_2.0 quality: %+v", dq)
	}
	// Item 29 deleted upstream: its findings go, and the counts follow.
	f.up.Delete(29, f.clk.Add(time.Minute))
	f.clk.Add(time.Minute)
	f.harvest(conv)
	q2, issues := f.quality("junii2")
	if _, ok := issues[title]; ok || q2.Codes["title-missing"] != 3 || q2.Checked != 199 {
		t.Errorf("after deleting item 29: %+v, its issues %v", q2, issues[title])
	}
}

// TestCrosswalkOptionsReDerive: changing a crosswalk option (here
// description_as_abstract) converts every stored record again without
// harvesting, and every record whose bytes change is updated.
func TestCrosswalkOptionsReDerive(t *testing.T) {
	f := newDeriveFixture(t, 60)
	first := derived(t, f.harvest(Conversions(f.cfg.Crosswalk)[0]))
	f.cfg.Crosswalk.DescriptionAsAbstract = true
	conv := Conversions(f.cfg.Crosswalk)[0]
	again := derived(t, f.harvest(conv))
	if again.Updated != first.Created || again.Created+again.Deleted != 0 {
		t.Errorf("after description_as_abstract: %+v (first harvest created %d)", again, first.Created)
	}
	live, _, _ := f.state(0)
	for id, b := range live {
		if !strings.Contains(b, `descriptionType="Abstract"`) {
			t.Errorf("%s was not derived again: %.200s", id, b)
			break
		}
	}
}
