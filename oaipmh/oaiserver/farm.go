package oaiserver

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Farm serves many synthetic repositories by path: repository name answers
// at /{name}/oai, the way a hosting service (JAIRO Cloud, an EPrints farm)
// puts hundreds of repositories behind one host. A repository may be given
// a latency per list page, to stand for one that answers slowly. It is safe
// for concurrent use.
type Farm struct {
	mu    sync.RWMutex
	repos map[string]*farmRepo
}

type farmRepo struct {
	s     *Synthetic
	delay time.Duration // before every ListRecords and ListIdentifiers page
}

// NewFarm returns an empty farm.
func NewFarm() *Farm { return &Farm{repos: map[string]*farmRepo{}} }

// Add serves s at /{name}/oai; each list page waits pageDelay first (0:
// none). A name added again replaces the repository.
func (f *Farm) Add(name string, s *Synthetic, pageDelay time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repos[name] = &farmRepo{s: s, delay: pageDelay}
}

// Repository is the repository served under name, or nil.
func (f *Farm) Repository(name string) *Synthetic {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if r := f.repos[name]; r != nil {
		return r.s
	}
	return nil
}

// Len is the number of repositories served.
func (f *Farm) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.repos)
}

// ServeHTTP routes /{name}/oai to the repository; any other path is 404.
func (f *Farm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	f.mu.RLock()
	repo := f.repos[name]
	f.mu.RUnlock()
	if !ok || rest != "oai" || repo == nil {
		http.Error(w, "no repository at "+r.URL.Path+": use /{name}/oai", http.StatusNotFound)
		return
	}
	if repo.delay > 0 && isListPage(r) {
		t := time.NewTimer(repo.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	repo.s.ServeHTTP(w, r)
}

// isListPage reports a ListRecords or ListIdentifiers request, GET or POST
// (whose body it reads and puts back for the repository).
func isListPage(r *http.Request) bool {
	q := r.URL.RawQuery
	if r.Method == http.MethodPost {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		q = string(b)
	}
	args, _ := url.ParseQuery(q)
	v := args.Get("verb")
	return v == "ListRecords" || v == "ListIdentifiers"
}
