package bridge

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// unpacked is one dump package read back: its manifest and its files.
type unpacked struct {
	manifest *rsync.Document
	raw      []byte // manifest.xml as stored in the ZIP
	files    map[string][]byte
}

// unpack opens a package, checks that manifest.xml comes first, that every
// name is a safe relative path, and that the manifest names every file.
func (d *destination) unpack(u string, md *rsync.MD) unpacked {
	d.t.Helper()
	resp, b := d.get(u)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" || resp.Header.Get("Content-Length") != fmt.Sprint(len(b)) {
		d.t.Fatalf("GET %s: %d %v", u, resp.StatusCode, resp.Header)
	}
	sh, mh := sha256.Sum256(b), md5.Sum(b)
	if md.Length != int64(len(b)) || rsync.HashValue(md.Hash, "sha-256") != hex.EncodeToString(sh[:]) || rsync.HashValue(md.Hash, "md5") != hex.EncodeToString(mh[:]) {
		d.t.Fatalf("%s: %d bytes sha-256 %x, the dump says %q length %d", u, len(b), sh, md.Hash, md.Length)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		d.t.Fatalf("%s: %v", u, err)
	}
	out := unpacked{files: map[string][]byte{}}
	for i, f := range zr.File {
		name := f.Name
		if i == 0 && name != "manifest.xml" {
			d.t.Fatalf("%s: first entry %q, want manifest.xml", u, name)
		}
		if strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || path.Clean(name) != name || strings.HasPrefix(name, "../") ||
			strings.Contains(name, "/../") || !utf8.ValidString(name) || len(path.Base(name)) > 255 {
			d.t.Fatalf("%s: unsafe entry name %q", u, name)
		}
		if _, dup := out.files[name]; dup {
			d.t.Fatalf("%s: two entries named %q", u, name)
		}
		rc, err := f.Open()
		if err != nil {
			d.t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			d.t.Fatalf("%s: %s: %v", u, name, err)
		}
		out.files[name] = data
	}
	out.raw = out.files["manifest.xml"]
	if out.manifest, err = rsync.Parse(bytes.NewReader(out.raw)); err != nil {
		d.t.Fatalf("%s manifest: %v", u, err)
	}
	d.docs[u+"#manifest"] = out.raw
	return out
}

// dumpBaseline copies every resource set from its Resource Dump alone and
// returns the dump's snapshot time per set.
func (d *destination) dumpBaseline(base string) map[string]time.Time {
	d.t.Helper()
	at := map[string]time.Time{}
	for capURL, cl := range d.discover(base) {
		rdURL := capability(cl, rsync.ResourceDump)
		if rdURL == "" {
			d.t.Fatalf("%s lists no Resource Dump", capURL)
		}
		rd := d.doc(rdURL)
		if rd.MD.Capability != rsync.ResourceDump || rd.MD.At.IsZero() || rd.Link("up") != capURL {
			d.t.Fatalf("resource dump %s: %+v", rdURL, rd)
		}
		mirror := map[string][]byte{}
		for _, e := range rd.Entries {
			if e.MD == nil || e.MD.Type != "application/zip" || e.MD.At.IsZero() {
				d.t.Fatalf("package entry %+v", e)
			}
			pkg := d.unpack(e.Loc, e.MD)
			m := pkg.manifest
			if m.MD.Capability != rsync.ResourceDumpManifest || !m.MD.At.Equal(rd.MD.At) || m.Link("up") != capURL {
				d.t.Fatalf("manifest of %s: %+v", e.Loc, m.MD)
			}
			// The manifest copy beside the package is the same document.
			var contents string
			for _, l := range e.Links {
				if l.Rel == "contents" {
					contents = l.Href
				}
			}
			if _, copyBody := d.get(contents); !bytes.Equal(copyBody, pkg.raw) {
				d.t.Fatalf("%s: the manifest copy %s differs from manifest.xml", e.Loc, contents)
			}
			if len(pkg.files) != len(m.Entries)+1 {
				d.t.Fatalf("%s: %d files for %d manifest entries", e.Loc, len(pkg.files), len(m.Entries))
			}
			for _, me := range m.Entries {
				b, ok := pkg.files[strings.TrimPrefix(me.MD.Path, "/")]
				if !ok || !strings.HasPrefix(me.MD.Path, "/resources/") {
					d.t.Fatalf("%s: manifest path %q not in the package", e.Loc, me.MD.Path)
				}
				sh := sha256.Sum256(b)
				if rsync.HashValue(me.MD.Hash, "sha-256") != hex.EncodeToString(sh[:]) || me.MD.Length != int64(len(b)) {
					d.t.Fatalf("%s: %s: hash or length differs from the manifest", e.Loc, me.Loc)
				}
				mirror[me.Loc] = b
			}
		}
		d.mirror[capURL] = mirror
		at[capURL] = rd.MD.At
	}
	return at
}

