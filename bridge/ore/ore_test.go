package ore

import (
	"bytes"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const (
	gw     = "https://rs.example.org/ir-a/records/00000123/"
	oaiID  = "oai:ir-a.example.ac.jp:00000123"
	nsJP20 = "https://github.com/JPCOAR/schema/blob/master/2.0/"
)

// t0 and t1 are when the test records were first seen and last changed.
func t0() time.Time { return time.Date(2024, 3, 31, 2, 0, 0, 0, time.UTC) }
func t1() time.Time { return time.Date(2024, 4, 1, 3, 0, 5, 0, time.UTC) }

// baseMap is what the gateway knows of an item before looking at its records.
func baseMap() Map {
	return Map{
		URI:           gw + "rem.atom",
		AltURI:        gw + "rem-0.2.atom",
		ID:            MapID("ir-a", oaiID),
		OAIIdentifier: oaiID,
		Author:        Agent{Name: "OAI-PMH to ResourceSync gateway", URI: "https://rs.example.org/"},
		IsPartOf:      []string{"https://rs.example.org/ir-a/sets/theses"},
		Rights:        "https://creativecommons.org/publicdomain/zero/1.0/",
	}
}

// recordOf extracts one test document and describes it as the gateway's record.
func recordOf(t testing.TB, file, host string) (MetadataRecord, Facts) {
	t.Helper()
	doc := readTestdata(t, file)
	f, err := Extract(doc, host)
	if err != nil {
		t.Fatal(err)
	}
	rec := MetadataRecord{FirstSeen: t0(), Modified: t1(), Length: int64(len(doc))}
	switch f.Format {
	case FormatJPCOAR:
		rec.Prefix, rec.Namespace = "jpcoar_2.0", nsJP20
	case FormatJunii2:
		rec.Prefix, rec.Namespace = "junii2", nsJunii2
	default:
		rec.Prefix, rec.Namespace = "oai_dc", nsOAIDC
	}
	rec.URL = gw + rec.Prefix + ".xml"
	return rec, f
}

// jpcoarMap assembles the map of an item with one test record.
func itemMap(t testing.TB, file, host string) Map {
	t.Helper()
	rec, f := recordOf(t, file, host)
	return Assemble(baseMap(), []MetadataRecord{rec}, []Facts{f}, AssembleOptions{})
}

func write(t testing.TB, m Map, ore10 bool) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	if ore10 {
		err = m.WriteORE10(&b)
	} else {
		err = m.WriteORE02(&b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	m := itemMap(t, "jpcoar-2.0-12.xml", "kokusho.nijl.ac.jp")
	for _, c := range []struct {
		name  string
		ore10 bool
	}{{"jpcoar-2.0-12.ore10.golden", true}, {"jpcoar-2.0-12.ore02.golden", false}} {
		t.Run(c.name, func(t *testing.T) {
			got := write(t, m, c.ore10)
			path := filepath.Join("testdata", c.name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (go test -run TestGolden -update rewrites it):\n%s", path, got)
			}
		})
	}
}

// TestProfiles writes both documents for every test record and checks them
// structurally against the rules, with xmllint too when it is there.
func TestProfiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.xml")
	if len(files) < 15 {
		t.Fatalf("only %d test documents", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			m := itemMap(t, name, "repo.example.ac.jp")
			if m.AltURI == "" {
				t.Fatal("no AltURI")
			}
			doc10 := write(t, m, true)
			check10(t, m, doc10)
			xmllint(t, "ore10.atom", doc10)
			doc02 := write(t, m, false)
			check02(t, m, doc02)
			xmllint(t, "ore02.atom", doc02)
		})
	}
}

func one(t *testing.T, rule string, list []*node) *node {
	t.Helper()
	if len(list) != 1 {
		t.Fatalf("%s: %d elements, want exactly one", rule, len(list))
	}
	return list[0]
}

func atMostOne(t *testing.T, rule string, list []*node) {
	t.Helper()
	if len(list) > 1 {
		t.Errorf("%s: %d elements, want at most one", rule, len(list))
	}
}

func date(t *testing.T, rule string, n *node) time.Time {
	t.Helper()
	if d, err := time.Parse("2006-01-02T15:04:05Z", n.text); err != nil || d.Format("2006-01-02T15:04:05Z") != n.text {
		t.Errorf("%s: %q is not YYYY-MM-DDThh:mm:ssZ (ORE-005)", rule, n.text)
	}
	d, err := time.Parse(time.RFC3339, n.text)
	if err != nil {
		t.Errorf("%s: %v (ORE-004)", rule, err)
	}
	return d
}

