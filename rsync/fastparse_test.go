package rsync

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestByteClasses(t *testing.T) {
	for c := 0; c < 256; c++ {
		var want byte = 'p'
		switch {
		case c >= 0x80:
			want = cUTF8
		case c < 0x20 && c != '\t' && c != '\n':
			want = cBad
		case c == ' ' || c == '\t' || c == '\n':
			want = cSpace
		case c == '<' || c == '&' || c == ']':
			want = byte(c)
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == ':', c == '.', c == '-':
			want = cName
		}
		if byteClasses[c] != want {
			t.Errorf("byte %#x: class %q, want %q", c, byteClasses[c], want)
		}
		start := 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_' || c == ':'
		if nameStart[c] != start {
			t.Errorf("byte %#x: nameStart %v, want %v", c, nameStart[c], start)
		}
	}
}

// sameAsXML checks that whatever parseFast answers for b, encoding/xml
// answers the same way, and reports whether parseFast answered.
func sameAsXML(t *testing.T, b []byte) bool {
	t.Helper()
	doc, ok, err := parseFast(b)
	if !ok {
		return false
	}
	want, werr := parseXML(bytes.NewReader(b))
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("parseFast error %v, encoding/xml %v\n%q", err, werr, b)
	}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("parseFast and encoding/xml differ:\n%+v\n%+v\n%q", doc, want, b)
	}
	return true
}

// TestParseFastCorpus: parseFast takes the documents rsbridge writes and the
// collected ones written the usual way, and reads them as encoding/xml does.
func TestParseFastCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.xml")
	golden, _ := filepath.Glob("testdata/golden/*.xml")
	taken := 0
	for _, file := range append(files, golden...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if sameAsXML(t, b) {
			taken++
		} else {
			t.Logf("%s: left to encoding/xml", file)
		}
	}
	if len(golden) == 0 || taken < len(golden) {
		t.Errorf("parseFast took %d of %d documents; every golden file is rsbridge's own and must be taken", taken, len(files)+len(golden))
	}
}

