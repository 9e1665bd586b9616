// Package source is the ResourceSync source rsbridge publishes, as a model
// with no HTTP: its resource sets, the one catalog of which sets exist, the
// URL scheme, the entry builders, and a renderer for every document, each
// writing to an io.Writer from one store snapshot (resourcesync.md).
//
// The HTTP server, the dump builder, the notifier and a static export are
// its callers; each asks for a Doc and decides how to deliver it.
package source

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// XMLType is the media type of every document and resource rsbridge serves.
const XMLType = "application/xml"

// Source is one configuration's ResourceSync source over an open store.
type Source struct {
	cfg       *config.Config
	db        *store.DB
	base      string // BaseURL without a trailing slash
	pageLimit int    // entries per Resource List page (resourcesync.page_limit)
	sdLimit   int    // Capability Lists in one Source Description
	catalog   *catalog
	about     *template.Template
}

// New builds the source of a configuration. It is the one place the set
// catalog is built: every caller shares it and its cache.
func New(cfg *config.Config, db *store.DB) *Source {
	base := strings.TrimRight(cfg.BaseURL, "/")
	return &Source{cfg: cfg, db: db, base: base, pageLimit: cfg.ResourceSync.PageLimit, sdLimit: rsync.MaxEntries,
		catalog: newCatalog(cfg, db), about: parseAbout()}
}

// Config is the configuration the source publishes.
func (s *Source) Config() *config.Config { return s.cfg }

// Base is the base URL without a trailing slash.
func (s *Source) Base() string { return s.base }

// PageLimit is the most entries one Resource List page holds.
func (s *Source) PageLimit() int { return s.pageLimit }

// LimitSourceDescription lowers how many Capability Lists one Source
// Description holds before it becomes an index (tests use it to reach the
// index without 50,000 sets).
func (s *Source) LimitSourceDescription(n int) { s.sdLimit = max(n, 1) }

// Set is one resource set: (repository, metadata prefix, OAI set), with
// Spec store.AllSet for all the records of the format.
type Set struct {
	Repo   config.Repository
	Prefix string
	Spec   string
	base   string
}

// Set returns the resource set of a repository, format and setSpec
// (store.AllSet: all records) without asking whether it is published.
func (s *Source) Set(repo config.Repository, prefix, spec string) Set {
	return Set{Repo: repo, Prefix: prefix, Spec: spec, base: s.base}
}

// All is the resource set of all the records of one format.
func (s *Source) All(repo config.Repository, prefix string) Set {
	return s.Set(repo, prefix, store.AllSet)
}

// Find resolves a resource set a request names: the repository and format
// must be configured, and a setSpec (perSet) published.
func (s *Source) Find(ctx context.Context, repoName, prefix string, perSet bool, spec string) (Set, error) {
	repo, ok := s.cfg.Repository(repoName)
	if !ok || !slices.Contains(repo.MetadataPrefixes, prefix) {
		return Set{}, NotFound("no repository %q with metadata prefix %q", repoName, prefix)
	}
	if !perSet {
		return s.All(repo, prefix), nil
	}
	ok, err := s.IsPublished(ctx, repo, spec)
	if err != nil {
		return Set{}, err
	}
	if !ok {
		return Set{}, NotFound("repository %q publishes no set %q", repo.Name, spec)
	}
	return s.Set(repo, prefix, spec), nil
}

// Format resolves a repository and one of its formats.
func (s *Source) Format(repoName, prefix string) (config.Repository, error) {
	repo, ok := s.cfg.Repository(repoName)
	if !ok || !slices.Contains(repo.MetadataPrefixes, prefix) {
		return config.Repository{}, NotFound("no repository %q with metadata prefix %q", repoName, prefix)
	}
	return repo, nil
}

// Sets lists every resource set of every repository in a stable order:
// configuration order, then format, then all records before each
// published set.
func (s *Source) Sets(ctx context.Context) ([]Set, error) {
	var out []Set
	for _, repo := range s.cfg.Repositories {
		specs, err := s.Published(ctx, repo)
		if err != nil {
			return nil, err
		}
		for _, p := range repo.MetadataPrefixes {
			out = append(out, s.All(repo, p))
			for _, spec := range specs {
				out = append(out, s.Set(repo, p, spec))
			}
		}
	}
	return out, nil
}

// Published lists the setSpecs of a repository that get their own resource
// set (catalog.go).
func (s *Source) Published(ctx context.Context, repo config.Repository) ([]string, error) {
	p, err := s.catalog.lookup(ctx, repo)
	return p.specs, err
}

// IsPublished reports whether spec is one of the repository's resource sets.
func (s *Source) IsPublished(ctx context.Context, repo config.Repository, spec string) (bool, error) {
	p, err := s.catalog.lookup(ctx, repo)
	return p.index[spec], err
}

// Dumped reports whether the resource set gets Resource and Change Dumps
// (resourcesync.dump_sets).
func (s *Source) Dumped(rs Set) bool {
	switch s.cfg.ResourceSync.DumpSets {
	case config.DumpAll:
		return true
	case config.DumpAllRecords:
		return rs.Spec == store.AllSet
	}
	return false
}

// Doc is a document planned on one store snapshot, ready to render from
// it. Key identifies its content: two Docs with one key render the same
// bytes ("" = do not reuse). Final documents never change again (a closed
// Change List). Write must run before the snapshot ends.
type Doc struct {
	Type     string // media type; "" is XMLType
	Key      string
	Final    bool
	Modified time.Time
	Write    func(io.Writer) error
}

// Code is what kind of request a source cannot answer.
type Code int

const (
	CodeNotFound Code = iota + 1 // nothing is published there
	CodeGone                     // it was, and was deleted
	CodeConflict                 // the request is stale: start again where the message says
	CodeInvalid                  // the request is malformed
	CodeNotYet                   // it will exist: retry after RetryAfter
)

// Error is a request the source cannot answer; Msg says what to do.
type Error struct {
	Code       Code
	Msg        string
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Msg }

func newError(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Msg: fmt.Sprintf(format, args...)}
}

// NotFound is an Error of CodeNotFound.
func NotFound(format string, args ...any) error { return newError(CodeNotFound, format, args...) }

// Gone is an Error of CodeGone.
func Gone(format string, args ...any) error { return newError(CodeGone, format, args...) }

// Invalid is an Error of CodeInvalid.
func Invalid(format string, args ...any) error { return newError(CodeInvalid, format, args...) }

func conflict(format string, args ...any) error { return newError(CodeConflict, format, args...) }
