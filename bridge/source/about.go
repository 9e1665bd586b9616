package source

import (
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// HTMLType is the media type of the about pages.
const HTMLType = "text/html; charset=utf-8"

// About is a resource set's about page: the describedby target of its
// Capability List and of its Source Description entry. The server and a
// static export both publish it.
func (s *Source) About(snap *store.Snap, rs Set) (Doc, error) {
	data := aboutData{Repo: rs.Repo.Name, Prefix: rs.Prefix, Set: rs.Spec, BaseURL: s.cfg.PublicBaseURL(rs.Repo), CapabilityList: rs.CapabilityList()}
	data.Title = fmt.Sprintf("%s / %s / all records", rs.Repo.Name, rs.Prefix)
	if rs.Spec != store.AllSet {
		data.Title = fmt.Sprintf("%s / %s / set %s", rs.Repo.Name, rs.Prefix, rs.Spec)
	}
	var err error
	if data.Info, err = snap.RepoInfo(rs.Repo.Name); err != nil {
		return Doc{}, err
	}
	if si, err := snap.SetInfo(rs.Repo.Name, rs.Spec); err != nil {
		return Doc{}, err
	} else if si != nil {
		data.SetInfo = *si
	}
	data.Count, err = snap.Pages(rs.Repo.Name, rs.Prefix, rs.Spec, s.pageLimit, func(int, string) error { return nil })
	if err != nil {
		return Doc{}, err
	}
	if data.History, err = s.historyNote(snap, rs); err != nil {
		return Doc{}, err
	}
	return Doc{Type: HTMLType, Write: func(w io.Writer) error { return s.about.Execute(w, data) }}, nil
}

type aboutData struct {
	Title, Repo, Prefix, Set, BaseURL, CapabilityList string
	Info                                              store.RepoInfo
	SetInfo                                           store.SetInfo
	Count                                             int
	History                                           string
}

// historyNote says how far back a set's change history goes.
func (s *Source) historyNote(snap *store.Snap, rs Set) (string, error) {
	oldest, err := snap.Oldest(rs.Repo.Name, rs.Prefix, rs.Spec)
	if err != nil || oldest.IsZero() {
		return "", err
	}
	keep := "forever"
	if r := s.cfg.ResourceSync.Retention; r > 0 {
		keep = fmt.Sprintf("for %s", fmtDays(r))
	}
	return fmt.Sprintf("Change history is kept %s; it now begins at %s. A destination that last synchronised before then must take a new baseline from the Resource Dump or the Resource List.",
		keep, oldest.UTC().Format(time.RFC3339)), nil
}

func fmtDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

// PageStyle is the style sheet of rsbridge's HTML pages.
const PageStyle = `body{font:15px/1.5 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border-bottom:1px solid #ddd;padding:.25em .8em;text-align:left;vertical-align:top}
th{background:#f4f4f4}code{background:#f4f4f4;padding:0 .2em}.err{color:#a00}`

// parseAbout parses the about page's template; New calls it once
// (templates are safe for concurrent use).
func parseAbout() *template.Template {
	return template.Must(template.New("about").Funcs(template.FuncMap{
		"time": func(t time.Time) string {
			if t.IsZero() {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		"style": func() template.CSS { return template.CSS(PageStyle) },
	}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>{{style}}</style></head><body>
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
<li>Deleted records answer <code>410 Gone</code> (from a static copy: <code>404 Not Found</code>).</li>
{{if .History}}<li>{{.History}}</li>{{end}}
</ul>
</body></html>`))
}
