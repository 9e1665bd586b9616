package store

import (
	"encoding/json"
	"fmt"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Resource and Change Dumps are ZIP files beside the store; the store keeps
// what describes them, so a dump is either fully described or not at all:
//
//	R/repo·prefix·set          the set's current Resource Dump
//	Q/repo·prefix·set·listID   the Change Dump package of one closed Change List
//	G/file                     a file no longer listed, removable after a time

// Package is one ZIP package of a dump and the copy of its manifest.
type Package struct {
	File     string    `json:"file"`     // path relative to the dump directory
	Manifest string    `json:"manifest"` // the manifest copy, relative to the dump directory
	Length   int64     `json:"length"`
	SHA256   string    `json:"sha256"`
	MD5      string    `json:"md5"`
	Entries  int       `json:"entries"`
	At       time.Time `json:"at,omitzero"`
	Done     time.Time `json:"completed,omitzero"`
	From     time.Time `json:"from,omitzero"`  // Change Dump packages: the list's interval
	Until    time.Time `json:"until,omitzero"` //
	Built    time.Time `json:"built"`          // when the package was written
}

// ResourceDump is the current Resource Dump of a resource set: its packages,
// all read from one snapshot taken at At.
type ResourceDump struct {
	At       time.Time `json:"at"`
	Done     time.Time `json:"completed"`
	Seq      uint64    `json:"seq"`     // the (repo, prefix) event counter at the snapshot
	Records  int       `json:"records"` // entries in all packages
	Packages []Package `json:"packages"`
}

// Garbage is a dump file that is no longer listed; it is removed after
// RemoveAfter, so downloads in progress can finish.
type Garbage struct {
	File        string    `json:"file"`
	RemoveAfter time.Time `json:"remove_after"`
}

// ResourceDump returns the current Resource Dump of a set, or nil.
func (s *Snap) ResourceDump(repo, prefix, set string) (*ResourceDump, error) {
	var d ResourceDump
	found, err := getJSON(s.txn, key('R', repo, prefix, set), &d)
	if err != nil || !found {
		return nil, err
	}
	return &d, nil
}

// PutResourceDump makes d the set's current Resource Dump and queues the
// files of the one it replaces for removal after grace.
func (db *DB) PutResourceDump(repo, prefix, set string, d ResourceDump, removeAfter time.Time) error {
	err := db.update(func(txn *badger.Txn) error {
		var old ResourceDump
		found, err := getJSON(txn, key('R', repo, prefix, set), &old)
		if err != nil {
			return err
		}
		if found {
			for _, p := range old.Packages {
				for _, f := range []string{p.File, p.Manifest} {
					if err := setJSON(txn, key('G', f), Garbage{File: f, RemoveAfter: removeAfter}); err != nil {
						return err
					}
				}
			}
		}
		return setJSON(txn, key('R', repo, prefix, set), d)
	})
	if err != nil {
		return fmt.Errorf("store: resource dump of %s/%s/%q: %w", repo, prefix, set, err)
	}
	return nil
}

// ChangeDumps calls fn for the set's Change Dump packages in list order, which
// is time order.
func (s *Snap) ChangeDumps(repo, prefix, set string, fn func(listID string, p Package) error) error {
	p := prefixKey('Q', repo, prefix, set)
	return scan(s.txn, p, true, func(k, v []byte) error {
		var pkg Package
		if err := json.Unmarshal(v, &pkg); err != nil {
			return fmt.Errorf("store: change dump %s/%s/%q: %w", repo, prefix, set, err)
		}
		return fn(string(k[len(p):]), pkg)
	})
}

// ChangeDump returns the Change Dump package of one list, or nil.
func (s *Snap) ChangeDump(repo, prefix, set, listID string) (*Package, error) {
	var pkg Package
	found, err := getJSON(s.txn, key('Q', repo, prefix, set, listID), &pkg)
	if err != nil || !found {
		return nil, err
	}
	return &pkg, nil
}

// PutChangeDump records the Change Dump package of a closed list.
func (db *DB) PutChangeDump(repo, prefix, set, listID string, p Package) error {
	if err := db.update(func(txn *badger.Txn) error { return setJSON(txn, key('Q', repo, prefix, set, listID), p) }); err != nil {
		return fmt.Errorf("store: change dump %s/%s/%q/%s: %w", repo, prefix, set, listID, err)
	}
	return nil
}

// Garbage calls fn for every file queued for removal.
func (s *Snap) Garbage(fn func(Garbage) error) error {
	return scan(s.txn, []byte("G/"), true, func(_, v []byte) error {
		var g Garbage
		if err := json.Unmarshal(v, &g); err != nil {
			return fmt.Errorf("store: garbage entry: %w", err)
		}
		return fn(g)
	})
}

// Collected forgets a removed file. It works on a full disk too: removing
// files is how space comes back.
func (db *DB) Collected(file string) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.readOnly {
		return &SpaceError{Dir: db.dir, ReadOnly: true}
	}
	return db.bdb.Update(func(txn *badger.Txn) error { return txn.Delete(key('G', file)) })
}

// DumpFiles calls fn with every file a dump descriptor or the removal queue
// names, so files that nothing names (a build cut off by a crash) can be
// told apart.
func (s *Snap) DumpFiles(fn func(file string) error) error {
	for _, table := range []byte{'R', 'Q'} {
		err := scan(s.txn, []byte{table, '/'}, true, func(_, v []byte) error {
			var pkgs []Package
			if table == 'R' {
				var d ResourceDump
				if err := json.Unmarshal(v, &d); err != nil {
					return err
				}
				pkgs = d.Packages
			} else {
				var p Package
				if err := json.Unmarshal(v, &p); err != nil {
					return err
				}
				pkgs = []Package{p}
			}
			for _, p := range pkgs {
				if err := fn(p.File); err != nil {
					return err
				}
				if err := fn(p.Manifest); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: dump descriptors: %w", err)
		}
	}
	return s.Garbage(func(g Garbage) error { return fn(g.File) })
}