// applyChangeDumps applies, in order, every Change Dump package of every set
// with changes after since[set] (and moves since forward).
func (d *destination) applyChangeDumps(base string, since map[string]time.Time) int {
	d.t.Helper()
	applied := 0
	for capURL, cl := range d.discover(base) {
		cdURL := capability(cl, rsync.ChangeDump)
		cd := d.doc(cdURL)
		if cd.MD.Capability != rsync.ChangeDump || cd.MD.From.IsZero() || cd.Link("up") != capURL {
			d.t.Fatalf("change dump %s: %+v", cdURL, cd)
		}
		mirror := d.mirror[capURL]
		var prevUntil time.Time
		for _, e := range cd.Entries {
			if e.MD.From.IsZero() || e.MD.Until.IsZero() || (!prevUntil.IsZero() && !e.MD.From.Equal(prevUntil)) {
				d.t.Fatalf("%s: packages must be closed, contiguous intervals: %+v after %v", cdURL, e.MD, prevUntil)
			}
			prevUntil = e.MD.Until
			if !e.MD.Until.After(since[capURL]) {
				continue
			}
			pkg := d.unpack(e.Loc, e.MD)
			m := pkg.manifest
			if m.MD.Capability != rsync.ChangeDumpManifest || !m.MD.From.Equal(e.MD.From) || !m.MD.Until.Equal(e.MD.Until) {
				d.t.Fatalf("change dump manifest %s: %+v", e.Loc, m.MD)
			}
			var prev time.Time
			for _, c := range m.Entries {
				dt := c.MD.DateTime
				if dt.Before(m.MD.From) || dt.After(m.MD.Until) || dt.Before(prev) {
					d.t.Fatalf("%s: change at %v outside [%v, %v] or out of order", e.Loc, dt, m.MD.From, m.MD.Until)
				}
				prev = dt
				if !dt.After(since[capURL]) {
					continue // already in the baseline
				}
				switch c.MD.Change {
				case "created", "updated":
					b, ok := pkg.files[strings.TrimPrefix(c.MD.Path, "/")]
					sh := sha256.Sum256(b)
					if !ok || rsync.HashValue(c.MD.Hash, "sha-256") != hex.EncodeToString(sh[:]) {
						d.t.Fatalf("%s: %s: the bytes of the change are missing or differ", e.Loc, c.Loc)
					}
					mirror[c.Loc] = b
				case "deleted":
					if c.MD.Path != "" {
						d.t.Fatalf("%s: a deletion with a path", e.Loc)
					}
					delete(mirror, c.Loc)
				}
				applied++
			}
			since[capURL] = e.MD.Until
		}
	}
	return applied
}

// TestDumpDestination: a destination takes its baseline from the Resource
// Dumps alone, then applies Change Dumps over several closed periods
// (updates, deletions, restores, set moves) and ends equal to the upstream;
// every manifest validates; a second destination that comes back after
// retention pruned the lists it would need is told so by the Change List
// Index and re-baselines from a new Resource Dump.
func TestDumpDestination(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 60, PageSize: 25, SetCount: 3, DeletedEvery: 9, Prefixes: []string{"oai_dc", "jpcoar_2.0"}}, 7, time.Hour)
	s.cfg.ResourceSync.Retention = 3 * time.Hour
	s.cfg.ResourceSync.DumpInterval = time.Minute
	s.harvest()
	dumper := s.dumper()
	ctx := context.Background()
	dumper.Work(ctx)
	if err := dumper.LastError(); err != nil {
		t.Fatal(err)
	}
	dest := newDestination(t)
	since := dest.dumpBaseline(s.srv.URL)
	dest.check(s)
	late := newDestination(t) // comes back much later
	lateSince := late.dumpBaseline(s.srv.URL)

	period := func(mutate func(at time.Time)) {
		at := s.advance(time.Minute)
		mutate(at)
		s.advance(time.Minute)
		s.harvest()
		s.advance(time.Hour) // the period's lists close
		dumper.Work(ctx)
		if err := dumper.LastError(); err != nil {
			t.Fatal(err)
		}
		if n := dest.applyChangeDumps(s.srv.URL, since); n == 0 {
			t.Fatal("no change applied")
		}
		dest.check(s)
	}
	period(func(at time.Time) {
		for i := range 10 {
			s.up.Update(i, at)
		}
		s.up.Add(at)
		s.up.Delete(20, at)
		s.up.SetSets(22, []string{"s2"}, at, true)     // set move
		s.up.SetSets(23, []string{"s0:sub"}, at, true) // into a child set
	})
	period(func(at time.Time) {
		s.up.Update(1, at) // updated again: the package holds the new bytes
		s.up.Restore(20, at)
		s.up.Delete(24, at)
	})
	period(func(at time.Time) {
		s.up.Update(1, at)
		s.up.Update(2, at)
		s.up.Delete(2, at)
		s.up.SetSets(22, []string{"s1"}, at, true) // moved again
		s.up.Update(22, at)
	})
	dest.validate()

	// Hours later, retention (3 h) has pruned the first lists: the late
	// destination, last synchronised at its baseline, sees that the history
	// now starts after it and re-baselines.
	s.advance(3 * time.Hour)
	dumper.Work(ctx)
	if err := dumper.LastError(); err != nil {
		t.Fatal(err)
	}
	for capURL, cl := range late.discover(s.srv.URL) {
		cli := late.doc(capability(cl, rsync.ChangeList))
		if !cli.MD.From.After(lateSince[capURL]) {
			t.Fatalf("%s: the Change List Index still starts at %v, before the late destination's %v", capURL, cli.MD.From, lateSince[capURL])
		}
	}
	if _, b := late.get(s.srv.URL + "/demo/oai_dc/all/about.html"); !bytes.Contains(b, []byte("must take a new baseline")) {
		t.Error("about.html does not say how far back history goes")
	}
	late.dumpBaseline(s.srv.URL)
	late.check(s)
	late.validate()
}

