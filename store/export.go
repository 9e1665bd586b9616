package store

import (
	"encoding/json"
	"fmt"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
)

// Export state (bridge/export): what a static export has published to one
// target, as JSON values the exporter defines, under
//
//	X/target·name   (name: the exporter's own key, any text without NUL)
//
// The exporter commits it after the objects it describes are published, so
// a crash leaves state that is behind the target, never ahead of it.

func exportKey(target, name string) []byte { return key('X', target, name) }

// ExportState reads one value of a target's export state into v; false when
// there is none.
func (s *Snap) ExportState(target, name string, v any) (bool, error) {
	ok, err := getJSON(s.txn, exportKey(target, name), v)
	if err != nil {
		return false, fmt.Errorf("store: export state %s %q: %w", target, name, err)
	}
	return ok, nil
}

// ExportStates calls fn with every value of a target's export state whose
// name starts with prefix, in name order.
func (s *Snap) ExportStates(target, prefix string, fn func(name string, value []byte) error) error {
	head := exportKey(target, "")
	err := scan(s.txn, exportKey(target, prefix), true, func(k, v []byte) error {
		return fn(string(k[len(head):]), v)
	})
	if err != nil {
		return fmt.Errorf("store: export state %s: %w", target, err)
	}
	return nil
}

// ExportUpdate is one atomic change of a target's export state: values to
// set (marshalled as JSON) and names to delete.
type ExportUpdate struct {
	Target string
	Set    map[string]any
	Delete []string
}

// PutExportState commits an update of a target's export state at once.
func (db *DB) PutExportState(u ExportUpdate) error {
	if strings.ContainsRune(u.Target, 0) {
		return fmt.Errorf("store: export target %q contains NUL", u.Target)
	}
	err := db.update(func(txn *badger.Txn) error {
		for _, name := range u.Delete {
			if err := txn.Delete(exportKey(u.Target, name)); err != nil {
				return err
			}
		}
		for name, v := range u.Set {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if err := txn.Set(exportKey(u.Target, name), b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: export state %s: %w", u.Target, err)
	}
	return nil
}
