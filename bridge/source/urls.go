package bridge

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// setCatalog knows which resource sets a configuration publishes; the
// server, the dumper and the notifier each have one.
type setCatalog struct {
	cfg   *config.Config
	db    *store.DB
	base  string
	cache *publishedCache
}

func newSetCatalog(cfg *config.Config, db *store.DB, base string) setCatalog {
	return setCatalog{cfg: cfg, db: db, base: base, cache: &publishedCache{m: map[string]publishedSets{}}}
}

// publishedCache keeps each repository's published sets until the store's
// set lists change: with thousands of sets, every per-set request would
// otherwise read them all.
type publishedCache struct {
	mu sync.Mutex
	m  map[string]publishedSets
}

type publishedSets struct {
	gen   uint64
	specs []string
	index map[string]bool
}

// published lists the setSpecs that get their own resource set: the
// configured sets, or else the sets ListSets reported that match
// set_patterns (all without patterns), the first max_sets of them in
// setSpec order.
func (s setCatalog) published(ctx context.Context, repo config.Repository) ([]string, error) {
	p, err := s.lookup(ctx, repo)
	return p.specs, err
}

// isPublished reports whether spec is one of the repository's resource sets.
func (s setCatalog) isPublished(ctx context.Context, repo config.Repository, spec string) (bool, error) {
	p, err := s.lookup(ctx, repo)
	return p.index[spec], err
}

func (s setCatalog) lookup(ctx context.Context, repo config.Repository) (publishedSets, error) {
	gen := s.db.SetsGeneration()
	s.cache.mu.Lock()
	p, ok := s.cache.m[repo.Name]
	s.cache.mu.Unlock()
	if ok && p.gen == gen {
		return p, nil
	}
	p = publishedSets{gen: gen}
	if len(repo.Sets) > 0 {
		p.specs = repo.Sets
	} else {
		err := s.db.View(ctx, func(snap *store.Snap) error {
			sets, err := snap.Sets(repo.Name)
			for _, si := range sets {
				if matchesAny(repo.SetPatterns, si.Spec) {
					p.specs = append(p.specs, si.Spec)
				}
				if repo.MaxSets > 0 && len(p.specs) == repo.MaxSets {
					break
				}
			}
			return err
		})
		if err != nil {
			return publishedSets{}, err
		}
	}
	p.index = make(map[string]bool, len(p.specs))
	for _, spec := range p.specs {
		p.index[spec] = true
	}
	s.cache.mu.Lock()
	s.cache.m[repo.Name] = p
	s.cache.mu.Unlock()
	return p, nil
}

// matchesAny reports whether spec matches one of the patterns (path.Match);
// no patterns match everything.
func matchesAny(patterns []string, spec string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, spec); ok {
			return true
		}
	}
	return false
}

// resourceSets lists every resource set of every repository, in a stable order.
func (s setCatalog) resourceSets(ctx context.Context) ([]resourceSet, error) {
	var out []resourceSet
	for _, repo := range s.cfg.Repositories {
		specs, err := s.published(ctx, repo)
		if err != nil {
			return nil, err
		}
		for _, p := range repo.MetadataPrefixes {
			out = append(out, resourceSet{repo: repo, prefix: p, set: store.AllSet, base: s.base})
			for _, spec := range specs {
				out = append(out, resourceSet{repo: repo, prefix: p, set: spec, base: s.base})
			}
		}
	}
	return out, nil
}

// dumped reports whether the resource set gets Resource and Change Dumps.
func (rs resourceSet) dumped(cfg *config.Config) bool {
	switch cfg.ResourceSync.DumpSets {
	case config.DumpAll:
		return true
	case config.DumpAllRecords:
		return rs.set == store.AllSet
	}
	return false
}

// resourceSet is one (repository, metadata prefix, set) with its URLs. Set is
// store.AllSet for all records.
type resourceSet struct {
	repo   config.Repository
	prefix string
	set    string
	base   string
}

func (rs resourceSet) path() string {
	p := rs.base + "/" + url.PathEscape(rs.repo.Name) + "/" + url.PathEscape(rs.prefix)
	if rs.set == store.AllSet {
		return p + "/all"
	}
	return p + "/set/" + url.PathEscape(rs.set)
}

func (rs resourceSet) capabilityList() string { return rs.path() + "/capabilitylist.xml" }
func (rs resourceSet) about() string          { return rs.path() + "/about.html" }
func (rs resourceSet) resourceList() string   { return rs.path() + "/resourcelist.xml" }
func (rs resourceSet) changeListIndex() string {
	return rs.path() + "/changelist.xml"
}
func (rs resourceSet) changeList(id string) string { return rs.path() + "/changelist-" + id + ".xml" }

// resourceListPage is the URL of page n of a Resource List Index: the key
// range [start, end), with no start on the first page and no end on the last.
func (rs resourceSet) resourceListPage(n int, start, end string) string {
	return rangeURL(fmt.Sprintf("%s/resourcelist-%05d.xml", rs.path(), n), start, end)
}

// rangeURL is the URL of an index page that lists the key range
// [start, end): "" leaves that end open.
func rangeURL(u, start, end string) string {
	sep := "?"
	if start != "" {
		u += sep + "start=" + url.QueryEscape(start)
		sep = "&"
	}
	if end != "" {
		u += sep + "end=" + url.QueryEscape(end)
	}
	return u
}

// resourceURL is where rsbridge serves a record; identifiers are one escaped
// path segment, so slashes, spaces and non-ASCII survive.
func resourceURL(base, repo, prefix, id string) string {
	return base + "/" + url.PathEscape(repo) + "/" + url.PathEscape(prefix) + "/resource/" + segment(id)
}

// segment escapes a value as one path segment. "." and ".." are dot segments
// that clients and routers remove (RFC 3986 §5.2.4), so their dots are
// percent-encoded; every other value is url.PathEscape's.
func segment(v string) string {
	if v == "." || v == ".." {
		return strings.Repeat("%2E", len(v))
	}
	return url.PathEscape(v)
}

func (rs resourceSet) resource(id string) string {
	return resourceURL(rs.base, rs.repo.Name, rs.prefix, id)
}

func (s *Server) sourceDescriptionURL() string { return s.base + "/.well-known/resourcesync" }

func (rs resourceSet) resourceIn(prefix, id string) string {
	return resourceURL(rs.base, rs.repo.Name, prefix, id)
}

// getRecordURL returns a function building the upstream OAI-PMH GetRecord
// request of a record in one format; the fixed part is built once per document.
func getRecordURL(base, prefix string) func(id string) string {
	u, err := url.Parse(base)
	if err != nil {
		return func(string) string { return base }
	}
	q := u.Query()
	q.Set("verb", "GetRecord")
	q.Set("metadataPrefix", prefix)
	u.RawQuery = q.Encode()
	head := u.String() + "&identifier="
	return func(id string) string { return head + url.QueryEscape(id) }
}
