package mirror

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// staticSite serves files from a directory, as a source that is a static
// web site would; the documents are written once its URL is known.
type staticSite struct {
	t   *testing.T
	dir string
	srv *httptest.Server
	mu  sync.Mutex
	hit map[string]int
}

func newStaticSite(t *testing.T) *staticSite {
	s := &staticSite{t: t, dir: t.TempDir(), hit: map[string]int{}}
	fs := http.FileServer(http.Dir(s.dir))
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hit[r.URL.Path]++
		s.mu.Unlock()
		fs.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *staticSite) put(name string, body []byte) {
	s.t.Helper()
	p := filepath.Join(s.dir, filepath.FromSlash(name))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, body, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// doc writes a document, with {base} replaced by the site's URL.
func (s *staticSite) doc(name, xml string) {
	s.put(name, []byte(strings.ReplaceAll(xml, "{base}", s.srv.URL)))
}

func (s *staticSite) hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hit[path]
}

func md5hex(b []byte) string { sum := md5.Sum(b); return hex.EncodeToString(sum[:]) }

const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`

// entry is a <url> of a list with length and md5.
func entry(loc string, body []byte, extra string) string {
	return fmt.Sprintf(`<url><loc>%s</loc><rs:md hash="md5:%s" length="%d"%s/></url>`, loc, md5hex(body), len(body), extra)
}

// TestStaticSourceWithoutDumpsOrIndexes: a Capability List with a plain
// Resource List and one Change List, found from robots.txt; hostile URIs
// land inside the copy; a resource whose bytes disagree with the list is
// not kept and the next run tries it again.
func TestStaticSourceWithoutDumpsOrIndexes(t *testing.T) {
	s := newStaticSite(t)
	a, b, bad := []byte("<a>one</a>"), []byte("<b>two</b>"), []byte("<c>three</c>")
	s.put("res/a.xml", a)
	s.put("res/b.xml", b)
	s.put("res/c.xml", bad)
	s.put("etc/passwd", []byte("root"))
	s.doc("robots.txt", "User-agent: *\nSitemap: {base}/rl.xml\n")
	s.doc("cl-cap.xml", `<urlset `+ns+`><rs:md capability="capabilitylist"/>
<url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`)
	s.doc("rl.xml", `<urlset `+ns+`><rs:ln rel="up" href="{base}/cl-cap.xml"/><rs:md capability="resourcelist" at="2026-11-01T00:00:00Z"/>`+
		entry("{base}/res/a.xml", a, "")+entry("{base}/res/b.xml", b, "")+
		entry("{base}/res/c.xml", []byte("something else"), "")+
		entry("{base}/res/../etc/passwd", []byte("root"), "")+`</urlset>`)
	s.doc("cl.xml", `<urlset `+ns+`><rs:ln rel="up" href="{base}/cl-cap.xml"/><rs:md capability="changelist" from="2026-11-01T00:00:00Z"/>`+
		entry("{base}/res/a.xml", a, ` change="updated" datetime="2026-11-02T00:00:00Z"`)+`</urlset>`)
	dir := t.TempDir()
	m, err := New(t.TempDir(), Options{Dir: dir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Run(context.Background(), s.srv.URL+"/robots.txt"); err != nil {
		t.Fatalf("a resource that disagrees with its list held up the run: %v", err)
	}
	if c := m.Counts(); c.Created != 3 || c.Superseded != 1 {
		t.Errorf("%+v; want a, b and the dot-dot URI taken, c not as listed", c)
	}
	host := strings.TrimPrefix(s.srv.URL, "http://")
	for rel, want := range map[string][]byte{"res/a.xml": a, "res/b.xml": b} {
		p, _ := Path(s.srv.URL + "/" + rel)
		if got, _ := os.ReadFile(filepath.Join(dir, p)); !bytes.Equal(got, want) {
			t.Errorf("%s: %q", rel, got)
		}
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return err
	})
	for _, f := range files {
		if strings.HasPrefix(f, "..") || strings.Contains(f, ".tmp-") || !strings.HasPrefix(f, seg(host)+string(filepath.Separator)) {
			t.Errorf("copy file %q outside the host's directory, or left over", f)
		}
	}
	if len(files) != 3 {
		t.Errorf("copy files %v: want a, b and the dot-dot URI's own file", files)
	}
	// A later run fetches nothing again; an audit names what is missing.
	m.Run(context.Background(), s.srv.URL+"/robots.txt")
	if s.hits("/res/c.xml") != 1 || s.hits("/res/b.xml") != 1 {
		t.Errorf("second run: c.xml fetched %d times, b.xml %d; want 1 and 1", s.hits("/res/c.xml"), s.hits("/res/b.xml"))
	}
	rep, err := m.Audit(context.Background(), s.srv.URL+"/robots.txt", false)
	if err != nil || rep.Missing != 1 || rep.Good != 3 || !strings.Contains(strings.Join(rep.Examples, " "), "/res/c.xml") {
		t.Errorf("audit: %+v %v; want c.xml missing", rep, err)
	}
}

// TestDumpThatDisagreesWithItsManifest: files whose bytes disagree with
// manifest.xml, files it does not name and unsafe names are not taken from
// the package; the Resource List fills them in by GET.
func TestDumpThatDisagreesWithItsManifest(t *testing.T) {
	s := newStaticSite(t)
	good, wrong := []byte("<good/>"), []byte("<wrong/>")
	s.put("r/good.xml", good)
	s.put("r/wrong.xml", wrong)
	var pkg bytes.Buffer
	zw := zip.NewWriter(&pkg)
	add := func(name string, body []byte) { w, _ := zw.Create(name); w.Write(body) }
	manifest := `<urlset ` + ns + `><rs:md capability="resourcedump-manifest" at="2026-11-01T00:00:00Z"/>` +
		fmt.Sprintf(`<url><loc>{base}/r/good.xml</loc><rs:md path="/good" length="%d" hash="md5:%s"/></url>`, len(good), md5hex(good)) +
		fmt.Sprintf(`<url><loc>{base}/r/wrong.xml</loc><rs:md path="/wrong" length="%d" hash="md5:%s"/></url>`, len(wrong), md5hex(wrong)) +
		`<url><loc>{base}/r/evil.xml</loc><rs:md path="/../../evil"/></url></urlset>`
	add("manifest.xml", []byte(strings.ReplaceAll(manifest, "{base}", s.srv.URL)))
	add("good", good)
	add("wrong", []byte("<not what the manifest says/>"))
	add("../../evil", []byte("evil"))
	add("unlisted", []byte("?"))
	zw.Close()
	s.put("dump/p1.zip", pkg.Bytes())
	s.doc("cap.xml", `<urlset `+ns+`><rs:md capability="capabilitylist"/>
