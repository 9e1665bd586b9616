package export

import (
	"math/rand/v2"
	"testing"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// TestExportDirectory: a first export, a mirror in sync from it; changes,
// an incremental export writing only what changed, the mirror in sync
// again; a run with nothing new writes nothing.
func TestExportDirectory(t *testing.T) {
	root := t.TempDir()
	base := fileServer(t, root)
	f := newFixture(t, base, oaiserver.Options{Records: 300, PageSize: 50, SetCount: 3}, "")
	f.dump()
	st, err := objstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
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
