package ore

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestIRI: hostile values become absolute IRIs (RFC 3987) or are dropped.
func TestIRI(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// Kept as they are.
		{"https://example.org/a%20b", "https://example.org/a%20b"},
		{"https://example.org/%e3%81%82", "https://example.org/%e3%81%82"},
		{"http://[::1]:8080/a?b=c#d", "http://[::1]:8080/a?b=c#d"},
		{"mailto:someone@example.org", "mailto:someone@example.org"},
		{"oai:ir-a.example.ac.jp:00000123", "oai:ir-a.example.ac.jp:00000123"},
		{"info:doi/10.1000/x;y(1)", "info:doi/10.1000/x;y(1)"},
		{"https://x/a?b=/c?d#e/f?g", "https://x/a?b=/c?d#e/f?g"},
		// Spaces, quotes, angle brackets, tabs and other excluded ASCII.
		{"https://example.org/a b", "https://example.org/a%20b"},
		{"  https://example.org/x \t\r\n", "https://example.org/x"},
		{`https://example.org/"q"`, "https://example.org/%22q%22"},
		{"https://example.org/<script>", "https://example.org/%3Cscript%3E"},
		{"https://x/?a=1&b=<2>", "https://x/?a=1&b=%3C2%3E"},
		{"https://example.org/a\tb", "https://example.org/a%09b"},
		{"https://example.org/a\r\nb", "https://example.org/a%0D%0Ab"},
		{"https://x/{a}|b\\c^d`e", "https://x/%7Ba%7D%7Cb%5Cc%5Ed%60e"},
		{"urn:uuid:x\x00y\x7f", "urn:uuid:x%00y%7F"},
		{"https://x/[a]", "https://x/%5Ba%5D"},
		{"https://x/a#b#c", "https://x/a#b%23c"},
		// A bare "%".
		{"https://example.org/100%", "https://example.org/100%25"},
		{"https://example.org/%zz%4", "https://example.org/%25zz%254"},
		{"https://example.org/%%41", "https://example.org/%25%41"},
		// Non-ASCII: ucschar kept, the rest encoded.
		{"https://例え.jp/論文/ファイル 1.pdf?q=日本語#第1章", "https://例え.jp/論文/ファイル%201.pdf?q=日本語#第1章"},
		{"https://x/\u3000全角", "https://x/\u3000全角"},
		{"https://x/\u200Ea\u202Eb", "https://x/%E2%80%8Ea%E2%80%AEb"},
		{"https://x/\u0085", "https://x/%C2%85"},
		{"https://x/\uFFFD", "https://x/%EF%BF%BD"},
		{"https://x/\U0001F600", "https://x/\U0001F600"},
		{"https://x/\U0001FFFE", "https://x/%F0%9F%BF%BE"},
		{"https://x/\uE000?\uE000", "https://x/%EE%80%80?\uE000"},
		{"https://x/\xff\xfe", "https://x/%FF%FE"},
		{"oai:ir-a.example.ac.jp:a b<c>", "oai:ir-a.example.ac.jp:a%20b%3Cc%3E"},
		// Not absolute IRIs: dropped.
		{"", ""},
		{"   ", ""},
		{"://example.org/x", ""},
		{":x", ""},
		{"example.org/x", ""},
		{"/relative/path", ""},
		{"?q#f", ""},
		{"1http://x/", ""},
		{"ht tp://x/", ""},
		{"h\u00e9://x/", ""},
		{"https:///path", ""},
		{"http:x", ""},
		{"https://exa mple.org/", ""},
		{"http://x:port/", ""},
		{"http://[zz]/", ""},
		{"not a uri", ""},
	} {
		got := iri(c.in)
		if got != c.want {
			t.Errorf("iri(%q) = %q, want %q", c.in, got, c.want)
		}
		if got == "" {
			continue
		}
		if !isAbsoluteIRI(got) {
			t.Errorf("iri(%q) = %q: not an absolute IRI", c.in, got)
		}
		if again := iri(got); again != got {
			t.Errorf("iri(iri(%q)) = %q, want %q", c.in, again, got)
		}
	}
}

// iriScheme matches the scheme of an absolute IRI and its colon.
var iriScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// isAbsoluteIRI is the tests' own check, independent of iri: a scheme, then
// only characters an IRI allows, "%" only in %XX escapes, at most one "#",
// and a URL that Go parses.
func isAbsoluteIRI(s string) bool {
	if !iriScheme.MatchString(s) || !utf8.ValidString(s) || strings.Count(s, "#") > 1 {
		return false
	}
	for i, r := range s {
		switch {
		case r == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
		case r < 0x80:
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=", r) {
				return false
			}
		case r < 0xA0, r == 0xFFFD, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E:
			return false
		}
	}
	_, err := url.Parse(s)
	return err == nil
}

