package bridge

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/store"
)

// The dump documents of a resource set and its package files:
//
//	{set}/resourcedump.xml          the Resource Dump (one snapshot's packages)
//	{set}/changedump.xml            the Change Dump (one package per closed Change List)
//	{set}/dump/{name}.zip           a package
//	{set}/dump/{name}-manifest.xml  the copy of a package's manifest

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

// dumpFile serves a package or a manifest copy that the set lists, or
// that was superseded less than dump_grace ago; with Content-Length, ETag
// (packages: their SHA-256), Last-Modified and Range (http.ServeContent).
func (s *Server) dumpFile(w http.ResponseWriter, r *http.Request, rs source.Set) {
	name := vars(r)["file"]
	if !s.src.Dumped(rs) || !validDumpFile(name) {
		s.fail(w, r, source.NotFound("no such dump file"))
		return
	}
	rel := filepath.Join(rs.DumpDir(), name)
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
		s.fail(w, r, source.NotFound("no such dump file: see %s and %s", rs.ResourceDump(), rs.ChangeDump()))
		return
	}
	f, err := os.Open(filepath.Join(s.dumpDir, rel))
	if errors.Is(err, os.ErrNotExist) {
		s.fail(w, r, source.Gone("this package was superseded and removed; see %s", rs.ResourceDump()))
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
		w.Header().Set("Content-Type", source.XMLType)
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
func (s *Server) packageETag(r *http.Request, rs source.Set, rel string) (string, error) {
	var etag string
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		if dump, err := snap.ResourceDump(rs.Repo.Name, rs.Prefix, rs.Spec); err != nil {
			return err
		} else if dump != nil {
			for _, p := range dump.Packages {
				if filepath.Clean(p.File) == rel {
					etag = p.SHA256
				}
			}
		}
		return snap.ChangeDumps(rs.Repo.Name, rs.Prefix, rs.Spec, func(_ string, p store.Package) error {
			if filepath.Clean(p.File) == rel {
				etag = p.SHA256
			}
			return nil
		})
	})
	return etag, err
}
