package crosswalk

import (
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The differential tests: on any input, parseTree and parseJunii2 give what
// their encoding/xml predecessors (xmlscan_oracle_test.go) give — the same
// tree or junii2 record, or the same error, message and line included.
// There is no exception: the scanner keeps encoding/xml's leniencies (see
// scanner) so that no record changes verdict.

// edgeCases are hand-written documents for what records rarely show:
// every error encoding/xml reports, references, CDATA, comments, PIs,
// directives, namespace scoping, and encoding/xml's leniencies.
var edgeCases = []string{
	"", " \n ", "<a/>", "<a></a>", "<a>", "</a>", "<a></b>", "<a><b></a>", "<a/></a>", "<a>\n<b>\n</a>",
	"<a>x</a>\n", "<a>x", "<a", "<a ", "<a b", "<a b=", "<a b='", "<a b='x", "<a b='x'", "<a/", "</", "</a", "</a ", "<", "<!", "<!-", "<?", "<?p", "<?p ", "<?p ?",
	// names
	"<a:b xmlns:a='u'></a:b>", "<a:b xmlns:a='u' xmlns:c='u'></c:b>", "<a:b></b>", "<a:b></c:b>", "<b></a:b>",
	"<p:a/>", "<a p:x='1'/>", "<a:/>", "<:a/>", "<:a></:a>", "<a:></a:>", "<a:b:c/>", "<a x:y:z='1'/>", "</a:b:c>",
	"<1a/>", "<-a/>", "<.a/>", "<_a/>", "<a 1='x'/>", "<a\n/\n>", "<a/ >", "<a/\n>", "< a/>", "<a></a >", "<a></a\n>", "<a></a x>", "<a></ a>",
	"<é/>", "<aé/>", "<a\u3000b/>", "<\u2070/>", "<a\u0300/>", "<a\u00b7/>", "<\u00b7/>", "<a\xff/>", "<a\xe3\x81/>", "<日本語 属性='値'>本文</日本語>",
	"<a b\u3000='x'/>", "<?é?><a/>", "<?a:b:c?><a/>", "<?1?><a/>", "<?-?><a/>",
	// attributes
	"<a x='1' x='2'/>", "<a x='1'y='2'/>", "<a x = '1' />", "<a x=1/>", "<a x/>", "<a x='1\"2'/>", "<a x=\"1'2\"/>",
	"<a x='&lt;&amp;&#65;'/>", "<a x='<'/>", "<a x='\r\n\t\r'/>", "<a x='\x01'/>", "<a x='\x01&bad;'/>", "<a x='\xff'/>", "<a x='\n'\n/>",
	"<a x='&#xD800;'/>", "<a x='&#1;' y='<'/>",
	// text and references
	"<a>&lt;&gt;&amp;&apos;&quot;</a>", "<a>&#65;&#x41;&#0065;&#x00041;</a>", "<a>&#X41;</a>", "<a>&#xD800;&#xDFFF;</a>", "<a>&#0;</a>",
	"<a>&#x110000;</a>", "<a>&#x10FFFF;</a>", "<a>&#99999999999999999999999;</a>", "<a>&#xFFFE;</a>", "<a>&foo;</a>", "<a>&amp</a>",
	"<a>&amp x</a>", "<a>& </a>", "<a>&;</a>", "<a>&#;</a>", "<a>&#x;</a>", "<a>&#12a;</a>", "<a>&#x1g;</a>", "<a>&#12\n3;</a>", "<a>&am\np;</a>",
	"<a>&é;</a>", "<a>&amp\xe3;</a>", "<a>&", "<a>&#", "<a>&#x", "<a>&#12", "<a>&am",
	"<a>]]></a>", "<a>]]&gt;</a>", "<a>]&#93;]></a>", "<a>&amp;]]></a>", "<a>\n]]></a>", "<a>x>y</a>",
	"<a>\r\n\r\r\n\n</a>", "<a>\r</a>", "<a>\r&#10;</a>", "<a>\x00</a>", "<a>\x01\n&bad;</a>", "<a>\x01\n]]></a>", "<a>\x01\n<b>\n</a>",
	"<a>\xff</a>", "<a>\xe3\x81&#x3042;</a>", "<a>\xe3\x81\r\n</a>", "<a>\uFFFE</a>", "<a>\uFFFF</a>", "<a>\uFFFD\U0001F600</a>", "<a>\x7f</a>", "<a>\ud7ff\ue000</a>",
	"<a> x <b/> y </a>", "<a> <b/> y </a>", "<a>x<!-- c -->y</a>", "<a>\u3000x\u200b<b/>\ufeff</a>", "<a>x<b>y</b>z</a>",
	// CDATA
	"<a><![CDATA[x<y&z]]></a>", "<a><![CDATA[]]></a>", "<a><![CDATA[]]]></a>", "<a><![CDATA[x]]]]><![CDATA[>]]></a>", "<a><![CDATA[",
	"<a><![CDATA[x]]", "<a><![CDAT[x]]></a>", "<a><![cdata[x]]></a>", "<a><![CDATA[\r\n\x01]]></a>", "<a><![CDATA[\xff]]></a>", "<a><![", "<![CDATA[x]]><a/>",
	// declarations and processing instructions
	"<?xml version='1.0' encoding='UTF-8'?><a/>", "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\n<a/>",
	"<?xml version='1.1'?><a/>", "<?xml encoding='Shift_JIS'?><a/>", "<?xml version = '1.1'?><a/>", "<?xml version='1.0' encoding=\"EUC-JP\"?><a/>",
	"<?xml version=1.1?><a/>", "<?xml versionversion='1.1'?><a/>", "<?xml encoding='utf-8' encoding='x'?><a/>", "<?xml version='?><a/>",
	"<a><?xml version='2'?></a>", "<?XML version='2'?><a/>", "<?pi?><a/>", "<?pi x?y?><a/>", "<??><a/>", "<?pi", "<a><?pi x?></a>", "<?xml-stylesheet href='x'?><a/>",
	"\n<?xml version='1.0'?><a/>",
	// comments
	"<!-- c --><a/>", "<!-- a -- b --><a/>", "<!--->", "<!---->", "<!---->\n<a/>", "<!- x --><a/>", "<a><!-- x --></a>", "<!-- x", "<!-- x -", "<!-- x --",
	"<!-- \x00\xff --><a/>", "<a/><!-- after -->",
	// directives
	"<!DOCTYPE a [<!ENTITY e 'x'>]><a>&e;</a>", "<!DOCTYPE a><a/>", "<!DOCTYPE a [<!-- > -->]><a/>", "<!DOCTYPE a [<!ELEMENT a ANY>]><a/>",
	"<a><!x></a>", "<!><a/>", "<!'>'><a/>", "<!a'>'><a/>", "<!a<b>><a/>", "<!a<!b>><a/>", "<!a<!-b>><a/>", "<!a<<>>><a/>", "<!a \"x><a/>",
	"<!DOCTYPE a [", "<!a<!-- x", "<!a<!--", "<!a<!-",
	// outside the root
	"\uFEFF<a/>", " <a/> ", "x<a/>", "<a/>x", "<a/><b/>", "<a/><b>", "<a/>\u00a0", "<a/>&#32;", "<a/>&#65;", "<a/><![CDATA[ ]]>", "&#32;<a/>",
	"\u3000<a/>", "<a/>\x01", "</a><a/>",
	// namespaces
	"<a xmlns='u'><b xmlns=''/><c/></a>", "<a xmlns:p='u'><p:b xmlns:p='v'><p:c/></p:b><p:d/></a>", "<xmlns xmlns='u'/>", "<xml:a/>", "<xmlns:a/>",
	"<a xml:lang='ja' lang='en'/>", "<a xmlns:xml='u' xml:lang='ja'/>", "<a xmlns:p='' p:x='1'><p:b/></a>", "<p:a xmlns:p='u' xmlns:p='v'/>",
	"<a xmlns:p='u'/><p:b/>", "<a xmlns='&amp;u'/>", "<a xmlns:='u'/>", "<a xmlns:a:b='u'/>", "<p:a xmlns:p='u'></q:a>", "<p:a xmlns:p='u' xmlns:q='u'></q:a>",
	"<a xmlns:p='u' p:x='1' x='2' xmlns:x='v'/>",
	// junii2 shapes
	"<junii2 xmlns='http://irdb.nii.ac.jp/oai'><title lang='ja' xml:lang='en'> t </title><title xml:lang='en'>u</title><x:y xmlns:x='v'>z</x:y><creator id=' i '>a<b>c</b>d</creator><selfDOI ra='JaLC'/></junii2>",
	"<meta><title>x</title></meta><meta/>", "<meta><title>x</title></meta>x", "<meta><title>x</title>", "<meta><title>x</title></meta><!--x--><?p?>",
	"<other><title>x</title></meta>", "<other xmlns='u'>", "<junii2 xmlns='http://irdb.nii.ac.jp/oai'><title>x</titl></junii2>",
	"x<junii2/>", "<junii2/>", "<junii2 xmlns='http://irdb.nii.ac.jp/oai'>text<title>  </title><title>\u3000</title></junii2>",
}

// testdataDocs reads every XML file under testdata, whole, and the records
// the tests cut from them.
func testdataDocs(t testing.TB) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	err := filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".xml") {
			return err
		}
		b, err := os.ReadFile(p)
		docs[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range loadFixtures(t) {
		docs["fixture "+f.name] = f.data
	}
	for name, b := range synthetic() {
		docs["synthetic "+name] = b
	}
	return docs
}