// TestPackageNames: any identifier gives a safe, distinct name inside a
// package.
func TestPackageNames(t *testing.T) {
	ids := []string{"../../etc/passwd", "/etc/passwd", "a/b", "a%2Fb", "a_b", "a b", ".", "..", "...", "C:\\x", "論文/1",
		strings.Repeat("x", 300), strings.Repeat("x", 300) + "y", strings.Repeat("/", 100), strings.Repeat("é", 100), "a\x01b"}
	seen := map[string]string{}
	for _, id := range ids {
		n := source.PackageName(id)
		if strings.ContainsAny(n, "/\\") || strings.Contains(n, "..") || strings.HasPrefix(n, ".") || len(n) > source.MaxPackageName || !utf8.ValidString(n) {
			t.Errorf("%q: unsafe name %q", id, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%q and %q both give %q", id, other, n)
		}
		seen[n] = id
	}
}

// TestHostileIdentifiersInDumps: records with hostile identifiers land in
// distinct, safe paths of the package, each holding its own bytes.
func TestHostileIdentifiersInDumps(t *testing.T) {
	ids := []string{"../../etc/passwd", "/abs/path", "a/b", "a%2Fb", ".", "..", strings.Repeat("long", 80), "日本語/論文 1"}
	srv, s, _ := limitsServer(t, 0, 4, 5*time.Second, ids)
	d := dumps.New(s.src, s.db, dumps.Options{Dir: s.dumpDir})
	rs := s.src.All(s.cfg().Repositories[0], "oai_dc")
	if err := d.BuildResourceDump(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	dest := newDestination(t)
	rd := dest.doc(strings.Replace(rs.ResourceDump(), s.src.Base(), srv.URL, 1))
	if len(rd.Entries) != 1 {
		t.Fatalf("%d packages", len(rd.Entries))
	}
	pkg := dest.unpack(strings.Replace(rd.Entries[0].Loc, s.src.Base(), srv.URL, 1), rd.Entries[0].MD)
	if len(pkg.manifest.Entries) != len(ids) || len(pkg.files) != len(ids)+1 {
		t.Fatalf("%d manifest entries, %d files for %d records", len(pkg.manifest.Entries), len(pkg.files), len(ids))
	}
	for _, e := range pkg.manifest.Entries {
		if !strings.HasPrefix(e.MD.Path, "/resources/") {
			t.Errorf("%s outside resources/: %s", e.Loc, e.MD.Path)
		}
	}
}

// TestDumpLifecycle: packages are served with Range and ETag; a rebuilt dump
// replaces the old one, whose packages stay downloadable for the grace
// period and are then removed; files no descriptor names (a build cut off by
// a crash) are removed at start.
func TestDumpLifecycle(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 30, PageSize: 10}, 50, time.Hour)
	s.cfg.ResourceSync.DumpInterval = time.Minute
	s.cfg.ResourceSync.DumpGrace = 10 * time.Minute
	s.harvest()
	d := s.dumper()
	ctx := context.Background()
	d.Work(ctx)
	dest := newDestination(t)
	rd := dest.doc(s.srv.URL + "/demo/oai_dc/all/resourcedump.xml")
	if len(rd.Entries) != 1 {
		t.Fatalf("%d packages", len(rd.Entries))
	}
	old := rd.Entries[0]
	req, _ := http.NewRequest("GET", old.Loc, nil)
	req.Header.Set("Range", "bytes=0-99")
	resp, err := dest.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || resp.Header.Get("Content-Length") != "100" {
		t.Errorf("Range: %d %v", resp.StatusCode, resp.Header)
	}
	etag := `"` + rsync.HashValue(old.MD.Hash, "sha-256") + `"`
	req, _ = http.NewRequest("GET", old.Loc, nil)
	req.Header.Set("If-None-Match", etag)
	if resp, err = dest.hc.Do(req); err != nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match %s: %v %v", etag, resp.StatusCode, err)
	}

	// A change, and the interval passed: a new dump; the old package stays
	// for the grace period.
	at := s.advance(2 * time.Minute)
	s.up.Update(3, at)
	s.advance(time.Minute)
	s.harvest()
	d.Work(ctx)
	rd = dest.doc(s.srv.URL + "/demo/oai_dc/all/resourcedump.xml")
	if rd.Entries[0].Loc == old.Loc {
		t.Fatal("the dump was not rebuilt")
	}
	if r, _ := dest.get(old.Loc); r.StatusCode != 200 {
		t.Errorf("superseded package within the grace period: %d", r.StatusCode)
	}
	oldFile := filepath.Join(s.dumpDir, "demo", "oai_dc", "all", path.Base(old.Loc))
	s.advance(11 * time.Minute)
	d.Work(ctx)
	if r, _ := dest.get(old.Loc); r.StatusCode != 404 {
		t.Errorf("superseded package after the grace period: %d", r.StatusCode)
	}
	if _, err := os.Stat(oldFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("superseded file still on disk: %v", err)
	}

	// Leftovers of an interrupted build go at start; listed files stay.
	dir := filepath.Join(s.dumpDir, "demo", "oai_dc", "all")
	for _, f := range []string{".tmp-123", "resourcedump-20261122T000000000Z-00001.zip"} {
		os.WriteFile(filepath.Join(dir, f), []byte("partial"), 0o644)
	}
	if err := d.RemoveOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || !slices.Contains(names, path.Base(rd.Entries[0].Loc)) {
		t.Errorf("after removing orphans: %v", names)
	}
	if r, _ := dest.get(rd.Entries[0].Loc); r.StatusCode != 200 {
		t.Errorf("current package: %d", r.StatusCode)
	}
}

