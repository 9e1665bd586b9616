package bridge

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// BenchmarkHarvestJunii2 harvests a junii2-only synthetic repository of
// 100,000 records (RSBRIDGE_BENCH_RECORDS to change it) into an on-disk
// store, without and with jpcoar_2.0 derived (bridge/crosswalk), and
// reports records/s of the whole run: harvest, then derivation.
//
//	go test -run '^$' -bench BenchmarkHarvestJunii2 -benchtime 1x -timeout 30m ./bridge/
func BenchmarkHarvestJunii2(b *testing.B) {
	defer runtimeDefaults()()
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("RSBRIDGE_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	up := oaiserver.New(oaiserver.Options{Records: n, PageSize: 100, Prefixes: []string{"junii2"}})
	srv := httptest.NewServer(up)
	defer srv.Close()
	for _, derive := range []string{"", "    derive: {jpcoar_2.0: junii2}\n"} {
		name := map[bool]string{false: "junii2", true: "junii2+derived-jpcoar_2.0"}[derive != ""]
		b.Run(name, func(b *testing.B) {
			cfg, err := config.ParseAndValidate(strings.NewReader(fmt.Sprintf("defaults:\n  delay: 0s\n"+
				"repositories:\n  - name: bench\n    base_url: %s/oai\n    metadata_prefixes: [junii2]\n%s", srv.URL, derive)))
			if err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				db, res, took := timedHarvest(b, cfg, int64(n))
				total += took
				for _, r := range res[1:] {
					b.Logf("%s: %d derived, %d quarantined", r.Prefix, r.Counts.Created, r.Counts.Quarantined)
				}
				db.View(context.Background(), func(snap *store.Snap) error {
					for _, p := range cfg.Repositories[0].MetadataPrefixes {
						q, err := snap.Quality("bench", p)
						if err != nil {
							return err
						}
						b.Logf("quality of %s: %d checked, records by level %v, by code %v", p, q.Checked, q.Records, q.Codes)
					}
					return nil
				})
				db.Close()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
		})
	}
}
