package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// TestSetPublishedAgainWithinGrace: a set unpublished (its objects
// scheduled for removal) and published again before the grace period ends
// keeps its objects: the removal is cancelled, and every link resolves.
func TestSetPublishedAgainWithinGrace(t *testing.T) {
	f, dir, root := dirFixture(t, oaiserver.Options{Records: 120, PageSize: 50, SetCount: 3}, "")
	base := f.base
	all := f.exporter(dir, Options{Grace: time.Hour})
	narrow := *f.cfg
	narrow.Repositories = []config.Repository{f.cfg.Repositories[0]}
	narrow.Repositories[0].Sets = []string{"set1"}
	one := New(source.New(&narrow, f.db), f.db, dir, Options{DumpDir: f.dumps, Now: f.clk.Now, TempDir: t.TempDir(), Grace: time.Hour})
	f.export(all)
	if _, err := one.Run(context.Background()); err != nil { // set0 and set2 unpublished
		t.Fatal(err)
	}
	f.clk.Add(10 * time.Minute)
	f.export(all) // published again
	f.clk.Add(2 * time.Hour)
	f.export(all) // past the grace period of the cancelled removals
	if broken := brokenLinks(root, base); len(broken) > 0 {
		t.Errorf("%d broken links, first: %s", len(broken), broken[0])
	}
	f.mirrorFrom(t, base, t.TempDir(), t.TempDir())
}

// TestCollidingIdentifiersInADirectory: "a" and "a/b" cannot both be files;
// the one the directory refuses is counted as unexportable and the export
// goes on, run after run.
func TestCollidingIdentifiersInADirectory(t *testing.T) {
	db, err := store.Open(store.Options{InMemory: true, ChangeListLimit: 50000, ChangeListPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := config.Default()
	cfg.BaseURL = "http://static.example"
	cfg.Repositories = []config.Repository{{Name: "r", BaseURL: "https://repo.example/oai"}}
	cfg.SetDefaults()
	b, err := db.NewBatch("r", "oai_dc")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{"oai:x:10.1/abc", "oai:x:10.1/abc/v2", "oai:x:plain"} {
		meta := []byte(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"/>`)
		sum := sha256.Sum256(meta)
		rec := &store.Record{Identifier: id, Datestamp: now, Length: int64(len(meta)), MD5: strings.Repeat("0", 32), SHA256: hex.EncodeToString(sum[:]), Modified: now, FirstSeen: now}
		if err := b.Apply(rec, meta, &store.Event{Identifier: id, Change: store.Created, SHA256: rec.SHA256, Length: rec.Length}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	dir, err := objstore.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := New(source.New(cfg, db), db, dir, Options{TempDir: t.TempDir()})
	rep, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unexportable != 3 { // one item's resource and its two maps
		t.Errorf("%d objects counted as unexportable, want 3: %+v", rep.Unexportable, rep)
	}
	if rep, err = e.Run(context.Background()); err != nil || rep.Objects != 0 {
		t.Errorf("the next run: %v, %d objects written, want none", err, rep.Objects)
	}
}

// TestConfigurationChangeExportsAgain: a change of what shapes the
// documents (here the Resource List page size) exports everything again,
// even with no change in the store.
func TestConfigurationChangeExportsAgain(t *testing.T) {
	f, dir, root := dirFixture(t, oaiserver.Options{Records: 150, PageSize: 50, SetCount: -1}, "")
	base := f.base
	f.export(f.exporter(dir, Options{}))
	smaller := *f.cfg
	smaller.ResourceSync.PageLimit = 40
	e := New(source.New(&smaller, f.db), f.db, dir, Options{DumpDir: f.dumps, Now: f.clk.Now, TempDir: t.TempDir()})
	rep, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Full) != 1 {
		t.Errorf("after page_limit changed: exported whole %v, want demo/oai_dc", rep.Full)
	}
	index, err := os.ReadFile(filepath.Join(root, "demo/oai_dc/all/resourcelist.xml"))
	if err != nil || !strings.Contains(string(index), "<sitemapindex") || strings.Count(string(index), "<loc>") < 4 {
		t.Errorf("the Resource List of 150 records with pages of 40 is not an index of 4 pages: %v\n%s", err, index)
	}
	if broken := brokenLinks(root, base); len(broken) > 0 {
		t.Errorf("%d broken links, first: %s", len(broken), broken[0])
	}
	if rep, err = e.Run(context.Background()); err != nil || len(rep.Full) > 0 || rep.Objects > 0 {
		t.Errorf("the run after: %v, whole %v, %d objects", err, rep.Full, rep.Objects)
	}
}
