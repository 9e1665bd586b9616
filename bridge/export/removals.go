package export

import (
	"strings"
)

// removals runs once the lists no longer link what it removes: deleted
// records' resources and maps at once; superseded dump files and retired
// index pages once their grace period has ended.
func (r *run) removals() error {
	for _, k := range r.deletes {
		if err := r.pool.remove(k); err != nil {
			return err
		}
	}
	due := garbage{Due: r.now.Add(r.e.o.Grace)}
	err := r.snap.ExportStates(r.e.o.Target, "d/", func(name string, _ []byte) error {
		k := strings.TrimPrefix(name, "d/")
		if _, listed := r.dumps[k]; !listed {
			r.states[garbageName(k)] = due
			r.drop = append(r.drop, name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return r.garbageDue(r.now, func(k string) error {
		r.drop = append(r.drop, garbageName(k), objectName(k))
		return r.pool.remove(k)
	})
}