func TestParseFastCases(t *testing.T) {
	const head = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
	doc := func(body string) string {
		return head + `<rs:md capability="resourcelist" at="2026-01-02T03:04:05Z"/>` + body + `</urlset>`
	}
	for _, c := range []struct {
		name string
		in   string
		fast bool // parseFast answers rather than giving up
	}{
		{"plain", doc(`<url><loc> http://a/b?x=1&amp;y=2 </loc><lastmod>2026-01-02T03:04:05Z</lastmod><rs:md hash="md5:a  sha-256:b" length="3" path="/p&lt;q"/><rs:ln rel="describedby" href="http://d"/></url>`), true},
		{"declaration", `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + doc(""), true},
		{"declaration single quotes", `<?xml version='1.0'?>` + doc(""), true},
		{"declaration after space", "\n" + `<?xml version="1.0"?>` + doc(""), false},
		{"declaration latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?>` + doc(""), false},
		{"comments", "<!-- a -->" + doc(`<!-- b --><url><loc>http://a<!-- c -->/b</loc></url>`) + "\n<!-- d -->\n", true},
		{"comment with --", doc(`<!-- a -- b -->`), false},
		{"prefixed sitemap", `<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="x"/><s:url><s:loc>http://a</s:loc></s:url></s:urlset>`, true},
		{"md in default namespace", head + `<md xmlns="http://www.openarchives.org/rs/terms/" capability="x"/><url><loc>http://a</loc></url></urlset>`, true},
		{"prefixed attribute ignored", doc(`<url><loc>http://a</loc><rs:md rs:length="x" xml:lang="en"/></url>`), true},
		{"undeclared prefix", doc(`<url><x:loc>http://a</x:loc><loc>http://b</loc></url>`), true},
		{"not a sitemap", `<feed xmlns="http://www.w3.org/2005/Atom"/>`, true},
		{"bad length", doc(`<url><loc>http://a</loc><rs:md length="many"/></url>`), true},
		{"entry without loc", doc(`<url><lastmod>2026-01-02T03:04:05Z</lastmod></url>`), true},
		{"bad lastmod", doc(`<url><loc>http://a</loc><lastmod>yesterday</lastmod></url>`), true},
		{"empty", ``, false},
		{"only white space", " \n", false},
		{"non-ASCII", doc(`<url><loc>http://a/日本</loc><rs:md path="/日本.xml" type="text/xml; charset=ü"/></url>`), true},
		{"non-ASCII white space around loc", doc("<url><loc>\u00a0http://a/\u0085</loc></url>"), true},
		{"non-ASCII in a comment and a PI", doc(`<!-- 日本 --><?pi 日本?><url><loc>http://a</loc></url>`), true},
		{"4-byte character", doc("<url><loc>http://a/\U0001F600</loc></url>"), true},
		{"non-ASCII name", doc(`<url><loc>http://a</loc><日本/></url>`), false},
		{"invalid UTF-8", doc("<url><loc>http://a/\xff</loc></url>"), false},
		{"truncated UTF-8 at the end", doc("") + "\xe6\x97", false},
		{"invalid UTF-8 in an attribute", doc("<url><loc>http://a</loc><rs:md path=\"\xc3\"/></url>"), false},
		{"invalid UTF-8 in a comment", doc("<!-- \xff -->"), false},
		{"U+FFFE", doc("<url><loc>http://a/\ufffe</loc></url>"), false},
		{"encoded surrogate", doc("<url><loc>http://a/\xed\xa0\x80</loc></url>"), false},
		{"character reference", doc(`<url><loc>http://a/&#41;</loc></url>`), false},
		{"unknown entity", doc(`<url><loc>http://a/&nbsp;</loc></url>`), false},
		{"unterminated entity", doc(`<url><loc>http://a/&amp</loc></url>`), false},
		{"CDATA", doc(`<url><loc><![CDATA[http://a]]></loc></url>`), false},
		{"]]> in text", doc(`<url><loc>http://a]]></loc></url>`), false},
		{"]]> in an attribute", doc(`<url><loc>http://a</loc><rs:md path="]]>"/></url>`), true},
		{"carriage return", doc("<url>\r\n<loc>http://a</loc></url>"), false},
		{"DOCTYPE", `<!DOCTYPE urlset>` + doc(""), false},
		{"processing instruction", doc(`<?pi x?>`), true},
		{"stylesheet", `<?xml version='1.0' encoding='UTF-8'?>` + "\n" + `<?xml-stylesheet type='text/xsl' href='/sitemap.xsl'?>` + "\n" + doc(""), true},
		{"processing instruction without content", doc(`<?pi?><?pi ?>`), true},
		{"processing instruction, non-ASCII", doc(`<?pi 日本?>`), true},
		{"processing instruction, invalid UTF-8", doc("<?pi \xff?>"), false},
		{"processing instruction, no target", doc(`<? x?>`), false},
		{"declaration standalone", `<?xml version="1.0" encoding="utf-8" standalone="yes"?>` + doc(""), true},
		{"declaration standalone without encoding", `<?xml version="1.0" standalone='no'?>` + doc(""), true},
		{"declaration two spaces", `<?xml  version="1.0"?>` + doc(""), false},
		{"declaration version 1.1", `<?xml version="1.1"?>` + doc(""), false},
		{"declaration encoding first", `<?xml encoding="UTF-8" version="1.0"?>` + doc(""), false},
		{"declaration mixed quotes", `<?xml version="1.0'?>` + doc(""), false},
		{"declaration twice", `<?xml version="1.0"?><?xml version="1.0"?>` + doc(""), false},
		{"empty declaration", `<?xml?>` + doc(""), false},
		{"mismatched end tag", doc(`<url><loc>http://a</lox></url>`), false},
		{"end tag with another prefix", doc(`<url><loc>http://a</sm:loc></url>`), false},
		{"unclosed", head + `<url><loc>http://a</loc></url>`, false},
		{"second root", doc("") + doc(""), false},
		{"text after root", doc("") + "x", false},
		{"text before root", "x" + doc(""), false},
		{"attributes without space", doc(`<url><loc>http://a</loc><rs:md length="1"type="x"/></url>`), false},
		{"unquoted attribute", doc(`<url><loc>http://a</loc><rs:md length=1/></url>`), false},
		{"< in attribute", doc(`<url><loc>http://a</loc><rs:md path="<"/></url>`), false},
		{"two colons", doc(`<a:b:c/>`), false},
		{"empty prefix declaration", doc(`<url xmlns:x=""><loc>http://a</loc></url>`), false},
		{"xml prefix declared", doc(`<url xmlns:xml="http://www.w3.org/XML/1998/namespace"><loc>http://a</loc></url>`), false},
		{"space in tags", doc(`<url ><loc >http://a</loc ><rs:md  length = "1" /></url>`), true},
		{"declarations scoped", doc(`<url xmlns:z="http://www.openarchives.org/rs/terms/"><loc>http://a</loc><z:md length="1"/></url><url><loc>http://b</loc><z:md length="2"/></url>`), true},
		{"default namespace undeclared", doc(`<url><loc xmlns="">http://a</loc><loc>http://b</loc></url>`), true},
		{"duplicate attributes", doc(`<url><loc>http://a</loc><rs:md length="1" length="2"/></url>`), true},
		{"name at the end", doc("") + "<url", false},
		{"many declarations in scope", doc(`<url><loc>http://a</loc>` + strings.Repeat(`<x xmlns:a="urn:a">`, maxBindings) + strings.Repeat(`</x>`, maxBindings) + `</url>`), false},
		{"declarations in scope up to the bound", doc(`<url><loc>http://a</loc>` + strings.Repeat(`<x xmlns:a="urn:a">`, maxBindings-3) + strings.Repeat(`</x>`, maxBindings-3) + `</url>`), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sameAsXML(t, []byte(c.in)); got != c.fast {
				t.Errorf("parseFast answered %v, want %v", got, c.fast)
			}
			// And Parse answers as encoding/xml whichever way it goes.
			d, err := Parse(strings.NewReader(c.in))
			want, werr := parseXML(strings.NewReader(c.in))
			if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(d, want) {
				t.Errorf("Parse: %v %+v; encoding/xml: %v %+v", err, d, werr, want)
			}
		})
	}
}

