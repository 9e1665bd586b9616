package bridge

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
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
		"num":     num,
		"dur":     func(d time.Duration) string { return d.Round(time.Second).String() },
		"bytes":   func(n int64) string { return store.BytesIEC(uint64(max(n, 0))) },
		"percent": func(n, total int64) string { return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(max(total, 1))) },
		"run":     runSummary,
		"style":   func() template.CSS { return template.CSS(source.PageStyle) },
	}).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.}}</title>
<style>{{style}}</style>{{end}}

{{define "home"}}{{template "head" "rsbridge"}}
</head><body>
<h1>rsbridge</h1>
{{if .Status.Disk.HarvestsStopped}}<p class="err"><b>Harvests are stopped:</b> {{.Status.Disk.Error}}</p>{{end}}
<p>OAI-PMH repositories published as ResourceSync 1.1 sources.
Destinations start at the <a href="{{.Status.SourceDescription}}">Source Description</a> (<code>/.well-known/resourcesync</code>).
Machine-readable status: <a href="status.json">status.json</a> (same query parameters).</p>
{{template "summary" .}}
{{template "nav" .Nav}}
{{if .Repos}}<table><tr><th>repository</th><th>state</th><th>host</th><th>last success</th><th>last failure</th></tr>
{{range .Repos}}<tr><td><a href="#repo-{{.Name}}">{{.Name}}</a></td><td>{{if eq .State "failing"}}<span class="err">failing</span>{{else}}{{.State}}{{end}}{{with .Running}}{{if .Waiting}} (no. {{.Position}} in line){{end}}{{end}}</td>
<td><a href="?host={{.Host}}">{{.Host}}</a></td><td>{{with .LastSuccess}}{{time .Ended}}{{else}}never{{end}}</td><td>{{with .LastFailure}}{{time .Ended}}{{else}}none{{end}}</td></tr>
{{end}}</table>{{else}}<p>No repository {{if .Status.Matching}}on this page{{else}}matches{{end}}.</p>{{end}}
{{range $r := .Repos}}<h2 id="repo-{{.Name}}">{{.Name}}{{if .RepositoryName}}: {{.RepositoryName}}{{end}}</h2>
<p>OAI-PMH endpoint <code>{{.BaseURL}}</code>; deletedRecord <code>{{or .DeletedRecord "?"}}</code>, granularity <code>{{or .Granularity "?"}}</code>.</p>
<table>
<tr><th>state</th><td>{{if eq .State "failing"}}<span class="err">failing</span>: the last run that ended failed{{else}}{{.State}}{{end}}; upstream host <code>{{.Host}}</code></td></tr>
<tr><th>now</th><td>{{with .Running}}{{if .Waiting}}<b>{{.Kind}} waiting</b> for a slot since {{time .Started}}, no. {{.Position}} in line{{else}}<b>{{.Kind}} running</b> since {{time .Began}}{{if .Prefix}}, <code>{{.Prefix}}</code>{{end}}: {{num .Records}} records{{if ge .Total 0}} of {{num .Total}} ({{percent .Records .Total}}){{end}}, {{num .Pages}} pages, {{printf "%.0f" .Rate}} records/s{{if .ETA}}, about {{dur .ETA}} left{{end}}{{end}}{{else}}idle{{end}}</td></tr>
{{range $f := .Formats}}{{with $f.Resume}}<tr><th>interrupted list</th><td><code>{{$f.Prefix}}</code> resumes at page {{num .Page}} ({{num .Records}} records kept)</td></tr>
{{end}}{{end}}<tr><th>last success</th><td>{{run .LastSuccess}}</td></tr>
<tr><th>last failure</th><td>{{with .LastFailure}}<span class="err">{{run .}}</span>{{else}}none{{end}}</td></tr>
<tr><th>next harvest</th><td>{{time .NextHarvest}}</td></tr>
<tr><th>next reconciliation</th><td>{{if .NextReconcile.IsZero}}not scheduled{{else}}{{time .NextReconcile}}{{end}} (last: {{time .LastReconcile}})</td></tr>
</table>
<table><tr><th>format</th><th>live records</th><th>deleted records<br><small>(tombstones, 410 Gone)</small></th><th>change events</th><th>quarantined</th><th>events per day<br><small>(last 30 days, UTC)</small></th><th>resource sets</th></tr>
{{range .Formats}}<tr><td><code>{{.Prefix}}</code></td><td>{{num .Live}}</td><td>{{num .Tombstones}}</td><td>{{num .Events}}</td><td>{{.Quarantined}}</td>
<td>{{template "chart" .Chart}}</td>
<td>{{range .Sets}}<a href="{{.CapabilityList}}">{{.Label}}</a> (<a href="{{.About}}">about</a>)<br>{{end}}{{if .MoreSets}}and {{num .MoreSets}} more sets: every one is in the <a href="{{$.Status.SourceDescription}}">Source Description</a>{{end}}</td></tr>
{{end}}</table>
{{range $f := .Formats}}{{with $f.Quality}}<p>Record checks of <code>{{$f.Prefix}}</code>{{if $f.DerivedFrom}} (derived from <code>{{$f.DerivedFrom}}</code>){{end}}, as IRDB checks them:
{{num .Checked}} records; {{num (index .Records "record-error")}} with record errors, {{num (index .Records "item-error")}} with item errors, {{num (index .Records "warning")}} with warnings{{if .Codes}} ({{range $c, $n := .Codes}}<code>{{$c}}</code> {{num $n}}; {{end}}){{end}}.
Every record: <code>rsbridge check-records -repo {{$r.Name}} -format {{$f.Prefix}}</code>.</p>
{{end}}{{end}}
{{range .Formats}}{{if .Held}}<p>Quarantined <code>{{.Prefix}}</code> records ({{if .DerivedFrom}}not derived from <code>{{.DerivedFrom}}</code>; converted again when the record or the crosswalk changes{{else}}skipped, fetched again by every harvest{{end}}){{if gt .Quarantined (len .Held)}}, the first {{len .Held}} of {{.Quarantined}}{{end}}:</p>
<table><tr><th>identifier</th><th>reason</th><th>since</th><th>times</th></tr>
{{range .Held}}<tr><td><code>{{.Identifier}}</code></td><td>{{.Reason}}</td><td>{{time .First}}</td><td>{{.Times}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{end}}
{{with .Status.Dumps}}{{if .LastError}}<p class="err">Dumps: the last round failed: {{.LastError}}</p>{{end}}{{end}}
{{with .Status.Notification}}<h2>Change Notification</h2>
<p>{{num .Subscriptions}} live subscriptions; since start {{num .Delivered}} notifications delivered, {{num .Failed}} failed attempts, {{num .Dropped}} given up;
{{num .Pending}} pending{{if not .OldestPending.IsZero}}, the oldest from {{time .OldestPending}}{{end}}{{if .LastError}}; <span class="err">{{.LastError}}</span>{{end}}.</p>
{{if .PerChannel}}<table><tr><th>channel</th><th>subscriptions</th></tr>
{{range $ch, $n := .PerChannel}}<tr><td><a href="{{$ch}}">{{$ch}}</a></td><td>{{$n}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{with .Status.Export}}<h2>Static export</h2>
<p>To {{.Target}}{{if .Running}}, <b>running</b>{{end}}: since start {{num .Runs}} runs ({{num .Failures}} failed), {{num .Objects}} objects written ({{bytes .Bytes}}), {{num .Deleted}} removed{{if .Unexportable}}, <span class="err">{{num .Unexportable}} records not exportable</span>{{end}};
{{num .PendingChanges}} changes not exported yet{{if not .OldestPending.IsZero}}, the oldest from {{time .OldestPending}}{{end}}{{if .Error}}; <span class="err">{{.Error}}</span>{{end}}.
{{with .Last}}Last run {{time .Started}}: {{num .Objects}} objects, {{num .Deleted}} removed, {{num .Skipped}} unchanged{{if .Err}}; <span class="err">failed: {{.Err}}</span>{{end}}.{{end}}</p>{{end}}
{{if .Repos}}{{template "pager" .Nav}}{{end}}
<p><small>rsbridge {{.Status.Version}} ({{.Status.Revision}}), running since {{time .Status.Started}}; store {{bytes .Status.Disk.StoreBytes}}.</small></p>
</body></html>{{end}}