<url><loc>{base}/rd.xml</loc><rs:md capability="resourcedump"/></url>
<url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`)
	s.doc("rd.xml", `<urlset `+ns+`><rs:md capability="resourcedump" at="2026-11-01T00:00:00Z"/><url><loc>{base}/dump/p1.zip</loc></url></urlset>`)
	s.doc("rl.xml", `<urlset `+ns+`><rs:md capability="resourcelist" at="2026-11-01T00:00:00Z"/>`+entry("{base}/r/good.xml", good, "")+entry("{base}/r/wrong.xml", wrong, "")+`</urlset>`)
	dir := t.TempDir()
	m, err := New(t.TempDir(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Run(context.Background(), s.srv.URL+"/cap.xml"); err != nil {
		t.Fatal(err)
	}
	c := m.Counts()
	if c.FromDump != 1 || c.Fetched != 1 || s.hits("/r/good.xml") != 0 || s.hits("/r/wrong.xml") != 1 {
		t.Errorf("%+v; want good from the dump, wrong by GET", c)
	}
	for rel, want := range map[string][]byte{"r/good.xml": good, "r/wrong.xml": wrong} {
		p, _ := Path(s.srv.URL + "/" + rel)
		if got, _ := os.ReadFile(filepath.Join(dir, p)); !bytes.Equal(got, want) {
			t.Errorf("%s: %q", rel, got)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
		t.Error("a package name with ../ wrote outside the copy")
	}
}

// TestOpenListAskedWithItsETag: once the open Change List is applied
// whole, the next run asks for it with If-None-Match, and a 304 costs
// nothing more.
func TestOpenListAskedWithItsETag(t *testing.T) {
	s := newStaticSite(t)
	a := []byte("<a/>")
	s.put("r/a.xml", a)
	s.doc("cap.xml", `<urlset `+ns+`><rs:md capability="capabilitylist"/>
<url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>{base}/cli.xml</loc><rs:md capability="changelist"/></url></urlset>`)
	s.doc("rl.xml", `<urlset `+ns+`><rs:md capability="resourcelist" at="2026-11-01T00:00:00Z"/>`+entry("{base}/r/a.xml", a, "")+`</urlset>`)
	s.doc("cli.xml", `<sitemapindex `+ns+`><rs:md capability="changelist" from="2026-11-01T00:00:00Z"/>
<sitemap><loc>{base}/open.xml</loc><rs:md from="2026-11-01T00:00:00Z"/></sitemap></sitemapindex>`)
	s.doc("open.xml", `<urlset `+ns+`><rs:md capability="changelist" from="2026-11-01T00:00:00Z"/>`+
		entry("{base}/r/a.xml", a, ` change="created" datetime="2026-11-01T00:00:01Z"`)+`</urlset>`)
	var notModified, conditional int
	inner := s.srv.Config.Handler
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/open.xml" {
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") != "" {
				conditional++
				if r.Header.Get("If-None-Match") == `"v1"` {
					notModified++
					w.WriteHeader(http.StatusNotModified)
					return
				}
			}
		}
		inner.ServeHTTP(w, r)
	})
	m, err := New(t.TempDir(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for range 3 {
		if err := m.Run(context.Background(), s.srv.URL+"/cap.xml"); err != nil {
			t.Fatal(err)
		}
	}
	if conditional != 2 || notModified != 2 || s.hits("/r/a.xml") != 1 {
		t.Errorf("%d conditional requests, %d answered 304, a.xml fetched %d times; want 2, 2, 1", conditional, notModified, s.hits("/r/a.xml"))
	}
}
