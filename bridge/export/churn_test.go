package export

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/mirror"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
)

var (
	churnSeed   = flag.Uint64("export.seed", 0, "TestExportChurn's seed (0: from the clock); the log gives the one used")
	churnRounds = flag.Int("export.rounds", 8, "TestExportChurn's rounds of changes, harvest and export")
)

// brokenLinks walks the exported tree in root from the Source Description
// as a destination would, and lists every link to an object that is not
// there: documents, resources, resource maps (rel collection), alternates,
// about pages, dump packages and manifests. Change Lists, notifications and
// dump manifests describe the past, so only their up and index links must
// resolve.
func brokenLinks(root, base string) []string {
	var out []string
	seen := map[string]bool{}
	queue := []string{".well-known/resourcesync"}
	exists := func(from, u string) bool {
		u, _, _ = strings.Cut(u, "#")
		rel, ok := strings.CutPrefix(u, base+"/")
		if !ok {
			return true // outside the export (upstream via links, landing pages)
		}
		k, err := url.PathUnescape(rel)
		if err != nil {
			out = append(out, fmt.Sprintf("%s links %s: %v", from, u, err))
			return false
		}
		if _, err := os.Stat(filepath.Join(root, k)); err != nil {
			out = append(out, fmt.Sprintf("%s links %s, which is not published", from, u))
			return false
		}
		return true
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		if seen[k] {
			continue
		}
		seen[k] = true
		b, err := os.ReadFile(filepath.Join(root, k))
		if k == ".well-known/resourcesync" && os.IsNotExist(err) {
			return nil // nothing published yet
		}
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		doc, err := rsync.Parse(bytes.NewReader(b))
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		past := doc.MD.Capability == rsync.ChangeList && !doc.Index || doc.MD.Capability == "change-notification" ||
			doc.MD.Capability == rsync.ResourceDumpManifest || doc.MD.Capability == rsync.ChangeDumpManifest
		for _, l := range doc.Links {
			if l.Rel == "up" || l.Rel == "index" || !past {
				exists(k, l.Href)
			}
		}
		if past {
			continue
		}
		for _, e := range doc.Entries {
			if !exists(k, e.Loc) {
				continue
			}
			for _, l := range e.Links {
				if l.Rel != "via" && l.Rel != "describes" && l.Rel != "hub" {
					exists(k, l.Href)
				}
			}
			if rel, ok := strings.CutPrefix(e.Loc, base+"/"); ok && (strings.HasSuffix(rel, ".xml") || doc.MD.Capability == rsync.Description) {
				if d, err := url.PathUnescape(rel); err == nil && !strings.Contains(d, "/resource/") {
					queue = append(queue, d)
				}
			}
		}
	}
	return out
}

// TestExportChurn: while the upstream changes, harvests run and the export
// runs again and again (small Resource List pages, so pages split; hours
// pass, so lists close; dumps are rebuilt), every stage of every run leaves
// a tree whose every link resolves, and a destination reading it all the
// while never fails. At the end the destination is in sync.
func TestExportChurn(t *testing.T) {
	seed := *churnSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-export.seed to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	f, st, root := dirFixture(t, oaiserver.Options{Records: 400, PageSize: 50, SetCount: 3, Prefixes: []string{"oai_dc", "jpcoar_2.0"}}, "  page_limit: 60\n")
	base := f.base
	checks := 0
	e := f.exporter(st, Options{Grace: time.Hour, Published: func(stage string) {
		checks++
		for _, b := range brokenLinks(root, base) {
			t.Errorf("after stage %q: %s", stage, b)
		}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var reads int
	wg.Go(func() { // a destination reading all the while
		copyDir, stateDir := t.TempDir(), t.TempDir()
		for ctx.Err() == nil {
			m, err := mirror.New(stateDir, mirror.Options{Dir: copyDir, Delete: true, Force: true})
			if err != nil {
				t.Error(err)
				return
			}
			if err := m.Run(ctx, base+"/.well-known/resourcesync"); err != nil && ctx.Err() == nil && !strings.Contains(err.Error(), "404") {
				t.Errorf("destination reading during churn: %v", err)
			}
			m.Close()
			reads++
		}
	})
	for round := range *churnRounds {
		f.churn(5+rng.IntN(60), rng)
		if rng.IntN(4) == 0 {
			f.clk.Add(time.Duration(rng.IntN(3)) * time.Hour)
			f.dump()
		}
		f.export(e)
		if t.Failed() {
			t.Fatalf("round %d failed", round)
		}
	}
	cancel()
	wg.Wait()
	t.Logf("%d link checks, %d destination reads during churn", checks, reads)
	f.mirrorFrom(t, base, t.TempDir(), t.TempDir())
}
