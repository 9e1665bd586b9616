package bridge

import (
	"context"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// openStore opens a store with the default Change List policy unless o sets one.
func openStore(t testing.TB, o store.Options) *store.DB {
	t.Helper()
	if o.ChangeListLimit == 0 {
		o.ChangeListLimit = 50000
	}
	if o.ChangeListPeriod == 0 {
		o.ChangeListPeriod = 24 * time.Hour
	}
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// peeker reads the store for assertions, one snapshot per call.
type peeker struct{ db *store.DB }

func peek(db *store.DB) peeker { return peeker{db} }

func (p peeker) view(fn func(*store.Snap) error) error { return p.db.View(context.Background(), fn) }

func (p peeker) Record(repo, prefix, id string) (r *store.Record, err error) {
	err = p.view(func(s *store.Snap) error { r, err = s.Record(repo, prefix, id); return err })
	return r, err
}

func (p peeker) Metadata(repo, prefix, id string) (m []byte, err error) {
	err = p.view(func(s *store.Snap) error { m, err = s.Metadata(repo, prefix, id); return err })
	return m, err
}

func (p peeker) Counter(repo, prefix string) (c store.Counter, err error) {
	err = p.view(func(s *store.Snap) error { c, err = s.Counter(repo, prefix); return err })
	return c, err
}

func (p peeker) Checkpoint(repo, prefix string) (c store.Checkpoint, err error) {
	err = p.view(func(s *store.Snap) error { c, err = s.Checkpoint(repo, prefix); return err })
	return c, err
}

func (p peeker) RepoInfo(repo string) (ri store.RepoInfo, err error) {
	err = p.view(func(s *store.Snap) error { ri, err = s.RepoInfo(repo); return err })
	return ri, err
}

func (p peeker) Events(repo, prefix string, after uint64, fn func(*store.Event) error) error {
	return p.view(func(s *store.Snap) error { return s.Events(repo, prefix, after, fn) })
}

// Members counts the live records of a set.
func (p peeker) Members(repo, prefix, set string) (n int) {
	p.view(func(s *store.Snap) error {
		return s.Resources(repo, prefix, set, "", "", 1<<30, func(*store.Record) error { n++; return nil })
	})
	return n
}