// diffParsers returns how the scanner-based parsers and the encoding/xml
// ones disagree on doc, or "".
func diffParsers(doc []byte) string {
	got, gerr := parseTree(doc)
	want, werr := stdParseTree(doc)
	if d := diffResult(got, gerr, want, werr, diffNode); d != "" {
		return "parseTree: " + d
	}
	gj, gerr := parseJunii2(doc)
	wj, werr := stdParseJunii2(doc)
	if d := diffResult(gj, gerr, wj, werr, diffJunii2); d != "" {
		return "parseJunii2: " + d
	}
	return ""
}

func diffResult[T any](got T, gerr error, want T, werr error, diff func(got, want T) string) string {
	switch {
	case gerr == nil && werr == nil:
		return diff(got, want)
	case gerr == nil || werr == nil:
		return fmt.Sprintf("error %v, want %v", gerr, werr)
	case gerr.Error() != werr.Error():
		return fmt.Sprintf("error %q, want %q", gerr, werr)
	case errors.Is(gerr, errNotWellFormed) != errors.Is(werr, errNotWellFormed):
		return fmt.Sprintf("error %v wraps errNotWellFormed %v", gerr, errors.Is(gerr, errNotWellFormed))
	}
	var gnj, wnj *notJunii2Error
	if errors.As(gerr, &gnj) != errors.As(werr, &wnj) || gnj != nil && *gnj != *wnj {
		return fmt.Sprintf("error %#v, want %#v", gerr, werr)
	}
	return ""
}