{{define "summary"}}{{with .Status.Summary}}<h2>Summary</h2>
<p>{{num .Repositories}} repositories: {{if .Failing}}<span class="err"><b>{{num .Failing}} failing</b></span>{{else}}0 failing{{end}} (the last run that ended failed),
{{num .Running}} running, {{num .Waiting}} waiting for a slot, {{num .Never}} never harvested, {{num .OK}} ok; {{num .LiveRecords}} live records in all.</p>
{{with .Queue}}<p>Queue: {{len .Running}} of {{.Concurrency}} runs going (at most {{.PerHost}} per host){{range $i, $e := .Running}}{{if $i}},{{else}}:{{end}} {{.Repository}} ({{.Kind}} on {{.Host}} since {{time .Since}}){{end}};
{{num .Waiting}} waiting{{range $i, $e := .FirstWaiting}}{{if $i}},{{else}}, the first:{{end}} {{.Repository}} ({{.Kind}} on {{.Host}} since {{time .Since}}){{end}}{{if gt .Waiting (len .FirstWaiting)}}, …{{end}}.</p>{{end}}{{end}}{{end}}

{{define "nav"}}<p>Show: {{range $i, $l := .States}}{{if $i}} · {{end}}{{if .Current}}<b>{{.Label}}</b>{{else}}<a href="{{.Href}}">{{.Label}}</a>{{end}}{{end}}
{{if .Narrowed}} · <a href="{{.Clear}}">clear the host and name filters</a>{{end}}</p>
<form method="get" action="">{{with .Filter.State}}<input type="hidden" name="state" value="{{.}}">{{end}}{{with .Filter.Host}}<input type="hidden" name="host" value="{{.}}">{{end}}
<label>name contains <input name="q" value="{{.Filter.Name}}" size="16"></label> <button>filter</button>{{if .Filter.Host}} on host <code>{{.Filter.Host}}</code>{{end}}</form>
{{template "pager" .}}{{end}}

