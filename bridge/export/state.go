package export

import (
	"encoding/json"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/store"
)

// The export state of a target, in the store (store.ExportState), by name:
//
//	f/shape               what shapes the documents (configuration)
//	c/{repo}/{prefix}     cursor: the change events exported
//	p/{set path}          a set's Resource List pages
//	o/{object key}        a published document: its SHA-256
//	d/{object key}        a published dump package or manifest copy
//	g/{object key}        an object to delete once its grace period ends

// cursor is how far (repo, prefix) is exported.
type cursor struct {
	Seq     uint64 `json:"seq"`     // every event up to Seq is published
	Version uint64 `json:"version"` // the store's Version then
	Slot    int64  `json:"slot"`    // the Change List period then
	// Full, when set, is a whole export under way: it began when the
	// events were at FullSeq, and records before FullPos are written.
	Full    bool   `json:"full,omitempty"`
	FullSeq uint64 `json:"full_seq,omitempty"`
	FullPos string `json:"full_pos,omitempty"`
}

// pages are a set's Resource List pages: one whole list (Whole, one range,
// published at resourcelist.xml) or the pages of an index.
type pages struct {
	Whole bool   `json:"whole,omitempty"`
	Pages []page `json:"pages"`
	// FirstList is the oldest Change List of the set when it was last
	// exported: when retention prunes it, the pruned lists are removed.
	FirstList string `json:"first_list,omitempty"`
}

type page struct {
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
	// Fresh pages are not published yet: a run that split a page commits
	// the new pages (and retires the old one) before it writes them.
	Fresh bool `json:"fresh,omitempty"`
}

func (p page) url(rs source.Set, whole bool) string {
	if whole {
		return rs.ResourceList()
	}
	return rs.StaticResourceListPage(p.Start, p.End)
}

// contains reports whether id falls in the page's range.
func (p page) contains(id string) bool {
	return id >= p.Start && (p.End == "" || id < p.End)
}

// published is a document as it was published.
type published struct {
	SHA256 string `json:"sha256"`
	Final  bool   `json:"final,omitempty"` // it never changes again
}

// garbage is an object to delete at Due.
type garbage struct {
	Due time.Time `json:"due"`
}

func cursorName(repo, prefix string) string { return "c/" + repo + "/" + prefix }
func pagesName(rs source.Set) string        { return "p/" + rs.Path() }
func objectName(key string) string          { return "o/" + key }
func dumpName(key string) string            { return "d/" + key }
func garbageName(key string) string         { return "g/" + key }

// state reads one value of the run's target.
func (r *run) state(name string, v any) (bool, error) {
	return r.snap.ExportState(r.e.o.Target, name, v)
}

// commit writes state changes at once; the objects they describe must be
// published (flushed) before.
func (r *run) commit(set map[string]any, del []string) error {
	if len(set) == 0 && len(del) == 0 {
		return nil
	}
	return r.e.db.PutExportState(store.ExportUpdate{Target: r.e.o.Target, Set: set, Delete: del})
}

// garbageDue calls fn for every object whose grace period has ended.
func (r *run) garbageDue(now time.Time, fn func(key string) error) error {
	return r.snap.ExportStates(r.e.o.Target, "g/", func(name string, v []byte) error {
		var g garbage
		if err := json.Unmarshal(v, &g); err != nil {
			return err
		}
		if g.Due.After(now) {
			return nil
		}
		return fn(name[len("g/"):])
	})
}