// diffNode compares two trees, attributes as they are (nil and empty
// lists alike).
func diffNode(got, want *node) string {
	if got.space != want.space || got.local != want.local || got.qkey != want.qkey || got.text != want.text || got.n != want.n {
		return fmt.Sprintf("node {%s}%s key %q text %q n %d, want {%s}%s key %q text %q n %d",
			got.space, got.local, got.qkey, got.text, got.n, want.space, want.local, want.qkey, want.text, want.n)
	}
	if len(got.attrs) != len(want.attrs) || len(got.attrs) > 0 && !reflect.DeepEqual(got.attrs, want.attrs) {
		return fmt.Sprintf("%s: attributes %q, want %q", want.key(), got.attrs, want.attrs)
	}
	if len(got.kids) != len(want.kids) {
		return fmt.Sprintf("%s: %d children, want %d", want.key(), len(got.kids), len(want.kids))
	}
	for i := range got.kids {
		if d := diffNode(got.kids[i], want.kids[i]); d != "" {
			return want.key() + "/" + d
		}
	}
	return ""
}

// diffJunii2 compares two records, empty and nil lists alike.
func diffJunii2(got, want *junii2) string {
	if g, w := normalJunii2(*got), normalJunii2(*want); !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("%+v, want %+v", g, w)
	}
	return ""
}

func normalJunii2(r junii2) junii2 {
	if len(r.fields) == 0 {
		r.fields = nil
	}
	if len(r.foreign) == 0 {
		r.foreign = nil
	}
	if len(r.nested) == 0 {
		r.nested = nil
	}
	return r
}

func checkParsers(t *testing.T, name string, doc []byte) {
	t.Helper()
	if d := diffParsers(doc); d != "" {
		t.Errorf("%s: %s\ninput %q", name, d, clip(doc))
	}
}

func clip(b []byte) []byte {
	if len(b) > 400 {
		return append(b[:400:400], "…"...)
	}
	return b
}

