package dumps

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// harvested is a store holding one harvest of a synthetic repository.
func harvested(t *testing.T, records int, clk *oaiserver.Clock) (*config.Config, *store.DB) {
	t.Helper()
	up := httptest.NewServer(oaiserver.New(oaiserver.Options{Records: records, PageSize: 10, Now: clk.Now}))
	t.Cleanup(up.Close)
	cfg, err := config.ParseAndValidate(strings.NewReader(fmt.Sprintf(
		"base_url: http://rs.test\ndefaults:\n  delay: 0s\nresourcesync:\n  changelist_period: 1h\n  dump_sets: all-records\nrepositories:\n  - name: demo\n    base_url: %s/oai\n", up.URL)))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(store.Options{InMemory: true, Now: clk.Now, ChangeListLimit: 1000, ChangeListPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Harvest(context.Background(), harvest.HarvestOptions{}); err != nil {
		t.Fatal(err)
	}
	return cfg, db
}

// readPackage opens a package and checks its layout: manifest.xml first,
// then one file per manifest entry at the entry's path, with the entry's
// hash and length. It returns the manifest.
func readPackage(t *testing.T, file string) *rsync.Document {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) == 0 || zr.File[0].Name != "manifest.xml" {
		t.Fatalf("%s: manifest.xml is not first", file)
	}
	read := func(f *zip.File) []byte {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	m, err := rsync.Parse(bytes.NewReader(read(zr.File[0])))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File[1:] {
		files["/"+f.Name] = read(f)
	}
	for _, e := range m.Entries {
		if e.MD.Change == store.Deleted.String() {
			continue
		}
		b, ok := files[e.MD.Path]
		sum := sha256.Sum256(b)
		if !ok || int64(len(b)) != e.MD.Length || !strings.Contains(e.MD.Hash, "sha-256:"+hex.EncodeToString(sum[:])) {
			t.Errorf("%s: entry %s: file %v, %d bytes, hash %s", file, e.Loc, ok, len(b), e.MD.Hash)
		}
	}
	return m
}

// TestBuildDumps: a Resource Dump holds every live record in packages cut
// at dump_package_bytes, each listed by the source's Resource Dump; a
// closed Change List gets one Change Dump package with every change.
func TestBuildDumps(t *testing.T) {
	clk := oaiserver.NewClock(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))
	cfg, db := harvested(t, 30, clk)
	cfg.ResourceSync.DumpPackageBytes = 20 << 10 // about ten 2 KB records a package
	src := source.New(cfg, db)
	dir := t.TempDir()
	d := New(src, db, Options{Dir: dir, Now: clk.Now})
	rs := src.All(cfg.Repositories[0], "oai_dc")
	ctx := context.Background()
	if err := d.BuildResourceDump(ctx, rs); err != nil {
		t.Fatal(err)
	}
	var listed *rsync.Document
	err := db.View(ctx, func(snap *store.Snap) error {
		doc, err := src.ResourceDump(snap, rs)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := doc.Write(&b); err != nil {
			return err
		}
		listed, err = rsync.Parse(&b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Entries) < 2 {
		t.Fatalf("%d packages for 30 records of about 2 KB at 20 KB each", len(listed.Entries))
	}
	records := 0
	for _, e := range listed.Entries {
		records += len(readPackage(t, filepath.Join(dir, rs.DumpDir(), filepath.Base(e.Loc))).Entries)
	}
	if records != 30 {
		t.Errorf("the packages hold %d records, want 30", records)
	}

	// The first Change List closes when its hour has passed.
	clk.Add(2 * time.Hour)
	d.Work(ctx)
	if err := d.LastError(); err != nil {
		t.Fatal(err)
	}
	var pkgs []store.Package
	db.View(ctx, func(snap *store.Snap) error {
		return snap.ChangeDumps(rs.Repo.Name, rs.Prefix, rs.Spec, func(_ string, p store.Package) error { pkgs = append(pkgs, p); return nil })
	})
	if len(pkgs) != 1 {
		t.Fatalf("%d Change Dump packages after the list closed, want 1", len(pkgs))
	}
	m := readPackage(t, filepath.Join(dir, pkgs[0].File))
	if len(m.Entries) != 30 || pkgs[0].Entries != 30 {
		t.Errorf("change dump: %d manifest entries, %d counted, want 30", len(m.Entries), pkgs[0].Entries)
	}
}
