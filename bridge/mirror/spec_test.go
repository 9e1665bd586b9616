package mirror

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hostTransport sends every request, whatever its host, to one handler.
type hostTransport struct{ h http.Handler }

func (t hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := &responseRecorder{header: http.Header{}, status: http.StatusOK}
	t.h.ServeHTTP(rec, r)
	return rec.result(r), nil
}

type responseRecorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *responseRecorder) Header() http.Header         { return r.header }
func (r *responseRecorder) WriteHeader(s int)           { r.status = s }
func (r *responseRecorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *responseRecorder) result(req *http.Request) *http.Response {
	return &http.Response{StatusCode: r.status, Header: r.header, Request: req,
		Body: readCloser{strings.NewReader(r.body.String())}, ContentLength: int64(r.body.Len())}
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }

// TestSpecificationExamples: the examples of the ResourceSync 1.1
// specification, served as example.com serves them (a Source Description
// naming two Capability Lists, one of which is not there; a Resource List
// with hashes; a Resource Dump whose packages are not there; a Change List
// Index whose lists are not there), with resources whose bytes do not match
// the example hashes. The mirror reads every document, reports what is
// missing, takes nothing that disagrees with the lists, and fails the run
// for the lists it could not read.
func TestSpecificationExamples(t *testing.T) {
	files := map[string]string{
		"/.well-known/resourcesync":  "resync__spec1.1_ex12_source-description.xml",
		"/capabilitylist1.xml":       "resync__spec1.1_ex13_capabilitylist.xml",
		"/dataset1/resourcelist.xml": "resync__spec1.1_ex14_resourcelist-md.xml",
		"/dataset1/resourcedump.xml": "resync__spec1.1_ex17_resourcedump.xml",
		"/dataset1/changelist.xml":   "resync__spec1.1_ex20_changelist-index.xml",
		"/20130101-changelist.xml":   "resync__spec1.1_ex19_changelist.xml",
	}
	var mu sync.Mutex
	var served []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		if name, ok := files[r.URL.Path]; ok {
			b, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", "application/xml")
			w.Write(b)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/res") {
			w.Write([]byte("not the bytes the example lists describe"))
			return
		}
		http.NotFound(w, r)
	})
	dir := t.TempDir()
	m, err := New(t.TempDir(), Options{Dir: dir, Transport: hostTransport{h}, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	err = m.Run(context.Background(), "http://example.com/")
	if err == nil {
		t.Fatal("a run over resources that disagree with their lists succeeded")
	}
	c := m.Counts()
	if c.Created != 0 || c.Superseded != 2 {
		t.Errorf("%+v; want nothing taken, the two listed resources not as listed", c)
	}
	for _, want := range []string{"/capabilitylist1.xml", "/capabilitylist2.xml", "/dataset1/resourcelist.xml", "/dataset1/resourcedump.xml", "/res1", "/res2"} {
		found := false
		for _, p := range served {
			found = found || p == want
		}
		if !found {
			t.Errorf("the mirror never asked for %s (asked for %v)", want, served)
		}
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("the copy holds %s", p)
		}
		return err
	})
}
