package bridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export"
	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// TestExportEquivalentToServe: for every resource set of a store with two
// formats, sets, creations, updates and deletions, the exported Resource
// Lists (through their index pages) and Change Lists hold the same entries,
// hashes, lengths and links as serve answers for the same store, and every
// exported resource has serve's bytes.
func TestExportEquivalentToServe(t *testing.T) {
	db := openStore(t, store.Options{InMemory: true, ChangeListPeriod: time.Hour})
	cfg := config.Default()
	cfg.BaseURL = "http://rs.example"
	cfg.ResourceSync.PageLimit = 70
	cfg.Repositories = []config.Repository{{Name: "r", BaseURL: "https://repo.example/oai", MetadataPrefixes: []string{"oai_dc", "jpcoar_2.0"}}}
	cfg.SetDefaults()
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for _, prefix := range cfg.Repositories[0].MetadataPrefixes {
		b, err := db.NewBatch("r", prefix)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			if prefix == "jpcoar_2.0" && i%7 == 0 {
				continue // some items in one format only
			}
			id := fmt.Sprintf("oai:r:%04d", i)
			if i%10 == 0 {
				id = fmt.Sprintf("oai:r:dept/%04d", i) // a slash, as DSpace handles have
			}
			meta := []byte(fmt.Sprintf(`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"><x>%s %d</x></oai_dc:dc>`, prefix, i))
			sum := sha256.Sum256(meta)
			rec := &store.Record{Identifier: id, Datestamp: now, Sets: []string{fmt.Sprintf("s%d", i%3)}, Length: int64(len(meta)),
				MD5: strings.Repeat("0", 32), SHA256: hex.EncodeToString(sum[:]), Modified: now, FirstSeen: now}
			change := store.Created
			if i%11 == 0 {
				rec.Deleted, change, meta = true, store.Deleted, nil
			}
			if err := b.Apply(rec, meta, &store.Event{Identifier: id, Change: change, SetsAfter: rec.Members(), SHA256: rec.SHA256, Length: rec.Length}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	dir, err := objstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	src := source.New(cfg, db)
	if _, err := export.New(src, db, dir, export.Options{TempDir: t.TempDir()}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := mustServer(t, cfg, db, ServerOptions{Source: src}).Handler()
	served := func(u string) []byte {
		req := httptest.NewRequest(http.MethodGet, u, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("serve GET %s: %d", u, w.Code)
		}
		return w.Body.Bytes()
	}
	exported := func(u string) []byte {
		rel := strings.TrimPrefix(u, cfg.BaseURL+"/")
		k, _, _ := strings.Cut(rel, "?")
		b, err := os.ReadFile(filepath.Join(root, unescape(t, k)))
		if err != nil {
			t.Fatalf("export of %s: %v", u, err)
		}
		return b
	}
	sets, err := src.Sets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range sets {
		for _, doc := range []string{rs.ResourceList(), rs.ChangeListIndex()} {
			s, e := entries(t, served, doc), entries(t, exported, doc)
			if !slices.Equal(s, e) {
				t.Errorf("%s: serve has %d entries, the export %d; first difference:\n%s", doc, len(s), len(e), firstDiff(s, e))
			}
			if len(s) == 0 && strings.HasSuffix(doc, "resourcelist.xml") {
				t.Errorf("%s lists nothing", doc)
			}
		}
	}
	n := 0
	for _, e := range entries(t, served, src.All(cfg.Repositories[0], "oai_dc").ResourceList()) {
		loc, _, _ := strings.Cut(e, " ")
		if !bytes.Equal(served(loc), exported(loc)) {
			t.Errorf("%s: the export's bytes differ from serve's", loc)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no resource compared")
	}
}

// entries reads a list through its index (if it is one) and returns its
// entries as text: loc, lastmod, metadata and links, in order.
func entries(t *testing.T, get func(string) []byte, u string) []string {
	t.Helper()
	doc, err := rsync.Parse(bytes.NewReader(get(u)))
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	var out []string
	for _, e := range doc.Entries {
		if doc.Index {
			out = append(out, entries(t, get, e.Loc)...)
			continue
		}
		var md rsync.MD
		if e.MD != nil {
			md = *e.MD
		}
		out = append(out, fmt.Sprintf("%s %s %+v %+v", e.Loc, e.LastMod, md, e.Links))
	}
	return out
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return "serve:  " + a[i] + "\nexport: " + b[i]
		}
	}
	return "(one is a prefix of the other)"
}

func unescape(t *testing.T, s string) string {
	t.Helper()
	u, err := url.PathUnescape(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