{{define "pager"}}<p>{{if .Pages}}Page {{num .Page}} of {{num .Pages}}{{else}}No page{{end}} ({{num .Matching}} matching, {{.PerPage}} per page){{with .Prev}} · <a href="{{.}}" rel="prev">previous page</a>{{end}}{{with .Next}} · <a href="{{.}}" rel="next">next page</a>{{end}}</p>{{end}}

{{define "chart"}}<svg width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Label}}"><title>{{.Label}}</title>
<line x1="0" y1="{{.H}}" x2="{{.W}}" y2="{{.H}}" stroke="#bbb"/>
{{range .Bars}}<g><title>{{.Title}}</title>{{range .Rects}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}"/>{{end}}</g>
{{end}}</svg>{{if .Max}}<br><small>max {{num .Max}}/day</small>{{end}}{{end}}


`))
}

type homeSet struct{ Label, CapabilityList, About string }

// homeSetsShown is how many resource sets per format the home page lists;
// the Source Description lists them all.
const homeSetsShown = 20

type homeFormat struct {
	FormatReport
	Sets     []homeSet
	MoreSets int
	Held     []store.Quarantined // the first few
	Chart    chart
}

type homeRepo struct {
	RepoReport
	Formats []homeFormat
}

// homeNav is the status page's navigation: the state filters, the page
// links, the selection.
type homeNav struct {
	States                []homeLink
	Filter                StatusFilter
	Narrowed              bool   // a host or name filter is set
	Clear                 string // the same without them
	Page, Pages, Matching int
	PerPage               int
	Prev, Next            string // "": none
}

type homeLink struct {
	Label, Href string
	Current     bool
}

// statusNav builds the navigation of a status page. The state links keep
// the host and name filters and start again at page 1; the counts they
// show are of every repository, so they are left out while a host or name
// filter narrows the list.
func statusNav(st *Status) homeNav {
	f := st.Filter
	nav := homeNav{Filter: f, Narrowed: f.Host != "" || f.Name != "", Page: st.Page, Pages: st.Pages, Matching: st.Matching, PerPage: st.PerPage}
	href := func(f StatusFilter, page int) string { return statusHref(f, page, st.PerPage) }
	all := "all"
	if !nav.Narrowed {
		all = fmt.Sprintf("all (%s)", num(st.Summary.Repositories))
	}
	nav.States = append(nav.States, homeLink{Label: all, Href: href(StatusFilter{Host: f.Host, Name: f.Name}, 1), Current: f.State == ""})
	for _, state := range repoStates() {
		label := state
		if !nav.Narrowed {
			label = fmt.Sprintf("%s (%s)", state, num(st.Summary.ByState(state)))
		}
		nav.States = append(nav.States, homeLink{Label: label, Href: href(StatusFilter{State: state, Host: f.Host, Name: f.Name}, 1), Current: f.State == state})
	}
	nav.Clear = href(StatusFilter{State: f.State}, 1)
	if st.Page > 1 {
		nav.Prev = href(f, min(st.Page-1, max(st.Pages, 1)))
	}
	if st.Page < st.Pages {
		nav.Next = href(f, st.Page+1)
	}
	return nav
}

// statusHref is the relative link to a page of a selection ("?" alone:
// the first page of everything).
func statusHref(f StatusFilter, page, perPage int) string {
	v := url.Values{}
	for k, x := range map[string]string{"state": f.State, "host": f.Host, "q": f.Name} {
		if x != "" {
			v.Set(k, x)
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if perPage != perPageDefault {
		v.Set("per_page", strconv.Itoa(perPage))
	}
	return "?" + v.Encode()
}

// home is the status page: a summary of every repository, then one page
// of them (failing ones first; ?state, ?host, ?q, ?page, ?per_page as for
// status.json), each with what runs, what ran and what is held. It carries
// no <link rel="resourcesync">: such a link must name a Capability List
// that covers the linking page (RS-044, RS-046), and no Capability List
// lists this page; destinations start at the Source Description, which
// the page links in its text.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	q, err := ParseStatusQuery(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.status(r.Context(), true, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data := struct {
		Status *Status
		Nav    homeNav
		Repos  []homeRepo
	}{Status: v.Status, Nav: statusNav(v.Status)}
	if data.Repos, err = s.homeRepos(r.Context(), v); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if err := s.pages.ExecuteTemplate(w, "home", data); err != nil {
		s.log.Error("home page", "err", err)
	}
}

// homeRepos adds to the page's repositories what only the HTML shows:
// resource set links, charts and the first quarantined records.
func (s *Server) homeRepos(ctx context.Context, v *statusView) ([]homeRepo, error) {
	hide := s.cfg().Status.HideErrors
	var out []homeRepo
	err := s.db.View(ctx, func(snap *store.Snap) error {
		for i, rr := range v.Repositories {
			hr := homeRepo{RepoReport: rr}
			for _, fr := range rr.Formats {
				hf, err := s.homeFormat(snap, v.repos[i], v.specs[i], fr, hide)
				if err != nil {
					return err
				}
				hr.Formats = append(hr.Formats, hf)
			}
			out = append(out, hr)
		}
		return nil
	})
	return out, err
}

// homeFormat is one format of a repository on the status page.
func (s *Server) homeFormat(snap *store.Snap, repo config.Repository, specs []string, fr FormatReport, hide bool) (homeFormat, error) {
	hf := homeFormat{FormatReport: fr, Chart: eventsChart(fr.EventsPerDay)}
	all := s.src.All(repo, fr.Prefix)
	hf.Sets = append(hf.Sets, homeSet{Label: "all records", CapabilityList: all.CapabilityList(), About: all.About()})
	for j, spec := range specs {
		if j >= homeSetsShown {
			hf.MoreSets = len(specs) - homeSetsShown
			break
		}
		rs := s.src.Set(repo, fr.Prefix, spec)
		hf.Sets = append(hf.Sets, homeSet{Label: "set " + spec, CapabilityList: rs.CapabilityList(), About: rs.About()})
	}
	_, err := snap.Quarantine(repo.Name, fr.Prefix, 20, func(q store.Quarantined) error {
		q.Identifier = source.Clip(q.Shown(), 260)
		if hide {
			q.Reason = hiddenError
		}
		hf.Held = append(hf.Held, q)
		return nil
	})
	return hf, err
}

// runSummary is one line about a finished run.
func runSummary(r *RunReport) string {
	if r == nil {
		return "never"
	}
	out := fmt.Sprintf("%s, %s, took %s: %s records read, %s created, %s updated, %s deleted",
		r.Ended.UTC().Format("2006-01-02 15:04:05 UTC"), r.Kind, time.Duration(r.DurationSeconds*float64(time.Second)).Round(time.Second),
		num(r.Records), num(r.Created), num(r.Updated), num(r.Deleted))
	if r.Quarantined > 0 {
		out += fmt.Sprintf(", %s quarantined", num(r.Quarantined))
	}
	if r.Error != "" {
		out += ": " + source.Clip(r.Error, 600)
	}
	return out
}

// num writes an integer with thousands separators.
func num(n any) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// chart is a small stacked bar chart, drawn as inline SVG by the template.
type chart struct {
	W, H  int
	Max   int64
	Label string
	Bars  []chartBar
}

type chartBar struct {
	Title string
	Rects []chartRect
}

type chartRect struct {
	X, Y, W, H int
	Fill       string
}

// eventsChart draws events per day: created (green), updated (blue) and
// deleted (red) stacked, one bar per day, scaled to the busiest day.
func eventsChart(days []store.DayCount) chart {
	const barW, gap, height = 6, 2, 40
	c := chart{W: len(days) * (barW + gap), H: height}
	var total int64
	for _, d := range days {
		c.Max = max(c.Max, d.Total())
		total += d.Total()
	}
	c.Label = fmt.Sprintf("%s change events in %d days", num(total), len(days))
	for i, d := range days {
		b := chartBar{Title: fmt.Sprintf("%s: %s created, %s updated, %s deleted", d.Day, num(d.Created), num(d.Updated), num(d.Deleted))}
		y := height
		for _, part := range []struct {
			n    int64
			fill string
		}{{d.Created, "#2a8"}, {d.Updated, "#38c"}, {d.Deleted, "#c44"}} {
			if part.n == 0 || c.Max == 0 {
				continue
			}
			h := max(int(part.n*height/c.Max), 1)
			y -= h
			b.Rects = append(b.Rects, chartRect{X: i * (barW + gap), Y: y, W: barW, H: h, Fill: part.fill})
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// about describes one resource set (source.About).
func (s *Server) about(w http.ResponseWriter, r *http.Request, rs source.Set) {
	s.serveSnap(w, r, func(snap *store.Snap) (source.Doc, error) { return s.src.About(snap, rs) })
}

// robots allows everything and names, as server.robots selects, the
// all-records Resource Lists (default), every Resource List, or none as
// Sitemaps.
func (s *Server) robots(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("User-agent: *\nAllow: /\n")
	switch s.cfg().Server.Robots {
	case config.RobotsAll:
		sets, err := s.src.Sets(r.Context())
		if err != nil {
			s.fail(w, r, err)
			return
		}
		b.WriteString("\n")
		for _, rs := range sets {
			b.WriteString("Sitemap: " + rs.ResourceList() + "\n")
		}
	case config.RobotsAllRecords:
		b.WriteString("\n")
		for _, repo := range s.cfg().Repositories {
			for _, p := range repo.MetadataPrefixes {
				rs := s.src.All(repo, p)
				b.WriteString("Sitemap: " + rs.ResourceList() + "\n")
			}
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, b.String())
}