func isIRI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}

// wantARs is the list of aggregated resource URIs of m as IRIs, deduplicated
// in order.
func wantARs(m Map) []string {
	var uris []string
	for _, r := range m.Resources {
		uris = append(uris, r.URI)
	}
	return iris(uris)
}

// alternatesUnique checks RFC 4287 4.1.1/4.1.2: no two alternate links with the
// same type and hreflang.
func alternatesUnique(t *testing.T, rule string, n *node) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range n.links("alternate") {
		k := l.attr("", "type") + "\x00" + l.attr("", "hreflang")
		if seen[k] {
			t.Errorf("%s: two alternate links with type %q", rule, l.attr("", "type"))
		}
		seen[k] = true
	}
}

// check02 checks a 0.2 profile document against ORE-006..ORE-036 and ORE-041.
func check02(t *testing.T, m Map, doc []byte) {
	t.Helper()
	feed := parseTree(t, doc)
	if feed.name.Space != nsAtom || feed.name.Local != "feed" {
		t.Fatalf("root is %v, want atom:feed", feed.name)
	}
	authors := feed.all(nsAtom, "author")
	if len(authors) == 0 {
		t.Error("ORE-007: no atom:author")
	}
	for _, a := range authors {
		if n := one(t, "ORE-007 author/name", a.all(nsAtom, "name")); n.text == "" {
			t.Error("ORE-007: empty author name")
		}
		if u := a.all(nsAtom, "uri"); len(u) != 1 || !isIRI(u[0].text) {
			t.Error("ORE-007/GW-ORE-03: author without a uri")
		}
	}
	var resourceMap int
	for _, c := range feed.all(nsAtom, "category") {
		if c.attr("", "scheme") == nsORE && c.attr("", "term") == nsORE+"ResourceMap" && c.attr("", "label") == "Resource Map" {
			resourceMap++
		}
	}
	if resourceMap != 1 {
		t.Errorf("ORE-008: %d ResourceMap categories, want 1", resourceMap)
	}
	entries := feed.all(nsAtom, "entry")
	if len(entries) == 0 {
		t.Error("ORE-010: no entry")
	}
	atMostOne(t, "ORE-011 generator", feed.all(nsAtom, "generator"))
	if icon := one(t, "ORE-011/012 icon", feed.all(nsAtom, "icon")); icon.text != icon02 {
		t.Errorf("ORE-012: icon %q", icon.text)
	}
	if logo := one(t, "ORE-011/012 logo", feed.all(nsAtom, "logo")); logo.text != logo02 {
		t.Errorf("ORE-012: logo %q", logo.text)
	}
	if id := one(t, "ORE-013 feed id", feed.all(nsAtom, "id")); id.text != m.ID || !isIRI(id.text) {
		t.Errorf("ORE-013: feed id %q, want %q", id.text, m.ID)
	}
	self := one(t, "ORE-014 self link", feed.links("self"))
	if self.attr("", "type") != MediaType || self.attr("", "href") != m.AltURI {
		t.Errorf("ORE-014: self link type %q href %q", self.attr("", "type"), self.attr("", "href"))
	}
	describes := one(t, "ORE-015 describes link", feed.links("describes"))
	if href := describes.attr("", "href"); href != self.attr("", "href")+"#aggregation" {
		t.Errorf("ORE-015: describes %q, want the feed's own URI-R + #aggregation %q", href, self.attr("", "href")+"#aggregation")
	}
	var to10 int
	for _, l := range feed.links("related") {
		switch l.attr("", "href") {
		case describes.attr("", "href"):
			t.Error("ORE-016: related link to URI-A")
		case m.Aggregation:
			to10++
		}
	}
	if to10 != 1 {
		t.Errorf("ORE-016: %d related links to the 1.0 document's URI-A %q, want 1", to10, m.Aggregation)
	}
	alternatesUnique(t, "ORE-017", feed)
	if alt := one(t, "ORE-017 link to the 1.0 document", feed.links("alternate")); alt.attr("", "href") != m.URI || alt.attr("", "type") != MediaType {
		t.Errorf("feed alternate link %q %q", alt.attr("", "href"), alt.attr("", "type"))
	}
	if l := feed.links("resourcesync"); len(l) > 0 {
		t.Errorf("RS-046: %d resourcesync links in a Resource Map, which no Capability List lists", len(l))
	}
	atMostOne(t, "ORE-018 rights", feed.all(nsAtom, "rights"))
	checkRights(t, m, feed)
	atMostOne(t, "ORE-019 subtitle", feed.all(nsAtom, "subtitle"))
	if title := one(t, "ORE-019 title", feed.all(nsAtom, "title")); !strings.HasPrefix(title.text, "Resource Map: ") {
		t.Errorf("GW-ORE-03: title %q", title.text)
	}
	feedUpdated := date(t, "ORE-019 feed updated", one(t, "ORE-019 updated", feed.all(nsAtom, "updated")))
	if g := feed.attr(nsGRDDL, "transformation"); g != "http://www.openarchives.org/ore/0.2/atom-grddl.xsl" {
		t.Errorf("ORE-041: grddl:transformation %q", g)
	}
	for _, c := range feed.children {
		if c.name.Space == nsAtom {
			continue
		}
		switch c.name.Space + c.name.Local {
		case nsRDF + "type", nsDCTerms + "creator", nsDCTerms + "isPartOf":
			if !isIRI(c.text) {
				t.Errorf("ORE-022: %s content %q is not a URI", c.name.Local, c.text)
			}
		default:
			t.Errorf("ORE-022: unexpected feed extension %v", c.name)
		}
	}
	ids := map[string]bool{}
	var ars []string
	for _, e := range entries {
		if len(e.all(nsAtom, "author")) > 0 {
			t.Error("ORE-024: entry has an author")
		}
		if len(e.all(nsAtom, "content")) > 0 {
			t.Error("ORE-026: entry has content")
		}
		alt := one(t, "ORE-029 entry alternate link", e.links("alternate"))
		uriAR := alt.attr("", "href")
		if typ := alt.attr("", "type"); typ == "" || !isMediaType(typ) {
			t.Errorf("ORE-029: %s has no media type", uriAR)
		} else if r := resourceByURI(m, uriAR); r != nil && r.Type != "" && typ != r.Type {
			t.Errorf("ORE-029: %s type %q, want %q", uriAR, typ, r.Type)
		}
		ars = append(ars, uriAR)
		id := one(t, "ORE-028 entry id", e.all(nsAtom, "id"))
		if id.text == uriAR || !isIRI(id.text) {
			t.Errorf("ORE-028: entry id %q for %q", id.text, uriAR)
		}
		if ids[id.text] {
			t.Errorf("ORE-020: entry id %q twice", id.text)
		}
		ids[id.text] = true
		if n := len(e.all(nsAtom, "link")); n != 1 {
			t.Errorf("ORE-031/032: entry %s has %d links, want only its alternate", uriAR, n)
		}
		published := one(t, "ORE-033 published (always written)", e.all(nsAtom, "published"))
		date(t, "ORE-033", published)
		if len(e.all(nsAtom, "rights")) > 0 {
			t.Error("ORE-034: entry has rights")
		}
		atMostOne(t, "ORE-035 source", e.all(nsAtom, "source"))
		atMostOne(t, "ORE-035 summary", e.all(nsAtom, "summary"))
		if title := one(t, "ORE-035 entry title", e.all(nsAtom, "title")); title.text == "" {
			t.Errorf("ORE-035: empty title for %s", uriAR)
		}
		if u := date(t, "ORE-035 entry updated", one(t, "ORE-035 entry updated", e.all(nsAtom, "updated"))); u.After(feedUpdated) {
			t.Errorf("ORE-038: entry %s updated %v after the feed's %v", uriAR, u, feedUpdated)
		}
		for _, c := range e.children {
			if c.name.Space == nsAtom {
				continue
			}
			switch c.name.Space + c.name.Local {
			case nsRDF + "type", nsDCTerms + "conformsTo", nsDCTerms + "type":
				if strings.TrimSpace(c.text) == "" {
					t.Errorf("ORE-036: empty %s", c.name.Local)
				}
			default:
				t.Errorf("ORE-036: unexpected entry extension %v", c.name)
			}
		}
	}
	if want := wantARs(m); strings.Join(ars, "\n") != strings.Join(want, "\n") {
		t.Errorf("aggregated resources:\n got %q\nwant %q", ars, want)
	}
}

