package export

import (
	"strings"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
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
	if err := r.unpublished(due); err != nil {
		return err
	}
	return r.garbageDue(r.now, func(k string) error {
		if r.current[k] {
			return nil // published again by this run (keep dropped its removal)
		}
		r.drop = append(r.drop, garbageName(k), objectName(k), dumpName(k))
		return r.pool.remove(k)
	})
}

// unpublished schedules the removal of every object of the sets exported
// before but no longer published (a set dropped from the configuration or
// emptied upstream): the Source Description stopped listing them in this run.
func (r *run) unpublished(due garbage) error {
	current := map[string]bool{}
	for _, rs := range r.sets {
		current[pagesName(rs)] = true
	}
	var gone []string
	if err := r.snap.ExportStates(r.e.o.Target, "p/", func(name string, _ []byte) error {
		if !current[name] {
			gone = append(gone, name)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, name := range gone {
		k, err := r.key(strings.TrimPrefix(name, "p/") + "/capabilitylist.xml")
		if err != nil {
			return err
		}
		dir := strings.TrimSuffix(k, "capabilitylist.xml")
		if err := r.e.st.List(r.ctx, dir, func(o objstore.Object) error {
			r.states[garbageName(o.Key)] = due
			return nil
		}); err != nil {
			return err
		}
		r.drop = append(r.drop, name)
		r.e.o.Logger.Info("set no longer published: its documents are removed after the grace period", "target", r.e.o.Target, "set", dir)
	}
	return nil
}
