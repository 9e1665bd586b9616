package export

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/rsync"
)

// The Source Description of a target many instances export to. Each
// instance publishes its part, the Capability Lists of its own sets, as
// pages sourcedescription-{instance}_{n}.xml (each a valid page of a
// Source Description Index); then it recomposes the Source Description at
// /.well-known/resourcesync from every part it finds: one <urlset> of all
// their entries while they fit one sitemap, else an index of the parts.
//
// Two instances may recompose at once, each from the parts it listed. So
// after writing, an instance lists the parts again, and recomposes again
// if any changed: the last Source Description written is from a listing
// taken after every part was last written, so it lists them all.

const (
	partPrefix = "sourcedescription-"
	partLimit  = rsync.MaxEntries * 9 / 10 // Capability Lists in one part
	// maxCompose bounds the recompositions of one run; instances racing
	// longer than that finish on their next run.
	maxCompose = 8
)

func (r *run) partKey(n int) string {
	return fmt.Sprintf("%s%s_%05d.xml", partPrefix, r.e.o.Instance, n)
}

// sourceDescription publishes this instance's part, then the Source
// Description and the home page recomposed from every part, then removes
// the parts this instance no longer needs.
func (r *run) sourceDescription() error {
	sets := slices.Clone(r.sets) // the sets this run published, not the catalog now
	slices.SortFunc(sets, func(a, b source.Set) int { return strings.Compare(a.Path(), b.Path()) })
	if err := r.checkOwnPart(); err != nil {
		return err
	}
	n := 0
	for i := 0; i < len(sets) || i == 0; i += partLimit {
		n++
		chunk := sets[i:min(i+partLimit, len(sets))]
		doc := source.Doc{Write: func(w io.Writer) error {
			entries := make([]rsync.Entry, len(chunk))
			for j, rs := range chunk {
				entries[j] = source.CapabilityEntry(rs)
			}
			return r.e.src.WriteSourceDescription(w, entries, true, r.home())
		}}
		if err := r.putDoc(r.e.base+"/"+r.partKey(n), doc); err != nil {
			return err
		}
	}
	if err := r.flush(); err != nil {
		return err
	}
	if err := r.compose(); err != nil {
		return err
	}
	return r.e.st.List(r.ctx, partPrefix+r.e.o.Instance+"_", func(o objstore.Object) error {
		if o.Key > r.partKey(n) {
			return r.pool.remove(o.Key) // a part this instance no longer needs
		}
		return nil
	})
}

// home is the describedby target of the Source Description: the export's
// home page, named (a bucket has no index document for a bare path).
func (r *run) home() string { return r.e.base + "/index.html" }