// checkRights: a Map with Rights has exactly one atom:rights holding that
// licence URI (ORE-018); one without has none.
func checkRights(t *testing.T, m Map, n *node) {
	t.Helper()
	rights := n.all(nsAtom, "rights")
	if m.Rights == "" {
		if len(rights) > 0 {
			t.Errorf("ORE-018: rights %q without Rights", rights[0].text)
		}
		return
	}
	if r := one(t, "ORE-018 rights", rights); r.text != m.Rights || !isIRI(r.text) {
		t.Errorf("ORE-018: rights %q, want the licence URI %q", r.text, m.Rights)
	}
}

func resourceByURI(m Map, uri string) *Resource {
	for i := range m.Resources {
		if m.Resources[i].URI == uri {
			return &m.Resources[i]
		}
	}
	return nil
}

// check10 checks an ORE 1.0 Atom entry (digest section 6) and RFC 4287's
// entry rules.
func check10(t *testing.T, m Map, doc []byte) {
	t.Helper()
	e := parseTree(t, doc)
	if e.name.Space != nsAtom || e.name.Local != "entry" {
		t.Fatalf("root is %v, want atom:entry", e.name)
	}
	id := one(t, "entry id", e.all(nsAtom, "id"))
	if !isIRI(id.text) || id.text == m.ID {
		t.Errorf("entry id %q: want an IRI that is not the 0.2 feed's id", id.text)
	}
	self := one(t, "self link", e.links("self"))
	if self.attr("", "href") != m.URI || self.attr("", "type") != MediaType {
		t.Errorf("self link %q %q", self.attr("", "href"), self.attr("", "type"))
	}
	if d := one(t, "ore:describes link", e.links(nsORE+"describes")); d.attr("", "href") != m.Aggregation || d.attr("", "href") != self.attr("", "href")+"#aggregation" {
		t.Errorf("describes %q, want the entry's own URI-R + #aggregation %q", d.attr("", "href"), self.attr("", "href")+"#aggregation")
	}
	one(t, "title", e.all(nsAtom, "title"))
	checkRights(t, m, e)
	u := date(t, "updated", one(t, "updated", e.all(nsAtom, "updated")))
	atMostOne(t, "published", e.all(nsAtom, "published"))
	if len(e.all(nsAtom, "content")) > 0 {
		t.Error("entry has content")
	}
	authors := e.all(nsAtom, "author")
	if len(authors) == 0 {
		t.Error("no author")
	}
	for _, a := range authors {
		one(t, "author/name", a.all(nsAtom, "name"))
	}
	src := one(t, "source", e.all(nsAtom, "source"))
	if n := one(t, "source/author/name", one(t, "source/author", src.all(nsAtom, "author")).all(nsAtom, "name")); n.text != m.Author.Name {
		t.Errorf("source author %q", n.text)
	}
	var agg int
	for _, c := range e.all(nsAtom, "category") {
		if c.attr("", "scheme") == nsORE && c.attr("", "term") == nsORE+"Aggregation" && c.attr("", "label") == "Aggregation" {
			agg++
		}
	}
	if agg != 1 {
		t.Errorf("%d Aggregation categories, want 1", agg)
	}
	alternatesUnique(t, "RFC 4287 4.1.2", e)
	alts := e.links("alternate")
	if len(alts) == 0 {
		t.Error("RFC 4287 4.1.2: no alternate link in an entry without content")
	}
	var toAlt int
	for _, a := range alts {
		if a.attr("", "href") == m.AltURI && a.attr("", "type") == MediaType {
			toAlt++
		}
	}
	if toAlt != 1 {
		t.Errorf("%d alternate links to the 0.2 document, want 1", toAlt)
	}
	if l := e.links("resourcesync"); len(l) > 0 {
		t.Errorf("RS-046: %d resourcesync links in a Resource Map, which no Capability List lists", len(l))
	}
	var ars []string
	for _, l := range e.links(nsORE + "aggregates") {
		ars = append(ars, l.attr("", "href"))
		r := resourceByURI(m, l.attr("", "href"))
		if r == nil {
			continue
		}
		if typ := l.attr("", "type"); !isMediaType(typ) || (r.Type != "" && typ != r.Type) {
			t.Errorf("aggregates %s type %q, want %q", r.URI, typ, r.Type)
		}
		if !r.Updated.IsZero() && r.Updated.After(u) {
			t.Errorf("resource %s updated after the map", r.URI)
		}
	}
	if want := wantARs(m); strings.Join(ars, "\n") != strings.Join(want, "\n") {
		t.Errorf("aggregated resources:\n got %q\nwant %q", ars, want)
	}
	for _, tr := range e.all(nsOREAtom, "triples") {
		for _, d := range tr.children {
			if d.name.Space != nsRDF || d.name.Local != "Description" || d.attr(nsRDF, "about") == "" {
				t.Errorf("oreatom:triples child %v without rdf:about", d.name)
			}
		}
	}
}

