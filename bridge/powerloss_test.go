package bridge

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// snapshotDir copies a Badger directory as a power loss right now would leave
// it: the logs and the MANIFEST by content (they change in place), the
// immutable tables by hard link (so a compaction deleting one meanwhile
// cannot take it away). The caller holds every writer off.
func snapshotDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "rsbridge.lock" {
			continue
		}
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if strings.HasSuffix(name, ".sst") {
			if err := os.Link(from, to); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		in, err := os.Open(from)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		out, err := os.Create(to)
		if err == nil {
			_, err = io.Copy(out, in)
			out.Close()
		}
		in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// TestPowerLoss: with group commit, a power loss loses at most what was
// committed since the last sync. The store's directory is copied exactly as
// a sync left it, in the middle of a harvest (everything after that sync is
// "lost"); the copy opens, is consistent, and resuming the harvest on it ends
// equal to the upstream with exactly one created event per live record.
func TestPowerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("a 5,000-record harvest; skipped with -short")
	}
	e := newEnv(t, oaiserver.Options{Records: 5000, PageSize: 100, DeletedEvery: 25})
	dir, copyDir := t.TempDir(), filepath.Join(t.TempDir(), "after-power-loss")
	var syncs atomic.Int32
	var once sync.Once
	var copyErr error
	db, err := store.Open(store.Options{Dir: dir, SyncInterval: 30 * time.Millisecond, MinFree: 1, ChangeListLimit: 50000, ChangeListPeriod: 24 * time.Hour,
		AfterSync: func() {
			if syncs.Add(1) == 4 { // well into the harvest
				once.Do(func() { copyErr = snapshotDir(dir, copyDir) })
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	e.mustHarvest()
	db.Close()
	if copyErr != nil {
		t.Fatal(copyErr)
	}
	if syncs.Load() < 4 {
		t.Fatalf("only %d syncs during the harvest: the copy was not taken", syncs.Load())
	}

	// The power came back: the copy is all there is.
	e.db = openStore(t, store.Options{Dir: copyDir, MinFree: 1})
	cp, _ := peek(e.db).Checkpoint("demo", "oai_dc")
	ctr, _ := peek(e.db).Counter("demo", "oai_dc")
	if !cp.InProgress || cp.Token == "" || ctr.Live == 0 || ctr.Live >= 4800 {
		t.Fatalf("the copy is not mid-harvest: checkpoint %+v, counter %+v", cp, ctr)
	}
	t.Logf("after the power loss: %d pages and %d live records were durable", cp.SeqPages, ctr.Live)
	res, err := e.harvest(false)
	if err != nil || !res[0].Resumed {
		t.Fatalf("resume: %v %+v", err, res)
	}
	e.assertMirror("oai_dc")
	created := map[string]int{}
	for _, ev := range e.events("oai_dc", 0) {
		if ev.Change != store.Created {
			t.Fatalf("unexpected %s event", ev.Change)
		}
		created[ev.Identifier]++
	}
	for id, n := range created {
		if n != 1 {
			t.Errorf("%q: %d created events", id, n)
		}
	}
	if len(created) != 4800 {
		t.Errorf("%d records with a created event, want 4,800", len(created))
	}
}