// checkOwnPart warns when this instance's part, as published, lists
// Capability Lists of repositories this instance does not export: another
// instance uses the same export.instance, and the two overwrite each other.
func (r *run) checkOwnPart() error {
	rc, err := r.e.st.Get(r.ctx, r.partKey(1))
	if errors.Is(err, objstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	doc, err := rsync.Parse(rc)
	if err != nil {
		return nil // rewritten below
	}
	mine := map[string]bool{}
	for _, repo := range r.e.src.Config().Repositories {
		mine[repo.Name] = true
	}
	for _, e := range doc.Entries {
		rel, _ := strings.CutPrefix(e.Loc, r.e.base+"/")
		if repo, _, _ := strings.Cut(rel, "/"); !mine[repo] {
			r.e.o.Logger.Error("another instance exports to this target under the same export.instance: give each its own, or their Source Description parts overwrite each other",
				"target", r.e.o.Target, "instance", r.e.o.Instance, "foreign", e.Loc)
			return nil
		}
	}
	return nil
}

// compose writes the Source Description from the parts until a listing
// after the write finds them unchanged.
func (r *run) compose() error {
	seen, entries, urls, err := r.readParts()
	if err != nil {
		return err
	}
	for range maxCompose {
		var sd bytes.Buffer
		if len(entries) <= rsync.MaxEntries {
			slices.SortFunc(entries, func(a, b rsync.Entry) int { return strings.Compare(a.Loc, b.Loc) })
			err = r.e.src.WriteSourceDescription(&sd, entries, false, r.home())
		} else {
			err = r.e.src.WriteSourceDescriptionIndex(&sd, urls, r.home())
		}
		if err != nil {
			return err
		}
		var home bytes.Buffer
		if err := r.e.home.Execute(&home, homeData{Base: r.e.base, Sets: entries}); err != nil {
			return err
		}
		// The home page first: the Source Description links it.
		if err := r.replace("index.html", home.Bytes(), source.HTMLType); err != nil {
			return err
		}
		if err := r.e.st.Flush(r.ctx); err != nil {
			return err
		}
		if err := r.replace(".well-known/resourcesync", sd.Bytes(), source.XMLType); err != nil {
			return err
		}
		if err := r.flush(); err != nil {
			return err
		}
		again, e2, u2, err := r.readParts()
		if err != nil {
			return err
		}
		if again == seen {
			return nil
		}
		seen, entries, urls = again, e2, u2
	}
	r.e.o.Logger.Warn("other instances kept changing the Source Description; it is recomposed on the next run", "target", r.e.o.Target)
	return nil
}

// readParts reads every instance's part: their digest (keys and bytes),
// their entries, and their URLs.
func (r *run) readParts() (digest [32]byte, entries []rsync.Entry, urls []string, err error) {
	h := sha256.New()
	err = r.e.st.List(r.ctx, partPrefix, func(o objstore.Object) error {
		if !strings.HasSuffix(o.Key, ".xml") || !strings.Contains(o.Key, "_") || strings.Contains(o.Key, "/") {
			return nil // not a part (a repository's tree below a name like a part's)
		}
		rc, err := r.e.st.Get(r.ctx, o.Key)
		if errors.Is(err, objstore.ErrNotFound) {
			return nil // removed since listed
		}
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		doc, err := rsync.Parse(bytes.NewReader(b))
		if err != nil { // one broken part must not stop every instance
			r.e.o.Logger.Error("a part of the Source Description does not parse; left out (remove it if its instance is gone)",
				"target", r.e.o.Target, "part", o.Key, "err", err)
			return nil
		}
		fmt.Fprintf(h, "%s\x00%x\x00", o.Key, sha256.Sum256(b))
		entries = append(entries, doc.Entries...)
		urls = append(urls, r.e.base+"/"+o.Key)
		return nil
	})
	copy(digest[:], h.Sum(nil))
	return digest, entries, urls, err
}

// replace writes an object that other instances write too, unless it
// holds these bytes already.
func (r *run) replace(key string, body []byte, typ string) error {
	if rc, err := r.e.st.Get(r.ctx, key); err == nil {
		old, err := io.ReadAll(rc)
		rc.Close()
		if err == nil && bytes.Equal(old, body) {
			r.skipped()
			return nil
		}
	} else if !errors.Is(err, objstore.ErrNotFound) {
		return err
	}
	if err := r.e.st.Put(r.ctx, key, bytes.NewReader(body), int64(len(body)), objstore.Meta{ContentType: typ, CacheControl: r.short()}); err != nil {
		return err
	}
	r.pool.counted(1, int64(len(body)), 0)
	return nil
}

type homeData struct {
	Base string
	Sets []rsync.Entry
}

// parseHome parses the home page of an export: the describedby target of
// the Source Description.
func parseHome() *template.Template {
	return template.Must(template.New("home").Funcs(template.FuncMap{
		"style": func() template.CSS { return template.CSS(source.PageStyle) },
		"about": func(e rsync.Entry) string {
			for _, l := range e.Links {
				if l.Rel == "describedby" {
					return l.Href
				}
			}
			return ""
		},
	}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ResourceSync source</title>
<style>{{style}}</style></head><body>
<h1>ResourceSync source</h1>
<p>OAI-PMH repositories published as a ResourceSync 1.1 source by rsbridge. Destinations start at the
<a href="{{.Base}}/.well-known/resourcesync">Source Description</a>; it lists {{len .Sets}} Capability Lists:</p>
<ul>
{{range .Sets}}<li><a href="{{.Loc}}">{{.Loc}}</a>{{with about .}} (<a href="{{.}}">about</a>){{end}}</li>
{{end}}</ul>
</body></html>
`))
}
