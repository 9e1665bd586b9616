package mirror

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/rsbridge/rsbridge/rsync"
)

// Set is one resource set of a source: its Capability List and the
// capabilities it lists (empty: not offered).
type Set struct {
	CapabilityList string
	ResourceList   string // a Resource List or its index
	ResourceDump   string
	ChangeList     string // a Change List or its index
	ChangeDump     string
	Notification   string // the change-notification topic
	Hub            string
}

// discover finds the resource sets from where the user pointed: a Source
// Description (or its index), a Capability List, any document that links
// up to one, a site's base URL (/.well-known/resourcesync), a robots.txt
// with Sitemap: lines, or an HTML page or HTTP answer with a
// rel="resourcesync" link (resourcesync.md RS-042..RS-047).
func (m *Mirror) discover(ctx context.Context, start string) ([]Set, error) {
	u, err := url.Parse(start)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not a URL to start from (a Source Description, a Capability List or a site)", start)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/.well-known/resourcesync"
		start = u.String()
	}
	caps, err := m.capabilityLists(ctx, start, 0)
	if err != nil {
		return nil, err
	}
	var sets []Set
	for _, cl := range caps {
		if !m.selected(cl) {
			continue
		}
		s, err := m.readCapabilities(ctx, cl)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			m.quirk(cl, "a Capability List the source names cannot be read; its set is skipped: "+err.Error())
			continue
		}
		sets = append(sets, s)
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("%s: no resource set found (or none matches -sets)", start)
	}
	return sets, nil
}

// selected reports whether a Capability List matches the set patterns
// (path.Match on its URL's path; none: all).
func (m *Mirror) selected(capList string) bool {
	if len(m.opts.Sets) == 0 {
		return true
	}
	p := capList
	if u, err := url.Parse(capList); err == nil {
		p = u.Path
	}
	return slices.ContainsFunc(m.opts.Sets, func(pat string) bool { ok, _ := path.Match(pat, p); return ok })
}

// capabilityLists follows a URL to the Capability Lists it stands for.
func (m *Mirror) capabilityLists(ctx context.Context, u string, depth int) ([]string, error) {
	if depth > 4 {
		return nil, fmt.Errorf("%s: discovery went round in circles", u)
	}
	resp, err := m.f.get(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if link := linkHeader(resp.Header, "resourcesync"); link != "" {
		return []string{resolve(u, link)}, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, m.f.maxDoc))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasSuffix(u, "/robots.txt"):
		return m.fromRobots(ctx, u, body, depth)
	case strings.Contains(ct, "html"):
		if link := htmlLink(body); link != "" {
			return []string{resolve(u, link)}, nil
		}
		return nil, fmt.Errorf("%s: an HTML page without <link rel=\"resourcesync\">", u)
	}
	doc, err := rsync.Parse(strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("%s: neither a ResourceSync document nor a page that links to one: %w", u, err)
	}
	return m.fromDocument(ctx, u, doc, depth)
}

// fromDocument: a Source Description lists Capability Lists (its index,
// pages of them); a Capability List is one; any other document links up.
func (m *Mirror) fromDocument(ctx context.Context, u string, doc *rsync.Document, depth int) ([]string, error) {
	switch doc.MD.Capability {
	case rsync.Description:
		var out []string
		for _, e := range doc.Entries {
			loc := resolve(u, e.Loc)
			if doc.Index {
				more, err := m.capabilityLists(ctx, loc, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
			} else if e.MD == nil || e.MD.Capability == "" || e.MD.Capability == rsync.CapabilityList {
				out = append(out, loc)
			}
		}
		return out, nil
	case rsync.CapabilityList:
		return []string{u}, nil
	}
	up := doc.Link("up")
	if up == "" {
		return nil, fmt.Errorf("%s: a %q document with no rel=\"up\" link to follow", u, doc.MD.Capability)
	}
	return m.capabilityLists(ctx, resolve(u, up), depth+1)
}

// fromRobots follows the Sitemap: lines of a robots.txt (RS-047).
func (m *Mirror) fromRobots(ctx context.Context, u string, body []byte, depth int) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "sitemap") {
			continue
		}
		more, err := m.capabilityLists(ctx, resolve(u, strings.TrimSpace(v)), depth+1)
		if err != nil {
			m.quirk(u, "a Sitemap line leads nowhere: "+err.Error())
			continue
		}
		for _, c := range more {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// readCapabilities reads a Capability List.
func (m *Mirror) readCapabilities(ctx context.Context, capList string) (Set, error) {
	doc, _, err := m.f.doc(ctx, capList)
	if err != nil {
		return Set{}, err
	}
	if doc.MD.Capability != rsync.CapabilityList {
		return Set{}, fmt.Errorf("%s: capability %q, want capabilitylist", capList, doc.MD.Capability)
	}
	s := Set{CapabilityList: capList}
	for _, e := range doc.Entries {
		if e.MD == nil {
			continue
		}
		loc := resolve(capList, e.Loc)
		switch e.MD.Capability {
		case rsync.ResourceList:
			s.ResourceList = loc
		case rsync.ResourceDump:
			s.ResourceDump = loc
		case rsync.ChangeList:
			s.ChangeList = loc
		case rsync.ChangeDump:
			s.ChangeDump = loc
		case "change-notification":
			s.Notification = loc
			for _, l := range e.Links {
				if l.Rel == "hub" {
					s.Hub = resolve(capList, l.Href)
				}
			}
		}
	}
	return s, nil
}

// resolve makes ref absolute against base.
func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

// linkHeader finds a Link header's target for a relation.
func linkHeader(h http.Header, rel string) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && slices.Contains(strings.Fields(strings.ToLower(strings.Trim(val, `"`))), rel) {
					return strings.Trim(strings.TrimSpace(target), "<>")
				}
			}
		}
	}
	return ""
}

var htmlLinkRE = regexp.MustCompile(`(?is)<link\b[^>]*>`)
var attrRE = regexp.MustCompile(`(?is)\b(rel|href)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)

// htmlLink finds <link rel="resourcesync" href="…"> in an HTML page.
func htmlLink(body []byte) string {
	for _, tag := range htmlLinkRE.FindAll(body, -1) {
		var rel, href string
		for _, a := range attrRE.FindAllSubmatch(tag, -1) {
			v := string(a[2]) + string(a[3]) + string(a[4])
			if strings.EqualFold(string(a[1]), "rel") {
				rel = v
			} else {
				href = v
			}
		}
		if slices.Contains(strings.Fields(strings.ToLower(rel)), "resourcesync") && href != "" {
			return href
		}
	}
	return ""
}