func TestWriterRefusals(t *testing.T) {
	good := itemMap(t, "jpcoar-2.0-10.xml", "")
	cases := []struct {
		name    string
		edit    func(*Map)
		ore10   string // error substring, "" = succeeds
		ore02   string
		invalid bool
	}{
		{"metadata only, no landing page: fine", func(*Map) {}, "", "", false},
		{"no AltURI: 0.2 has no self link, 1.0 no alternate", func(m *Map) { m.AltURI = "" }, "neither a landing page nor AltURI", "no AltURI", false},
		{"no resource", func(m *Map) { m.Resources = nil }, "ORE-010", "ORE-010", true},
		{"no author", func(m *Map) { m.Author.Name = "" }, "ORE-007", "ORE-007", true},
		{"no id", func(m *Map) { m.ID = "" }, "no ID", "no ID", true},
		{"URI-A is the document", func(m *Map) { m.Aggregation = m.AltURI }, "is a document URI", "is a document URI", true},
		{"URI-A is not URI#aggregation", func(m *Map) { m.Aggregation = m.AltURI + "#aggregation" }, "ORE-015", "ORE-015", true},
		{"URI-R with a fragment", func(m *Map) { m.URI += "#x"; m.Aggregation = m.URI + "#aggregation" }, "has a fragment", "has a fragment", true},
		{"AltURI is URI", func(m *Map) { m.AltURI = m.URI }, "is the URI of the 1.0 document", "is the URI of the 1.0 document", true},
		{"AltURI not a URI", func(m *Map) { m.AltURI = "rem-0.2.atom" }, "AltURI", "AltURI", true},
		{"relative URI", func(m *Map) { m.URI = "rem.atom" }, "not an absolute URI", "not an absolute URI", true},
		{"duplicate entry ids", func(m *Map) {
			m.Resources = append(m.Resources, Resource{URI: "https://x/1", ID: "urn:x"}, Resource{URI: "https://x/2", ID: "urn:x"})
		}, "ORE-020", "ORE-020", true},
		{"entry id is the URI", func(m *Map) { m.Resources = append(m.Resources, Resource{URI: "https://x/1", ID: "https://x/1"}) }, "ORE-028", "ORE-028", true},
		{"no time", func(m *Map) {
			m.Created, m.Updated = time.Time{}, time.Time{}
			for i := range m.Resources {
				m.Resources[i].Published, m.Resources[i].Updated = time.Time{}, time.Time{}
			}
		}, "no time", "no time", true},
		{"year 10000", func(m *Map) { m.Updated = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "outside years", "outside years", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := good
			m.Resources = append([]Resource(nil), good.Resources...)
			c.edit(&m)
			if err := m.Validate(); (err != nil) != c.invalid {
				t.Errorf("Validate: %v", err)
			}
			for _, w := range []struct {
				want  string
				write func(*bytes.Buffer) error
			}{{c.ore10, func(b *bytes.Buffer) error { return m.WriteORE10(b) }}, {c.ore02, func(b *bytes.Buffer) error { return m.WriteORE02(b) }}} {
				var b bytes.Buffer
				err := w.write(&b)
				switch {
				case w.want == "" && err != nil:
					t.Errorf("unexpected error %v", err)
				case w.want != "" && (err == nil || !strings.Contains(err.Error(), w.want)):
					t.Errorf("error %v, want one containing %q", err, w.want)
				case w.want != "" && b.Len() > 0:
					t.Errorf("%d bytes written before the error", b.Len())
				}
			}
		})
	}
}

// TestHostileStrings: whatever the Map holds, the output is well-formed.
func TestHostileStrings(t *testing.T) {
	m := itemMap(t, "jpcoar-2.0-12.xml", "")
	bad := "a<b>&c\"d'e\x00f\x1bg\xff\xfeh\uFFFEi\r\n\tj]]>k"
	m.Title = bad
	m.ItemAuthors = []Agent{{Name: bad, URI: "https://x/?a=1&b=\"2\""}}
	m.Resources = append(m.Resources, Resource{URI: "https://x/f?a=1&b=<2>", Kind: KindFile, Title: bad, Type: "text/plain", ObjectType: bad})
	m.Types = append(m.Types, "https://x/t?a&b")
	for _, ore10 := range []bool{true, false} {
		doc := write(t, m, ore10)
		root := parseTree(t, doc)
		xmllint(t, "hostile.atom", doc)
		if ore10 {
			title := one(t, "title", root.all(nsAtom, "title"))
			if want := "a<b>&c\"d'e\uFFFDf\uFFFDg\uFFFD\uFFFDh\uFFFDi\r\n\tj]]>k"; title.text != want {
				t.Errorf("title %q, want %q", title.text, want)
			}
		}
	}
}
