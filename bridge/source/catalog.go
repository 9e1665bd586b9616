package source

import (
	"context"
	"path"
	"sync"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// catalog knows which sets each repository publishes, and keeps the answer
// until the store's set lists change: with thousands of sets, every per-set
// request would otherwise read them all.
type catalog struct {
	cfg *config.Config
	db  *store.DB
	mu  sync.Mutex
	m   map[string]publishedSets
}

type publishedSets struct {
	gen   uint64
	specs []string
	index map[string]bool
}

func newCatalog(cfg *config.Config, db *store.DB) *catalog {
	return &catalog{cfg: cfg, db: db, m: map[string]publishedSets{}}
}

// lookup lists the setSpecs that get their own resource set: the
// configured sets, or else the sets ListSets reported that match
// set_patterns (all without patterns), the first max_sets of them in
// setSpec order.
func (c *catalog) lookup(ctx context.Context, repo config.Repository) (publishedSets, error) {
	gen := c.db.SetsGeneration()
	c.mu.Lock()
	p, ok := c.m[repo.Name]
	c.mu.Unlock()
	if ok && p.gen == gen {
		return p, nil
	}
	p = publishedSets{gen: gen}
	if len(repo.Sets) > 0 {
		p.specs = repo.Sets
	} else {
		err := c.db.View(ctx, func(snap *store.Snap) error {
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
	c.mu.Lock()
	c.m[repo.Name] = p
	c.mu.Unlock()
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