// TestBeforePrune: each retention pass calls the hook (the notifier's
// KeepQuiet in serve) with its cutoff first; when the hook fails, the pass
// does not prune and says why.
func TestBeforePrune(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 20, PageSize: 10}, 7, time.Hour)
	s.cfg.ResourceSync.Retention = 3 * time.Hour
	s.harvest()
	s.advance(5 * time.Hour) // the first list closed long before the cutoff
	ctx := context.Background()
	var cutoffs []time.Time
	fail := errors.New("channel store unavailable")
	hook := func(_ context.Context, cutoff time.Time) error {
		cutoffs = append(cutoffs, cutoff)
		return fail
	}
	d := dumps.New(source.New(s.cfg, s.db), s.db, dumps.Options{Now: s.clock.Now, Dir: s.dumpDir, BeforePrune: hook})
	d.Work(ctx)
	if err := d.LastError(); !errors.Is(err, fail) || !strings.Contains(err.Error(), "before pruning") {
		t.Errorf("a failing hook: %v", err)
	}
	if want := s.clock.Now().Add(-3 * time.Hour); len(cutoffs) != 1 || !cutoffs[0].Equal(want) {
		t.Fatalf("the hook saw cutoffs %v, want one, %v", cutoffs, want)
	}
	var oldest time.Time
	s.db.View(ctx, func(snap *store.Snap) error {
		var err error
		oldest, err = snap.Oldest("demo", "oai_dc", store.AllSet)
		return err
	})
	if oldest.IsZero() {
		t.Fatal("the history is gone: the pass pruned although its hook failed")
	}
	hook = func(_ context.Context, cutoff time.Time) error { cutoffs = append(cutoffs, cutoff); return nil }
	d = dumps.New(source.New(s.cfg, s.db), s.db, dumps.Options{Now: s.clock.Now, Dir: s.dumpDir, BeforePrune: hook})
	d.Work(ctx)
	if err := d.LastError(); err != nil || len(cutoffs) != 2 {
		t.Fatalf("a hook that succeeds: %v, %d calls", err, len(cutoffs))
	}
	var after time.Time
	s.db.View(ctx, func(snap *store.Snap) error {
		var err error
		after, err = snap.Oldest("demo", "oai_dc", store.AllSet)
		return err
	})
	if !after.After(oldest) {
		t.Errorf("the history still starts at %v after a pass with a hook that succeeded (was %v)", after, oldest)
	}
}