// TestParseTreeMatchesEncodingXML runs the differential test on the test
// data and the edge cases, and checks that the test data themselves parse.
func TestParseTreeMatchesEncodingXML(t *testing.T) {
	for name, doc := range testdataDocs(t) {
		checkParsers(t, name, doc)
	}
	for i, c := range edgeCases {
		checkParsers(t, fmt.Sprintf("edge case %d", i), []byte(c))
	}
	for name, doc := range testdataDocs(t) {
		if strings.HasPrefix(name, "fixture ") || strings.HasPrefix(name, "testdata/golden") || strings.HasPrefix(name, "testdata/jpcoar") {
			if _, err := parseTree(doc); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// TestParseTreeErrorsWorded pins a few verdicts outright, so the oracle
// cannot drift with it: encoding/xml accepts unbound prefixes, duplicate
// attributes and a DOCTYPE, and reports errors with their line.
func TestParseTreeErrorsWorded(t *testing.T) {
	for doc, want := range map[string]string{
		"<a>\n<b>\n</a>":             "not well-formed: XML syntax error on line 3: element <b> closed by </a>",
		"<p:a xmlns:p='u'></q:a>":    "not well-formed: XML syntax error on line 1: element <a> in space p closed by </a> in space q",
		"<a>\n&#1;\n<b/></a>":        "not well-formed: XML syntax error on line 3: illegal character code U+0001",
		"<a>&nbsp;</a>":              "not well-formed: XML syntax error on line 1: invalid character entity &nbsp;",
		"<?xml version='1.1'?><a/>":  `not well-formed: xml: unsupported version "1.1"; only version 1.0 is supported`,
		"<a/>\n<b/>":                 "not well-formed: second root element",
		"<a x='1\n":                  "not well-formed: XML syntax error on line 2: unexpected EOF",
		"<a/>\nx":                    "not well-formed: text outside the root element",
		"<!-- only a comment -->\n ": "not well-formed: incomplete document",
	} {
		if _, err := parseTree([]byte(doc)); err == nil || err.Error() != want || !errors.Is(err, errNotWellFormed) {
			t.Errorf("%q: %v, want %s", doc, err, want)
		}
	}
	root, err := parseTree([]byte("<!DOCTYPE a><a x='1' x='2'><p:b/></a>"))
	if err != nil {
		t.Fatal(err)
	}
	if len(root.attrs) != 2 || root.kids[0].space != "p" || root.kids[0].key() != "{p}b" {
		t.Errorf("lenient parse: attrs %v, child %+v", root.attrs, root.kids[0])
	}
}

// mutationTokens are what the mutations insert: markup fragments and the
// bytes the scanner treats specially.
var mutationTokens = []string{
	"<", ">", "/", "&", ";", "'", `"`, "=", ":", "]]>", "<!--", "-->", "--", "<![CDATA[", "]]", "<?", "?>", "<!DOCTYPE x>",
	"&amp;", "&#x41;", "&#0;", "&bad;", "&#xD800;", "\r", "\r\n", "\t", "\x00", "\x01", "\xff", "\xe3\x81", "\uFFFE", "\u3000", "\ufeff",
	" xmlns='urn:x'", " xmlns:dc='urn:y'", " xmlns=''", " xml:lang='en'", " x='1'", " lang='ja'", "<b/>", "</b>", "<dc:title>", "</dc:title>",
	"<x:y/>", "é", "<?xml version='1.1'?>", "<?xml encoding='sjis'?>",
}

// mutate returns doc with one random edit: a cut, a deletion, an insertion,
// a duplication or a byte replacement.
func mutate(r *rand.Rand, doc []byte) []byte {
	if len(doc) == 0 {
		return []byte(mutationTokens[r.IntN(len(mutationTokens))])
	}
	i := r.IntN(len(doc))
	out := append([]byte(nil), doc[:i]...)
	switch r.IntN(5) {
	case 0:
		return out
	case 1:
		return append(out, doc[min(len(doc), i+1+r.IntN(4)):]...)
	case 2:
		out = append(out, mutationTokens[r.IntN(len(mutationTokens))]...)
	case 3:
		out = append(out, doc[i:min(len(doc), i+1+r.IntN(16))]...)
	case 4:
		out = append(out, "<>&;'\":/\x00\r\xff"[r.IntN(11)])
		i++
	}
	return append(out, doc[min(i, len(doc)):]...)
}

// TestParseTreeMutations runs the differential test on test data with
// seeded random edits, one to three at a time.
func TestParseTreeMutations(t *testing.T) {
	docs := testdataDocs(t)
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	sort.Strings(names)
	perDoc := 60
	if testing.Short() {
		perDoc = 10
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range names {
		for i := range perDoc {
			doc := docs[name]
			for range 1 + r.IntN(3) {
				doc = mutate(r, doc)
			}
			checkParsers(t, fmt.Sprintf("%s mutation %d", name, i), doc)
		}
	}
}

// TestNameCheckMatchesEncodingXML: for non-ASCII names the scanner asks
// encoding/xml as a processing instruction target; as an element name the
// verdict must be the same (colons aside, which only element names limit).
func TestNameCheckMatchesEncodingXML(t *testing.T) {
	var s scanner
	for r := rune(0x80); r <= utf8.MaxRune; r += 1 + r/64 {
		for _, name := range []string{string(r), "a" + string(r)} {
			_, err := xml.NewDecoder(strings.NewReader("<" + name + "/>")).RawToken()
			if ok, _ := s.checkName(name); ok != (err == nil) {
				t.Errorf("%q: checkName %v, encoding/xml %v", name, ok, err)
			}
		}
	}
}

// FuzzParseTree: on any input, parseTree and parseJunii2 agree with their
// encoding/xml predecessors.
func FuzzParseTree(f *testing.F) {
	for _, doc := range testdataDocs(f) {
		f.Add(doc)
	}
	for _, c := range edgeCases {
		f.Add([]byte(c))
	}
	for _, doc := range generatedCases() {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if d := diffParsers(doc); d != "" {
			t.Fatalf("%s\ninput %q", d, doc)
		}
	})
}

// generatedCases are documents past the scanner's and the tree builder's
// thresholds: many namespace declarations (nsIndex), redeclared and
// undeclared in nested scopes, many siblings (frame.counts), and text in
// many pieces (textAcc.buf).
func generatedCases() map[string][]byte {
	var decls, uses, kids, pieces strings.Builder
	for i := range 2 * maxScanBindings {
		fmt.Fprintf(&decls, " xmlns:p%d='urn:%d'", i%(maxScanBindings+7), i)
		fmt.Fprintf(&uses, "<p%d:e p%d:a='%d' b='x'><p%d:f xmlns:p%d='urn:inner%d' xmlns=''/><g/></p%d:e>", i, (i+1)%maxScanBindings, i, i, i, i, i)
	}
	for i := range 3 * maxScanSiblings {
		fmt.Fprintf(&kids, "<k%d/><k%d xmlns='urn:k'/>", i%(maxScanSiblings+5), i%7)
	}
	for i := range 50 {
		fmt.Fprintf(&pieces, "%s<!--c-->%s<![CDATA[ ]]><b>x</b>", []string{"", " ", "a", "\u3000", "b "}[i%5], []string{"\n", "", " c"}[i%3])
	}
	return map[string][]byte{
		"many declarations": []byte("<r xmlns='urn:d'" + decls.String() + "><s xmlns:p3='urn:again'>" + uses.String() + "</s>" + uses.String() + "</r>"),
		"many siblings":     []byte("<r>" + kids.String() + "<n>" + kids.String() + "</n>" + kids.String() + "</r>"),
		"many pieces":       []byte("<r> <t>" + pieces.String() + "</t>" + pieces.String() + "</r>"),
		"junii2 pieces":     junii2Doc("<title> <!--c--> a <!--c--> <!--c--> b <!--c--> </title><creator>" + pieces.String() + "</creator>"),
	}
}

func TestParseTreeGenerated(t *testing.T) {
	for name, doc := range generatedCases() {
		checkParsers(t, name, doc)
		for i := range 30 {
			checkParsers(t, fmt.Sprintf("%s cut %d", name, i), doc[:len(doc)*i/30])
		}
	}
}

// TestParseLinearTime: hostile shapes that a quadratic parser would take
// minutes over parse in well under the limit.
func TestParseLinearTime(t *testing.T) {
	const n = 200_000
	var decls, uses, kids, pieces strings.Builder
	for i := range n {
		fmt.Fprintf(&decls, " xmlns:p%d='u'", i)
		fmt.Fprintf(&uses, "<p%d:e/>", i)
		fmt.Fprintf(&kids, "<k%d/>", i)
		pieces.WriteString("a<!---->")
	}
	for name, doc := range map[string]string{
		"declarations": "<r" + decls.String() + ">" + uses.String() + "</r>",
		"siblings":     "<r>" + kids.String() + "</r>",
		"pieces":       "<r>" + pieces.String() + "</r>",
		"junii2":       "<meta><title>" + pieces.String() + "</title></meta>",
	} {
		start := time.Now()
		if _, err := parseTree([]byte(doc)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := parseJunii2([]byte(doc)); err != nil && !errors.As(err, new(*notJunii2Error)) {
			t.Fatalf("%s: %v", name, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: %v", name, d)
		}
	}
}