// BenchmarkParseManifest reads a Resource Dump Manifest of 50,000 entries,
// as a destination does for every package.
//
//	go test -run '^$' -bench ParseManifest -benchmem ./rsync/
func BenchmarkParseManifest(b *testing.B) {
	var buf bytes.Buffer
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	w := NewURLSet(&buf, MD{Capability: "resourcedump-manifest", At: at, Completed: at})
	for i := range MaxEntries {
		id := fmt.Sprintf("oai%%3Arepo.example.ac.jp%%3A%08d", i)
		w.Write(Entry{Loc: "https://rsbridge.example/repo/jpcoar_2.0/resource/" + id, LastMod: at,
			MD: &MD{Hash: "md5:0123456789abcdef0123456789abcdef sha-256:" + strings.Repeat("0123456789abcdef", 4),
				Length: 2100, HasLength: true, Type: "application/xml", Path: "/resources/" + id + ".xml"}})
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct {
		name  string
		parse func([]byte) (*Document, error)
	}{
		{"Parse", func(in []byte) (*Document, error) { return Parse(bytes.NewReader(in)) }},
		{"encoding-xml", func(in []byte) (*Document, error) { return parseXML(bytes.NewReader(in)) }},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				d, err := p.parse(buf.Bytes())
				if err != nil || len(d.Entries) != MaxEntries {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/MaxEntries, "ns/entry")
		})
	}
}