// TestHrefsAreIRIs: every href, rdf:about and rdf:resource of both documents
// is an absolute IRI, however hostile the Map's URIs; values that cannot be
// one are left out, and the triples about a resource name it as its link does.
func TestHrefsAreIRIs(t *testing.T) {
	m := itemMap(t, "jpcoar-2.0-12.xml", "")
	m.OAIIdentifier = `oai:ir-a.example.ac.jp:a b"c`
	m.Related = []string{
		"https://doi.org/10.1000/a b",
		"https://example.org/<x>\t{y}",
		"://no-scheme",
		"relative/path",
		"https://例え.jp/論文 1",
		"https://example.org/100%",
	}
	m.Types = []string{`http://purl.org/coar/resource_type/"c_2f33"`, "not a type"}
	m.Creators = []string{"https://orcid.org/0000 0001"}
	m.IsPartOf = []string{"https://rs.example.org/ir-a/sets/a|b"}
	m.Author.URI = "https://rs.example.org/a b"
	m.ItemAuthors = []Agent{{Name: "x", URI: "not a uri"}}
	m.Resources = append(m.Resources,
		Resource{URI: "https://files.example.org/日本語 ファイル.pdf", Kind: KindFile, Type: "application/pdf", ObjectType: "fulltext"},
		Resource{URI: "https://files.example.org/a<b>.pdf", Kind: KindFile, ObjectType: "other"},
		Resource{URI: "no scheme at all", Kind: KindFile},
		Resource{URI: "https://files.example.org/%zz\t", Kind: KindMetadata, ConformsTo: "urn:x y"},
	)
	wantRelated := []string{
		"https://doi.org/10.1000/a%20b",
		"https://example.org/%3Cx%3E%09%7By%7D",
		"https://例え.jp/論文%201",
		"https://example.org/100%25",
		"oai:ir-a.example.ac.jp:a%20b%22c",
	}
	wantAggregated := []string{
		"https://files.example.org/日本語%20ファイル.pdf",
		"https://files.example.org/a%3Cb%3E.pdf",
		"https://files.example.org/%25zz",
	}
	for _, ore10 := range []bool{true, false} {
		doc := write(t, m, ore10)
		xmllint(t, "hrefs.atom", doc)
		root := parseTree(t, doc)
		var related, aggregated, about []string
		var walk func(n *node)
		walk = func(n *node) {
			for _, a := range n.attrs {
				if a.Name.Local == "href" || a.Name.Space == nsRDF && (a.Name.Local == "about" || a.Name.Local == "resource") {
					if !isAbsoluteIRI(a.Value) {
						t.Errorf("ore10=%v: <%s %s=%q> is not an absolute IRI", ore10, n.name.Local, a.Name.Local, a.Value)
					}
				}
				if a.Name.Space == nsRDF && a.Name.Local == "about" {
					about = append(about, a.Value)
				}
			}
			if n.name.Space == nsAtom && n.name.Local == "uri" && !isAbsoluteIRI(n.text) {
				t.Errorf("ore10=%v: author uri %q", ore10, n.text)
			}
			switch n.name.Space + n.name.Local {
			case nsRDF + "type", nsDCTerms + "creator", nsDCTerms + "isPartOf", nsDCTerms + "conformsTo":
				if n.text != "" && !isAbsoluteIRI(n.text) {
					t.Errorf("ore10=%v: <%s>%s</%[2]s> is not an absolute IRI", ore10, n.name.Local, n.text)
				}
			}
			for _, c := range n.children {
				walk(c)
			}
		}
		walk(root)
		for _, l := range root.links("related") {
			related = append(related, l.attr("", "href"))
		}
		if ore10 {
			for _, l := range root.links(nsORE + "aggregates") {
				aggregated = append(aggregated, l.attr("", "href"))
			}
			check10(t, m, doc)
		} else {
			check02(t, m, doc)
			for _, e := range root.all(nsAtom, "entry") {
				aggregated = append(aggregated, e.links("alternate")[0].attr("", "href"))
			}
		}
		if !ore10 {
			related = slices.DeleteFunc(related, func(u string) bool { return u == m.Aggregation })
		}
		if !slices.Equal(related, wantRelated) {
			t.Errorf("ore10=%v: related\n got %q\nwant %q", ore10, related, wantRelated)
		}
		for _, u := range wantAggregated {
			if !slices.Contains(aggregated, u) {
				t.Errorf("ore10=%v: %q not aggregated: %q", ore10, u, aggregated)
			}
		}
		for _, u := range aggregated {
			if strings.Contains(u, "no scheme") || strings.Contains(u, "no%20scheme") {
				t.Errorf("ore10=%v: %q aggregated", ore10, u)
			}
		}
		if ore10 {
			for _, u := range []string{wantAggregated[0], wantAggregated[1], wantAggregated[2]} {
				if !slices.Contains(about, u) {
					t.Errorf("no rdf:Description about %q, the aggregated URI: %q", u, about)
				}
			}
		}
		for _, bad := range []string{"not a type", "not a uri", `"c_2f33"`, "0000 0001", "a|b", "urn:x y"} {
			if strings.Contains(string(doc), bad) {
				t.Errorf("ore10=%v: %q written", ore10, bad)
			}
		}
	}
}
