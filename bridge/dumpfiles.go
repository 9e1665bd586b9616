package bridge

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// The dump documents of a resource set and its package files:
//
//	{set}/resourcedump.xml          the Resource Dump (one snapshot's packages)
//	{set}/changedump.xml            the Change Dump (one package per closed Change List)
//	{set}/dump/{name}.zip           a package
//	{set}/dump/{name}-manifest.xml  the copy of a package's manifest

func (rs resourceSet) resourceDump() string        { return rs.path() + "/resourcedump.xml" }
func (rs resourceSet) changeDump() string          { return rs.path() + "/changedump.xml" }
func (rs resourceSet) dumpFile(file string) string { return rs.path() + "/dump/" + filepath.Base(file) }

func packageMD(p store.Package) rsync.MD {
	return rsync.MD{Type: "application/zip", Length: p.Length, HasLength: true, Hash: rsync.Hash(p.MD5, p.SHA256)}
}

// validDumpFile reports whether name is what a package or a manifest copy is
// called: resourcedump-{stamp}-{n}.zip, changedump-{list ID}.zip, or either
// with -manifest.xml instead of .zip. Nothing else is looked up on disk.
func validDumpFile(name string) bool {
	stem, ok := strings.CutSuffix(name, ".zip")
	if !ok {
		if stem, ok = strings.CutSuffix(name, "-manifest.xml"); !ok {
			return false
		}
	}
	rest, ok := strings.CutPrefix(stem, "resourcedump-")
	if !ok {
		if rest, ok = strings.CutPrefix(stem, "changedump-"); !ok {
			return false
		}
	}
	return rest != "" && !strings.ContainsFunc(rest, func(r rune) bool {
		return (r < '0' || r > '9') && r != 'T' && r != 'Z' && r != '-'
	})
}

func (s *Server) resourceDumpDoc(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	if !rs.dumped(s.cfg) {
		httpError(w, http.StatusNotFound, "this resource set has no dumps (resourcesync.dump_sets)")
		return
	}
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		dump, err := snap.ResourceDump(rs.repo.Name, rs.prefix, rs.set)
		if err != nil {
			return err
		}
		if dump == nil {
			w.Header().Set("Retry-After", "60")
			httpError(w, http.StatusNotFound, "no Resource Dump yet: it is built in the background after the first harvest; use "+rs.resourceList()+" meanwhile")
			return nil
		}
		if !begin("no-cache") {
			return nil
		}
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ResourceDump, At: dump.At, Completed: dump.Done}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
		for _, p := range dump.Packages {
			md := packageMD(p)
			md.At, md.Completed = p.At, p.Done
			d.Write(rsync.Entry{Loc: rs.dumpFile(p.File), LastMod: p.Built, MD: &md,
				Links: []rsync.Link{{Rel: "contents", Href: rs.dumpFile(p.Manifest), Type: xmlType}}})
		}
		return d.Close()
	})
}

func (s *Server) changeDumpDoc(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	if !rs.dumped(s.cfg) {
		httpError(w, http.StatusNotFound, "this resource set has no dumps (resourcesync.dump_sets)")
		return
	}
	now := s.now().UTC()
	s.snapshotDocument(w, r, func(snap *store.Snap, begin func(string) bool) error {
		var pkgs []store.Package
		if err := snap.ChangeDumps(rs.repo.Name, rs.prefix, rs.set, func(_ string, p store.Package) error {
			pkgs = append(pkgs, p)
			return nil
		}); err != nil {
			return err
		}
		from := now
		if len(pkgs) > 0 {
			from = pkgs[0].From
		} else if oldest, err := snap.Oldest(rs.repo.Name, rs.prefix, rs.set); err != nil {
			return err
		} else if !oldest.IsZero() {
			from = oldest
		}
		if !begin("no-cache") {
			return nil
		}
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ChangeDump, From: from}, rsync.Link{Rel: "up", Href: rs.capabilityList()})
		for _, p := range pkgs {
			md := packageMD(p)
			md.From, md.Until = p.From, p.Until
			d.Write(rsync.Entry{Loc: rs.dumpFile(p.File), LastMod: p.Built, MD: &md,
				Links: []rsync.Link{{Rel: "contents", Href: rs.dumpFile(p.Manifest), Type: xmlType}}})
		}
		return d.Close()
	})
}

// dumpFileHandler serves a package or a manifest copy that the set lists, or
// that was superseded less than dump_grace ago; with Content-Length, ETag
// (packages: their SHA-256), Last-Modified and Range (http.ServeContent).
func (s *Server) dumpFileHandler(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	name := vars(r)["file"]
	if !rs.dumped(s.cfg) || !validDumpFile(name) {
		httpError(w, http.StatusNotFound, "no such dump file")
		return
	}
	rel := filepath.Join(rs.setDir(), name)
	var etag string
	known := false
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		return snap.DumpFiles(func(f string) error {
			if filepath.Clean(f) == rel {
				known = true
			}
			return nil
		})
	})
	if err == nil && known {
		etag, err = s.packageETag(r, rs, rel)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !known {
		httpError(w, http.StatusNotFound, "no such dump file: see "+rs.resourceDump()+" and "+rs.changeDump())
		return
	}
	f, err := os.Open(filepath.Join(s.dumpDir, rel))
	if errors.Is(err, os.ErrNotExist) {
		httpError(w, http.StatusGone, "this package was superseded and removed; see "+rs.resourceDump())
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if filepath.Ext(name) == ".zip" {
		w.Header().Set("Content-Type", "application/zip")
	} else {
		w.Header().Set("Content-Type", xmlType)
	}
	if etag != "" {
		w.Header().Set("ETag", `"`+etag+`"`)
	}
	w.Header().Set("Cache-Control", "public, max-age=86400")
	releaseSlot(r) // a finished file: a client that stops reading holds no slot
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// packageETag finds the SHA-256 the store holds for a package file ("" for
// a manifest or a superseded package).
func (s *Server) packageETag(r *http.Request, rs resourceSet, rel string) (string, error) {
	var etag string
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		if dump, err := snap.ResourceDump(rs.repo.Name, rs.prefix, rs.set); err != nil {
			return err
		} else if dump != nil {
			for _, p := range dump.Packages {
				if filepath.Clean(p.File) == rel {
					etag = p.SHA256
				}
			}
		}
		return snap.ChangeDumps(rs.repo.Name, rs.prefix, rs.set, func(_ string, p store.Package) error {
			if filepath.Clean(p.File) == rel {
				etag = p.SHA256
			}
			return nil
		})
	})
	return etag, err
}

// historyNote says how far back a set's change history goes, for about.html.
func (s *Server) historyNote(snap *store.Snap, rs resourceSet) (string, error) {
	oldest, err := snap.Oldest(rs.repo.Name, rs.prefix, rs.set)
	if err != nil || oldest.IsZero() {
		return "", err
	}
	keep := "forever"
	if r := s.cfg.ResourceSync.Retention; r > 0 {
		keep = fmt.Sprintf("for %s", fmtDays(r))
	}
	return fmt.Sprintf("Change history is kept %s; it now begins at %s. A destination that last synchronised before then must take a new baseline from the Resource Dump or the Resource List.",
		keep, oldest.UTC().Format(time.RFC3339)), nil
}

func fmtDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
