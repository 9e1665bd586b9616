package export

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
)

// TestExportDirectory: a first export, a mirror in sync from it; changes,
// an incremental export writing only what changed, the mirror in sync
// again; a run with nothing new writes nothing.
func TestExportDirectory(t *testing.T) {
	f, st, _ := dirFixture(t, oaiserver.Options{Records: 300, PageSize: 50, SetCount: 3}, "")
	base := f.base
	f.dump()
	e := f.exporter(st, Options{})
	rep := f.export(e)
	t.Logf("first export: %+v", *rep)
	copyDir, stateDir := t.TempDir(), t.TempDir()
	f.mirrorFrom(t, base, copyDir, stateDir)

	rep = f.export(e)
	if rep.Objects != 0 || rep.Deleted != 0 {
		t.Errorf("a run with nothing new wrote %d objects and deleted %d", rep.Objects, rep.Deleted)
	}
	f.churn(20, rand.New(rand.NewPCG(1, 2)))
	rep = f.export(e)
	t.Logf("incremental export: %+v", *rep)
	f.mirrorFrom(t, base, copyDir, stateDir)
}

// TestExportAfterPrunedHistory: when retention pruned change events the
// export has not seen, it exports every record again and removes, by
// listing the target, the resources and maps of records deleted meanwhile;
// Change Lists pruned from the store are removed after the grace period.
func TestExportAfterPrunedHistory(t *testing.T) {
	f, st, root := dirFixture(t, oaiserver.Options{Records: 200, PageSize: 50, SetCount: 2}, "")
	base := f.base
	e := f.exporter(st, Options{Grace: time.Hour})
	f.export(e)
	listOf := func() string { // the oldest Change List of all records, as published
		b, err := os.ReadFile(filepath.Join(root, "demo/oai_dc/all/changelist.xml"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := rsync.Parse(bytes.NewReader(b))
		if err != nil || len(doc.Entries) == 0 {
			t.Fatalf("Change List Index: %v", err)
		}
		return doc.Entries[0].Loc
	}
	oldest := listOf()
	rng := rand.New(rand.NewPCG(9, 9))
	f.clk.Add(3 * time.Hour)
	f.churn(60, rng)
	// A later list, which stays (the newest always does) and keeps its
	// events: the churn before it is what goes.
	f.clk.Add(3 * time.Hour)
	f.churn(5, rng)
	f.clk.Add(3 * time.Hour)
	if _, err := f.db.Prune(context.Background(), "demo", "oai_dc", f.clk.Now(), f.clk.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	f.churn(10, rng)
	rep := f.export(e)
	if len(rep.Full) != 1 || rep.Deleted == 0 {
		t.Errorf("after pruned history: whole exports %v, %d removed; want demo/oai_dc exported whole and the deleted records' objects removed", rep.Full, rep.Deleted)
	}
	f.mirrorFrom(t, base, t.TempDir(), t.TempDir())
	if listOf() == oldest {
		t.Fatalf("the oldest Change List %s was not pruned", oldest)
	}
	k := strings.TrimPrefix(oldest, base+"/")
	if _, err := os.Stat(filepath.Join(root, k)); err != nil {
		t.Errorf("a pruned Change List went before its grace period: %v", err)
	}
	f.clk.Add(2 * time.Hour)
	f.export(e)
	if _, err := os.Stat(filepath.Join(root, k)); !os.IsNotExist(err) {
		t.Errorf("a pruned Change List is still published after its grace period: %v", err)
	}
}

// TestWholeExportResumes: a first export cut off after its position was
// committed resumes there: the next run writes only the records after it
// (and the lists), and the destination is in sync.
func TestWholeExportResumes(t *testing.T) {
	f, st, _ := dirFixture(t, oaiserver.Options{Records: 500, PageSize: 100, SetCount: -1}, "")
	base := f.base
	ctx, cancel := context.WithCancel(context.Background())
	flushes := 0
	e := f.exporter(st, Options{CheckpointEvery: 100, Published: func(stage string) {
		if stage == "resources" {
			if flushes++; flushes == 3 {
				cancel() // the third checkpoint's flush: 300 records are committed
			}
		}
	}})
	if _, err := e.Run(ctx); err == nil {
		t.Fatal("the cut-off run reported no error")
	}
	rep := f.export(e)
	// The 201 records from the position on, every map of the repository
	// (the map pass does not resume), the documents: not the 500 records.
	if rep.Objects > 201+2*500+50 || rep.Objects < 201+2*500 {
		t.Errorf("the resumed run wrote %d objects", rep.Objects)
	}
	t.Logf("resumed: %d objects", rep.Objects)
	f.mirrorFrom(t, base, t.TempDir(), t.TempDir())
}
