package crosswalk

import (
	"fmt"
	"testing"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// TestSyntheticRepositoryDerivesValid: every record of the synthetic junii2
// repository the end-to-end tests and benchmarks harvest (oaiserver) is
// derived XSD-valid, except the ones without a title, which are
// quarantined for it.
func TestSyntheticRepositoryDerivesValid(t *testing.T) {
	s := oaiserver.New(oaiserver.Options{Records: 200, Prefixes: []string{"junii2"}})
	docs := map[string][]byte{}
	for i := range 200 {
		it, ok := s.Item(i, "junii2")
		if !ok {
			t.Fatalf("item %d not served", i)
		}
		res, err := Junii2ToJPCOAR2(it.Metadata)
		if err != nil {
			t.Fatal(err)
		}
		if oaiserver.Junii2Fault(i) == "title" {
			if res.Record != nil || len(res.Quarantine) == 0 || res.Quarantine[0].Code != "title-missing" {
				t.Errorf("item %d has no title: record %v, quarantine %v", i, res.Record != nil, res.Quarantine)
			}
			continue
		}
		if res.Record == nil {
			t.Errorf("item %d not derived: %v", i, res.Quarantine)
			continue
		}
		docs[fmt.Sprintf("item-%03d.xml", i)] = res.Record
	}
	xmllintValidate(t, docs)
}

// TestFixtureQualityReport: the quality report of the real fixtures, as
// rsbridge's record checks count it (records with each code), for the
// junii2 records and for the JPCOAR records derived from them. The counts
// are pinned: a change of the checks shows here.
func TestFixtureQualityReport(t *testing.T) {
	junii2, jpcoar := map[string]int{}, map[string]int{}
	count := func(into map[string]int, issues []Issue) {
		seen := map[string]bool{}
		for _, i := range issues {
			if i.Level != LevelNormalised && !seen[i.Code] {
				seen[i.Code] = true
				into[string(i.Level)+" "+i.Code]++
			}
		}
	}
	fixtures := loadFixtures(t)
	for _, f := range fixtures {
		count(junii2, CheckJunii2(f.data))
		if res, err := Junii2ToJPCOAR2(f.data); err == nil && res.Record != nil {
			count(jpcoar, CheckJPCOAR(res.Record))
		}
	}
	t.Logf("%d fixture records; junii2 findings: %v; derived JPCOAR findings: %v", len(fixtures), junii2, jpcoar)
	wantJunii2 := "map[warning creator-no-comma:2 warning katakana-creator:2 warning legacy-dialect:3]"
	wantJPCOAR := "map[warning jcv-deprecated-scheme:9 warning jcv-source-issn:9 warning jcv-version-without-isversionof:8]"
	if len(fixtures) != 14 || fmt.Sprint(junii2) != wantJunii2 || fmt.Sprint(jpcoar) != wantJPCOAR {
		t.Errorf("%d fixtures (want 14); junii2 findings %v, want %s; JPCOAR %v, want %s", len(fixtures), junii2, wantJunii2, jpcoar, wantJPCOAR)
	}
}
