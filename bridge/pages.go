package bridge

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// parsePages parses the HTML templates; NewServer calls it once.
func parsePages() *template.Template {
	return template.Must(template.New("pages").Funcs(template.FuncMap{
		"time": func(t time.Time) string {
			if t.IsZero() {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
	}).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.}}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border-bottom:1px solid #ddd;padding:.25em .8em;text-align:left;vertical-align:top}
th{background:#f4f4f4}code{background:#f4f4f4;padding:0 .2em}.err{color:#a00}</style>{{end}}

{{define "home"}}{{template "head" "rsbridge"}}
{{range .Sets}}<link rel="resourcesync" href="{{.CapabilityList}}">
{{end}}</head><body>
<h1>rsbridge</h1>
{{if .Disk}}<p class="err"><b>Harvests are stopped:</b> {{.Disk}}</p>{{end}}
<p>OAI-PMH repositories published as ResourceSync 1.1 sources.
Destinations start at the <a href="{{.SourceDescription}}">Source Description</a> (<code>/.well-known/resourcesync</code>).</p>
{{range .Repos}}<h2>{{.Name}}{{if .Info.RepositoryName}}: {{.Info.RepositoryName}}{{end}}</h2>
<p>OAI-PMH endpoint <code>{{.BaseURL}}</code>; deletedRecord <code>{{or .Info.DeletedRecord "?"}}</code>, granularity <code>{{or .Info.Granularity "?"}}</code>.<br>
Last harvest: {{time .Info.LastHarvest}}{{if .Info.LastHarvest.IsZero}}{{else if .Info.LastHarvestOK}} (ok){{else}} <span class="err">(failed: {{.Info.LastError}})</span>{{end}};
last reconciliation: {{time .Info.LastReconcile}}.</p>
<table><tr><th>format</th><th>live records</th><th>deleted</th><th>changes</th><th>quarantined</th><th>resource sets</th></tr>
{{range .Prefixes}}<tr><td><code>{{.Prefix}}</code></td><td>{{.Counter.Live}}</td><td>{{.Counter.Deleted}}</td><td>{{.Counter.Seq}}</td><td>{{.Quarantined}}</td>
<td>{{range .Sets}}<a href="{{.CapabilityList}}">{{.Label}}</a> (<a href="{{.About}}">about</a>)<br>{{end}}</td></tr>
{{end}}</table>
{{range .Prefixes}}{{if .Held}}<p>Quarantined <code>{{.Prefix}}</code> records (skipped, fetched again by every harvest){{if gt .Quarantined (len .Held)}}, the first {{len .Held}} of {{.Quarantined}}{{end}}:</p>
<table><tr><th>identifier</th><th>reason</th><th>since</th><th>times</th></tr>
{{range .Held}}<tr><td><code>{{.Identifier}}</code></td><td>{{.Reason}}</td><td>{{time .First}}</td><td>{{.Times}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{end}}</body></html>{{end}}

{{define "about"}}{{template "head" .Title}}</head><body>
<h1>{{.Title}}</h1>
<p>A ResourceSync resource set served by rsbridge: the <code>{{.Prefix}}</code> metadata records of the OAI-PMH repository
<b>{{.Repo}}</b>{{if .Info.RepositoryName}} ({{.Info.RepositoryName}}){{end}}{{if .Set}}, OAI set <code>{{.Set}}</code>{{if .SetInfo.Name}} “{{.SetInfo.Name}}”{{end}} with all its descendant sets{{end}}.</p>
{{if .SetInfo.Description}}<p>{{.SetInfo.Description}}</p>{{end}}
<table>
<tr><th>Capability List</th><td><a href="{{.CapabilityList}}">{{.CapabilityList}}</a></td></tr>
<tr><th>live records</th><td>{{.Count}}</td></tr>
<tr><th>OAI-PMH base URL</th><td><code>{{.BaseURL}}</code></td></tr>
<tr><th>repository name</th><td>{{or .Info.RepositoryName "?"}}</td></tr>
<tr><th>protocol version</th><td>{{or .Info.ProtocolVersion "?"}}</td></tr>
<tr><th>earliest datestamp</th><td>{{or .Info.EarliestDatestamp "?"}}</td></tr>
<tr><th>deletedRecord</th><td>{{or .Info.DeletedRecord "?"}}</td></tr>
<tr><th>granularity</th><td>{{or .Info.Granularity "?"}}</td></tr>
<tr><th>admin e-mail</th><td>{{range .Info.AdminEmails}}{{.}} {{end}}</td></tr>
<tr><th>last harvest</th><td>{{time .Info.LastHarvest}}</td></tr>
</table>
<h2>How to read this set</h2>
<ul>
<li>Each resource is the metadata document of one OAI-PMH record, served by rsbridge. <code>rs:ln rel="via"</code> points to the upstream
GetRecord request and carries the upstream datestamp as <code>modified</code>; <code>alternate</code> links point to the same record in the
other formats rsbridge serves; <code>describes</code> points to the landing page the metadata names.</li>
<li>Change List <code>datetime</code> values are the times rsbridge detected and stored each change, not upstream datestamps.</li>
{{if .Set}}<li>A record that leaves this set (or one of its descendants) is reported as <code>deleted</code> in this set's Change Lists, and as
<code>created</code> in the Change Lists of the set it joins; it stays available in the other sets it belongs to.</li>{{end}}
<li>Deleted records answer <code>410 Gone</code>.</li>
{{if .History}}<li>{{.History}}</li>{{end}}
</ul>
</body></html>{{end}}
`))
}

type homeSet struct{ Label, CapabilityList, About string }

type homePrefix struct {
	Prefix      string
	Counter     store.Counter
	Sets        []homeSet
	Quarantined int
	Held        []store.Quarantined // the first few
}

type homeRepo struct {
	Name, BaseURL string
	Info          store.RepoInfo
	Prefixes      []homePrefix
}

// home is a readable overview with a <link rel="resourcesync"> per Capability
// List.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	sets, err := s.resourceSets(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data := struct {
		SourceDescription string
		Sets              []homeSet
		Repos             []homeRepo
		Disk              string
	}{SourceDescription: s.sourceDescriptionURL()}
	if err := s.db.CheckSpace(); err != nil {
		data.Disk = err.Error()
	}
	err = s.db.View(r.Context(), func(snap *store.Snap) error {
		for _, repo := range s.cfg.Repositories {
			info, err := snap.RepoInfo(repo.Name)
			if err != nil {
				return err
			}
			hr := homeRepo{Name: repo.Name, BaseURL: repo.BaseURL, Info: info}
			for _, p := range repo.MetadataPrefixes {
				c, err := snap.Counter(repo.Name, p)
				if err != nil {
					return err
				}
				hp := homePrefix{Prefix: p, Counter: c}
				hp.Quarantined, err = snap.Quarantine(repo.Name, p, 20, func(q store.Quarantined) error {
					q.Identifier = clip(q.Identifier, 200)
					hp.Held = append(hp.Held, q)
					return nil
				})
				if err != nil {
					return err
				}
				for _, rs := range sets {
					if rs.repo.Name == repo.Name && rs.prefix == p {
						label := "all records"
						if rs.set != store.AllSet {
							label = "set " + rs.set
						}
						hs := homeSet{Label: label, CapabilityList: rs.capabilityList(), About: rs.about()}
						hp.Sets = append(hp.Sets, hs)
						data.Sets = append(data.Sets, hs)
					}
				}
				hr.Prefixes = append(hr.Prefixes, hp)
			}
			data.Repos = append(data.Repos, hr)
		}
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.pages.ExecuteTemplate(w, "home", data); err != nil {
		s.log.Error("home page", "err", err)
	}
}

// about describes one resource set: the describedby target of its Capability
// List and of its Source Description entry.
func (s *Server) about(w http.ResponseWriter, r *http.Request, rs resourceSet) {
	data := struct {
		Title, Repo, Prefix, Set, BaseURL, CapabilityList string
		Info                                              store.RepoInfo
		SetInfo                                           store.SetInfo
		Count                                             int
		History                                           string
	}{Repo: rs.repo.Name, Prefix: rs.prefix, Set: rs.set, BaseURL: rs.repo.BaseURL, CapabilityList: rs.capabilityList()}
	data.Title = fmt.Sprintf("%s / %s / all records", rs.repo.Name, rs.prefix)
	if rs.set != store.AllSet {
		data.Title = fmt.Sprintf("%s / %s / set %s", rs.repo.Name, rs.prefix, rs.set)
	}
	err := s.db.View(r.Context(), func(snap *store.Snap) error {
		var err error
		if data.Info, err = snap.RepoInfo(rs.repo.Name); err != nil {
			return err
		}
		if si, err := snap.SetInfo(rs.repo.Name, rs.set); err != nil {
			return err
		} else if si != nil {
			data.SetInfo = *si
		}
		data.Count, err = snap.Pages(rs.repo.Name, rs.prefix, rs.set, s.limit, func(int, string) error { return nil })
		if err != nil {
			return err
		}
		data.History, err = s.historyNote(snap, rs)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.pages.ExecuteTemplate(w, "about", data); err != nil {
		s.log.Error("about page", "err", err)
	}
}

// robots allows everything and names every Resource List as a Sitemap.
func (s *Server) robots(w http.ResponseWriter, r *http.Request) {
	sets, err := s.resourceSets(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var b strings.Builder
	b.WriteString("User-agent: *\nAllow: /\n\n")
	for _, rs := range sets {
		b.WriteString("Sitemap: " + rs.resourceList() + "\n")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, b.String())
}
