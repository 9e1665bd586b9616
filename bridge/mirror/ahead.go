package mirror

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/rsbridge/rsbridge/store"
)

// Files ahead of the state. A file is renamed into place (or removed)
// before the batch that records it commits, so a process killed between
// the two leaves the copy ahead of its state: a file the state does not
// know, one it knows with other bytes, or none where it says one is. Redoing
// the batch does not always mend that: the change that wrote the file may
// be followed by a deletion, which finds nothing in the state to delete,
// and a removal may be followed by the same bytes created again, which the
// state says the copy holds.
//
// So each path is noted in a journal (aheadName, in the state's directory)
// before its file is renamed or removed, and dropped from it once the
// batch that records it has committed. The next process, before its first
// run, looks at every path the journal still names: a file no set's state
// holds goes, and a resource whose file is missing or not the bytes the
// state says is marked deleted in the state, so the change the batch was
// applying, which comes again (it is after Through, or in a baseline taken
// again), fetches it.
//
// A journal line is written, not synced, before the rename: it survives
// the process dying (SIGKILL, the OOM killer, a panic), which is what the
// journal is for. After a power loss the file system may keep a rename
// and lose the line; an audit (-audit) reports such a file as stray, and
// -repair with -delete removes it (auditStray).
//
// A resource marked deleted this way has its file removed too (when the
// bytes differ) and a "deleted" line in the change log (from "mended"), so
// the log, the state and the disk agree; the redone change then logs it
// created again.

// aheadName is the journal's file in the state's directory.
const aheadName = "ahead.jsonl"

// aheadEntry is one journal line: a path of the copy and the resource it is
// for.
type aheadEntry struct {
	URI  string `json:"uri"`
	Path string `json:"path"`
}

// ahead is the journal of paths changed ahead of the state.
type ahead struct {
	path string
	mu   sync.Mutex
	f    *os.File
	// open: changed on disk, not yet in the batch; batched: in the batch,
	// until it commits; old: read at open (or left by a run that ended
	// early), until recovered.
	open, batched, old map[string]string // path → URI
	lines              int               // lines in the file
}

// openAhead opens the journal and reads what a previous process left.
func openAhead(path string) (*ahead, error) {
	a := &ahead{path: path, open: map[string]string{}, batched: map[string]string{}, old: map[string]string{}}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal of files ahead of the state: %w", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e aheadEntry
		// A line cut short by the kill was written before its rename, which
		// never happened.
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Path != "" {
			a.old[e.Path] = e.URI
			a.lines++
		}
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal of files ahead of the state %s: %w", path, err)
	}
	a.f = f
	return a, nil
}

// touch notes that the file at rel (uri's) is about to change.
func (a *ahead) touch(uri, rel string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.open[rel]; ok {
		return nil
	}
	b, err := json.Marshal(aheadEntry{URI: uri, Path: rel})
	if err != nil {
		return err
	}
	if _, err := a.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("journal of files ahead of the state: %w", err)
	}
	a.open[rel] = uri
	a.lines++
	return nil
}

// inBatch notes that the batch records the file at rel.
func (a *ahead) inBatch(rel string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if uri, ok := a.open[rel]; ok {
		delete(a.open, rel)
		a.batched[rel] = uri
	}
}

// committed drops what the committed batch recorded; the journal keeps
// the paths still open (being written while the batch committed), and
// those a previous process left until they are recovered.
func (a *ahead) committed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.batched)
	return a.rewrite()
}

// recovered drops what a previous process left.
func (a *ahead) recovered() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.old)
	return a.rewrite()
}

