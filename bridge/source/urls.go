package source

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// The URL scheme. Below the base URL:
//
//	/.well-known/resourcesync               Source Description (or its index)
//	/sourcedescription-N.xml?start=&end=    a page of that index
//	/{repo}/{prefix}/all/...                the set of all records of a format
//	/{repo}/{prefix}/set/{spec}/...         a published OAI set
//	  capabilitylist.xml about.html resourcelist.xml resourcelist-N.xml
//	  changelist.xml changelist-{id}.xml changenotification.xml
//	  resourcedump.xml changedump.xml dump/{file}
//	/{repo}/{prefix}/resource/{id}          a record's metadata
//	/{repo}/map/{id}, /{repo}/map-0.2/{id}  its ORE resource map (1.0, 0.2)
//	/websub                                 the embedded hub

// Path is the set's URL, the prefix of all its documents.
func (rs Set) Path() string {
	p := rs.base + "/" + url.PathEscape(rs.Repo.Name) + "/" + url.PathEscape(rs.Prefix)
	if rs.Spec == store.AllSet {
		return p + "/all"
	}
	return p + "/set/" + url.PathEscape(rs.Spec)
}

func (rs Set) CapabilityList() string  { return rs.Path() + "/capabilitylist.xml" }
func (rs Set) About() string           { return rs.Path() + "/about.html" }
func (rs Set) ResourceList() string    { return rs.Path() + "/resourcelist.xml" }
func (rs Set) ChangeListIndex() string { return rs.Path() + "/changelist.xml" }
func (rs Set) ChangeList(id string) string {
	return rs.Path() + "/changelist-" + id + ".xml"
}
func (rs Set) Topic() string        { return rs.Path() + "/changenotification.xml" }
func (rs Set) ResourceDump() string { return rs.Path() + "/resourcedump.xml" }
func (rs Set) ChangeDump() string   { return rs.Path() + "/changedump.xml" }

// DumpFile is the URL of a package or manifest copy (its file name).
func (rs Set) DumpFile(file string) string { return rs.Path() + "/dump/" + filepath.Base(file) }

// DumpDir is the set's directory below the dump directory.
func (rs Set) DumpDir() string {
	d := "all"
	if rs.Spec != store.AllSet {
		d = "set-" + rs.Spec // setSpecs are [A-Za-z0-9_.!~*'()-] and ':' (config and OAI-PMH)
	}
	return filepath.Join(rs.Repo.Name, rs.Prefix, d)
}

// ResourceListPage is the URL of page n of a Resource List Index: the key
// range [start, end), with no start on the first page and no end on the last.
func (rs Set) ResourceListPage(n int, start, end string) string {
	return rangeURL(fmt.Sprintf("%s/resourcelist-%05d.xml", rs.Path(), n), start, end)
}

// Resource is where rsbridge serves a record of the set's format.
func (rs Set) Resource(id string) string { return ResourceURL(rs.base, rs.Repo.Name, rs.Prefix, id) }

// ResourceIn is where rsbridge serves a record in another format.
func (rs Set) ResourceIn(prefix, id string) string {
	return ResourceURL(rs.base, rs.Repo.Name, prefix, id)
}

// SourceDescriptionURL is the Source Description's URL.
func (s *Source) SourceDescriptionURL() string { return s.base + "/.well-known/resourcesync" }

func (s *Source) sourceDescriptionPage(n int, start, end string) string {
	return rangeURL(fmt.Sprintf("%s/sourcedescription-%05d.xml", s.base, n), start, end)
}

// Hub is the hub destinations subscribe at.
func (s *Source) Hub() string { return HubURL(s.cfg) }

// HubURL is a configuration's hub: notification.hub_url, or the embedded one.
func HubURL(cfg *config.Config) string {
	if cfg.Notification.HubURL != "" {
		return cfg.Notification.HubURL
	}
	return strings.TrimRight(cfg.BaseURL, "/") + "/websub"
}

// rangeURL is the URL of an index page that lists the key range
// [start, end): "" leaves that end open.
func rangeURL(u, start, end string) string {
	sep := "?"
	if start != "" {
		u += sep + "start=" + url.QueryEscape(start)
		sep = "&"
	}
	if end != "" {
		u += sep + "end=" + url.QueryEscape(end)
	}
	return u
}

// ResourceURL is where rsbridge serves a record; identifiers are one escaped
// path segment, so slashes, spaces and non-ASCII survive.
func ResourceURL(base, repo, prefix, id string) string {
	return base + "/" + url.PathEscape(repo) + "/" + url.PathEscape(prefix) + "/resource/" + Segment(id)
}

// Segment escapes a value as one path segment. "." and ".." are dot
// segments that clients and routers remove (RFC 3986 §5.2.4), so their dots
// are percent-encoded; every other value is url.PathEscape's.
func Segment(v string) string {
	if v == "." || v == ".." {
		return strings.Repeat("%2E", len(v))
	}
	return url.PathEscape(v)
}

// MapURL is a record's ORE resource map (Atom, ORE 1.0).
func MapURL(base, repo, id string) string {
	return base + "/" + url.PathEscape(repo) + "/map/" + Segment(id)
}

// Map02URL is the same map in the ORE 0.2 profile JAIRO Cloud reads.
func Map02URL(base, repo, id string) string {
	return base + "/" + url.PathEscape(repo) + "/map-0.2/" + Segment(id)
}

// AggregationURL is the ORE aggregation a record's metadata belongs to.
func AggregationURL(base, repo, id string) string { return MapURL(base, repo, id) + "#aggregation" }

// GetRecordURL returns a function building the upstream OAI-PMH GetRecord
// request of a record in one format; the fixed part is built once per document.
func GetRecordURL(base, prefix string) func(id string) string {
	u, err := url.Parse(base)
	if err != nil {
		return func(string) string { return base }
	}
	q := u.Query()
	q.Set("verb", "GetRecord")
	q.Set("metadataPrefix", prefix)
	u.RawQuery = q.Encode()
	head := u.String() + "&identifier="
	return func(id string) string { return head + url.QueryEscape(id) }
}

// via is the upstream GetRecord URL builder of the set's format: of the
// format it is converted from, for a derived one.
func (s *Source) via(rs Set) func(string) string {
	return GetRecordURL(s.cfg.PublicBaseURL(rs.Repo), UpstreamPrefix(rs.Repo, rs.Prefix))
}

// UpstreamPrefix is the format the repository serves a format's records
// in: the format itself, or the one a derived format is converted from.
func UpstreamPrefix(repo config.Repository, prefix string) string {
	if from, ok := repo.DerivedFrom(prefix); ok {
		return from
	}
	return prefix
}