// rewrite makes the file hold the open and old paths alone (a.mu held):
// emptied in place when none are left, else replaced by a new file, so a
// kill in between leaves the old one or the new one whole.
func (a *ahead) rewrite() error {
	if a.lines == len(a.open)+len(a.old) {
		return nil
	}
	if len(a.open)+len(a.old) == 0 {
		if err := a.f.Truncate(0); err != nil {
			return fmt.Errorf("journal of files ahead of the state: %w", err)
		}
		a.lines = 0
		return nil
	}
	tmp := a.path + ".new"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("journal of files ahead of the state: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, m := range []map[string]string{a.old, a.open} {
		for rel, uri := range m {
			enc.Encode(aheadEntry{URI: uri, Path: rel})
		}
	}
	err = w.Flush()
	if err == nil {
		err = os.Rename(tmp, a.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal of files ahead of the state: %w", err)
	}
	a.f.Close()
	a.f, a.lines = f, len(a.open)+len(a.old)
	return nil
}

// left is what no batch will record: what a previous process left, and
// what an earlier run of this one changed and did not record because it
// ended early (a cancel drops the results of fetches in flight). It is
// called between runs, when nothing is in flight.
func (a *ahead) left() []aheadEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	for rel, uri := range a.open {
		a.old[rel] = uri
	}
	clear(a.open)
	es := make([]aheadEntry, 0, len(a.old))
	for rel, uri := range a.old {
		es = append(es, aheadEntry{URI: uri, Path: rel})
	}
	return es
}

func (a *ahead) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}

// recoverAhead mends the copy where a previous process died with files
// ahead of the state (see above); it runs before the first set does.
func (m *Mirror) recoverAhead(ctx context.Context) error {
	es := m.sink.ahead.left()
	if len(es) == 0 {
		return nil
	}
	// Every set the state knows: one this run leaves out (-sets) may hold
	// a path too.
	sets := m.known
	b := m.state.Batch()
	removed, forgotten := 0, 0
	for _, e := range es {
		if err := ctx.Err(); err != nil {
			return err
		}
		type holder struct {
			set string
			res *store.MirrorResource
		}
		var holders []holder
		for _, s := range sets {
			cur, err := m.state.Resource(s, e.URI)
			if err != nil {
				return err
			}
			if cur != nil && !cur.Deleted && cur.Path == e.Path {
				holders = append(holders, holder{s, cur})
			}
		}
		if len(holders) == 0 {
			if err := m.sink.remove(e.Path); err != nil {
				return fmt.Errorf("removing %s, a file no state holds: %w", e.Path, err)
			}
			removed++
			continue
		}
		ok, err := m.fileIs(holders[0].res)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		// Missing, or bytes the state does not describe: the copy no longer
		// has what the state says, so the state, the disk and the change log
		// all say it is gone, and the redone change brings it back.
		if err := m.sink.remove(e.Path); err != nil {
			return fmt.Errorf("removing %s, a file the state does not describe: %w", e.Path, err)
		}
		now := m.now().UTC()
		for _, h := range holders {
			gone := *h.res
			gone.Deleted, gone.Applied = true, now
			if err := b.PutResource(h.set, &gone); err != nil {
				return err
			}
		}
		if err := m.sink.note(logLine{Change: "deleted", URI: e.URI, Path: e.Path, Time: now, From: "mended"}); err != nil {
			return err
		}
		forgotten++
	}
	// The removals and the log's lines are durable before the state
	// commits, and the journal forgets them after.
	n, err := m.sink.flush()
	if err != nil {
		return err
	}
	if m.opts.Log != "" {
		if err := b.PutLog(store.MirrorLog{Bytes: n}); err != nil {
			return err
		}
	}
	if err := b.Commit(); err != nil {
		return err
	}
	m.runHook(m.sink.takeBatch())
	m.log.Info("a run that died or ended early left files ahead of the state; mended", "paths", len(es),
		"removed_unknown", removed, "marked_for_fetching_again", forgotten)
	return m.sink.ahead.recovered()
}

// fileIs reports whether the copy's file of res holds the bytes the
// state says.
func (m *Mirror) fileIs(res *store.MirrorResource) (bool, error) {
	n, md, sh, err := sumFile(filepath.Join(m.opts.Dir, res.Path))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case n != res.Length:
		return false, nil
	case res.MD5 != "":
		return md == res.MD5, nil
	case res.SHA256 != "":
		return sh == res.SHA256, nil
	}
	return true, nil
}
