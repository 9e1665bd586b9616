package rsync

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n%s", name, got)
	}
}

// missingDep reports a check that cannot run for want of a tool or file: on a
// developer's machine the test is skipped, but under CI (CI=true) it fails, so
// a CI run cannot pass without the check it exists to make.
func missingDep(t *testing.T, msg string) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s; CI=true, so this is a failure, not a skip", msg)
	}
	t.Skip(msg)
}

// validate runs ../shared/xsd/validate.sh (the schemas next to the checkout)
// on the documents with xmllint; see missingDep when either is missing.
func validate(t *testing.T, docs map[string][]byte) {
	t.Helper()
	script, err := filepath.Abs("../../shared/xsd/validate.sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		missingDep(t, "xmllint is not on PATH: install it (apt-get install libxml2-utils) to validate against the XSDs")
	}
	if _, err := os.Stat(script); err != nil {
		missingDep(t, fmt.Sprintf("XSDs missing (%v): check out the shared directory, with xsd/validate.sh, next to this checkout", err))
	}
	dir := t.TempDir()
	var files []string
	for name, b := range docs {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		files = append(files, p)
	}
	out, err := exec.Command(script, files...).CombinedOutput()
	if err != nil {
		t.Fatalf("schema validation failed: %v\n%s", err, out)
	}
}

var t0 = time.Date(2026, 11, 22, 1, 2, 3, 456000000, time.UTC)

func writeSamples(t *testing.T) map[string][]byte {
	docs := map[string][]byte{}
	var b bytes.Buffer
	w := NewURLSet(&b, MD{Capability: ChangeList, From: t0.Truncate(time.Hour)},
		Link{Rel: "up", Href: "http://127.0.0.1:8080/demo/oai_dc/all/capabilitylist.xml"},
		Link{Rel: "index", Href: "http://127.0.0.1:8080/demo/oai_dc/all/changelist.xml"})
	w.Write(Entry{Loc: "http://127.0.0.1:8080/demo/oai_dc/resource/oai%3Ax%3Aa%26b", LastMod: t0,
		MD:    &MD{Change: "created", DateTime: t0, Hash: Hash("d41d8cd98f00b204e9800998ecf8427e", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), Length: 0, HasLength: true, Type: "application/xml"},
		Links: []Link{{Rel: "via", Href: "https://repo.example/oai?verb=GetRecord&identifier=oai:x:a&metadataPrefix=oai_dc", Modified: t0.Truncate(24 * time.Hour)}, {Rel: "alternate", Href: "http://127.0.0.1:8080/demo/jpcoar_2.0/resource/x", Type: "application/xml"}}})
	w.Write(Entry{Loc: "http://127.0.0.1:8080/demo/oai_dc/resource/gone", MD: &MD{Change: "deleted", DateTime: t0.Add(time.Millisecond)}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	docs["changelist.xml"] = bytes.Clone(b.Bytes())
	b.Reset()
	ix := NewSitemapIndex(&b, MD{Capability: ResourceList, At: t0, Completed: t0.Add(time.Second)}, Link{Rel: "up", Href: "http://127.0.0.1:8080/demo/oai_dc/all/capabilitylist.xml"})
	ix.Write(Entry{Loc: "http://127.0.0.1:8080/demo/oai_dc/all/resourcelist-00001.xml", MD: &MD{At: t0, Completed: t0.Add(time.Second)}})
	ix.Close()
	docs["resourcelist-index.xml"] = bytes.Clone(b.Bytes())
	return docs
}

func TestWriterGoldenAndSchema(t *testing.T) {
	docs := writeSamples(t)
	for name, b := range docs {
		golden(t, name, b)
	}
	validate(t, docs)
}

func TestRoundTrip(t *testing.T) {
	docs := writeSamples(t)
	d, err := Parse(bytes.NewReader(docs["changelist.xml"]))
	if err != nil {
		t.Fatal(err)
	}
	if d.Index || d.MD.Capability != ChangeList || !d.MD.From.Equal(t0.Truncate(time.Hour)) || d.Link("up") == "" || len(d.Entries) != 2 {
		t.Fatalf("%+v", d)
	}
	e := d.Entries[0]
	if e.Loc != "http://127.0.0.1:8080/demo/oai_dc/resource/oai%3Ax%3Aa%26b" || !e.MD.DateTime.Equal(t0) || !e.MD.HasLength || e.MD.Length != 0 ||
		HashValue(e.MD.Hash, "sha-256") != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" || len(e.Links) != 2 || !strings.Contains(e.Links[0].Href, "&identifier=") {
		t.Errorf("%+v %+v", e, e.MD)
	}
}

func TestFormatTime(t *testing.T) {
	for in, want := range map[time.Time]string{
		time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC):                          "2024-01-02T03:04:05Z",
		time.Date(2024, 1, 2, 3, 4, 5, 120000000, time.UTC):                  "2024-01-02T03:04:05.12Z",
		time.Date(2024, 1, 2, 12, 4, 5, 1000, time.FixedZone("JST", 9*3600)): "2024-01-02T03:04:05.000001Z",
	} {
		if got := FormatTime(in); got != want {
			t.Errorf("%v: %s, want %s", in, got, want)
		}
	}
}

func TestTooManyEntries(t *testing.T) {
	var b bytes.Buffer
	w := NewURLSet(&b, MD{Capability: ResourceList, At: t0})
	for i := 0; i < MaxEntries; i++ {
		if err := w.Write(Entry{Loc: "http://x/r"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(Entry{Loc: "http://x/r"}); err != ErrTooMany {
		t.Fatalf("got %v", err)
	}
}

// TestParseCorpus reads every real and specification document kept in
// testdata (trimming padded <loc> values, any element order, prefixed sitemap
// namespace); the one malformed file must fail.
func TestParseCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.xml")
	if len(files) < 20 {
		t.Fatalf("corpus missing")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		d, err := Parse(bytes.NewReader(b))
		name := filepath.Base(f)
		switch {
		case strings.Contains(name, "leading-newline"):
			if err == nil {
				t.Errorf("%s: malformed document accepted", name)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case d.MD.Capability == "":
			t.Errorf("%s: no capability", name)
		default:
			for _, e := range d.Entries {
				if e.Loc != strings.TrimSpace(e.Loc) || e.Loc == "" {
					t.Errorf("%s: loc %q", name, e.Loc)
				}
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	// Forms the collected documents lack: UTF-8 text, references, a PI.
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><?xml-stylesheet href="s.xsl"?>` +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
		`<rs:md capability="resourcelist"/><!-- 日本 --><url><loc> http://a/日本?x=1&amp;y=2 </loc>` +
		`<rs:md hash="md5:a" path="/資料.xml" length="3"/></url></urlset>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The scanner answers as encoding/xml does, or leaves b to it.
		sameAsXML(t, b)
		d, err := Parse(bytes.NewReader(b))
		if err != nil {
			return
		}
		// What parses must survive a write and parse again with the same entries.
		var out bytes.Buffer
		w := NewURLSet(&out, d.MD, d.Links...)
		if d.Index {
			w = NewSitemapIndex(&out, d.MD, d.Links...)
		}
		for i, e := range d.Entries {
			if i >= MaxEntries {
				break
			}
			w.Write(e)
		}
		if err := w.Close(); err != nil {
			return
		}
		d2, err := Parse(&out)
		if err != nil {
			t.Fatalf("rewritten document does not parse: %v\n%s", err, out.Bytes())
		}
		if len(d2.Entries) != len(d.Entries) {
			t.Fatalf("entries %d != %d", len(d2.Entries), len(d.Entries))
		}
	})
}

func TestAppendTimeMatchesFormatTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(999, 12, 31, 23, 59, 59, 100, time.UTC),
		time.Date(2026, 11, 22, 12, 4, 5, 123456789, time.FixedZone("JST", 9*3600)),
		time.Date(2026, 11, 22, 12, 4, 5, 120000000, time.UTC),
	} {
		if got, want := string(appendTime(nil, tm)), FormatTime(tm); got != want {
			t.Errorf("%v: %s, want %s", tm, got, want)
		}
	}
}

// TestWriterByteLimit: a document that would pass 50 MiB fails with
// ErrTooLarge, and EntrySize is what Write writes for an entry.
func TestWriterByteLimit(t *testing.T) {
	e := Entry{Loc: "http://x.test/" + strings.Repeat("a&b", 100_000), MD: &MD{Hash: "md5:0", Length: 3, HasLength: true}}
	var buf bytes.Buffer
	w := NewURLSet(&buf, MD{Capability: ResourceList})
	before := w.Size()
	if err := w.Write(e); err != nil {
		t.Fatal(err)
	}
	if got := w.Size() - before; got != EntrySize(e) {
		t.Errorf("EntrySize %d, Write wrote %d", EntrySize(e), got)
	}
	if n := EscapedLen(`a&b<"c">`); n != len(`a&amp;b&lt;&quot;c&quot;&gt;`) {
		t.Errorf("EscapedLen %d", n)
	}
	var err error
	for i := 0; err == nil && i < 200; i++ {
		err = w.Write(e)
	}
	if !errors.Is(err, ErrTooLarge) || w.Size() > MaxBytes+EntrySize(e) {
		t.Fatalf("after %d bytes: %v", w.Size(), err)
	}
}

// TestWriterReplacesWhatXMLCannotCarry: a <loc> and an attribute with
// characters XML cannot carry (a C0 control, U+FFFE, a byte that is not
// UTF-8) come out as U+FFFD, CR as &#xD; (text too), and TAB and LF in an
// attribute as references; the document parses and gives the values back
// with U+FFFD in place.
func TestWriterReplacesWhatXMLCannotCarry(t *testing.T) {
	const in = "http://x.test/a\x01b\ufffec\xffd\re\tf\ng&'<>\"h\x7f\u00e9"
	const back = "http://x.test/a\ufffdb\ufffdc\ufffdd\re\tf\ng&'<>\"h\x7f\u00e9"
	const text = "<loc>http://x.test/a\ufffdb\ufffdc\ufffdd&#xD;e\tf\ng&amp;&apos;&lt;&gt;\"h\x7f\u00e9</loc>"
	const attr = ` href="http://x.test/a` + "\ufffdb\ufffdc\ufffdd&#xD;e&#x9;f&#xA;g&amp;&apos;&lt;&gt;&quot;h\x7f\u00e9" + `"`
	e := Entry{Loc: in, MD: &MD{Type: "text/plain\x00", Path: "/p\x1f"}, Links: []Link{{Rel: "via", Href: in}}}
	var buf bytes.Buffer
	w := NewURLSet(&buf, MD{Capability: ResourceList})
	before := w.Size()
	if err := w.Write(e); err != nil {
		t.Fatal(err)
	}
	if got := w.Size() - before; got != EntrySize(e) {
		t.Errorf("EntrySize %d, Write wrote %d", EntrySize(e), got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, text) || !strings.Contains(out, attr) {
		t.Errorf("want %q and %q in\n%q", text, attr, out)
	}
	if !utf8.ValidString(out) || strings.ContainsAny(out, "\x00\x01\x1f\r\ufffe") {
		t.Errorf("characters XML cannot carry (or a raw CR) written:\n%q", out)
	}
	if n := EscapedLen(in); n < len(text)-len("<loc></loc>") || n != len(attr)-len(` href=""`) {
		t.Errorf("EscapedLen %d: not the attribute's length %d, or below the text's %d", n, len(attr)-len(` href=""`), len(text)-len("<loc></loc>"))
	}
	for name, parse := range map[string]func(io.Reader) (*Document, error){"Parse": Parse, "encoding/xml": parseXML} {
		d, err := parse(strings.NewReader(out))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(d.Entries) != 1 || d.Entries[0].Loc != back || len(d.Entries[0].Links) != 1 || d.Entries[0].Links[0].Href != back ||
			d.Entries[0].MD.Type != "text/plain\ufffd" || d.Entries[0].MD.Path != "/p\ufffd" {
			t.Errorf("%s: %+v", name, d.Entries)
		}
	}
}

// TestWriterEscapesAcrossBuffer: values that need escaping from various
// offsets, short and longer than the writer's buffer, written at every offset
// in it, come out as xmltext escapes them.
func TestWriterEscapesAcrossBuffer(t *testing.T) {
	var buf bytes.Buffer
	w := NewURLSet(&buf, MD{Capability: ResourceList})
	var want []byte
	for i := range 400 {
		s := "http://x.test/" + strings.Repeat("a\"&\x01\u00e9", i*7) + strings.Repeat("b", i)
		if err := w.Write(Entry{Loc: s, Links: []Link{{Rel: "r", Href: s}}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "  <url><loc>"...)
		want = xmltext.Append(want, s, false)
		want = append(want, `</loc><rs:ln rel="r" href="`...)
		want = xmltext.Append(want, s, true)
		want = append(want, "\"/></url>\n"...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want = append(want, "</urlset>\n"...)
	got := buf.Bytes()
	got = got[bytes.Index(got, []byte("  <url>")):]
	want = want[bytes.Index(want, []byte("  <url>")):]
	if !bytes.Equal(got, want) {
		t.Errorf("written entries differ from xmltext's escaping")
	}
}

// FuzzWriterEscape: the writer escapes any string, in text and in attribute
// values, exactly as xmltext does, its buffer small or not.
func FuzzWriterEscape(f *testing.F) {
	for _, s := range []string{"", "http://a/b?x=1&y=2", "a\x01b\ufffec\xffd\re\tf\ng&'<>\"h\x7f\u00e9", "\xe6\x97", "日本&", "\xed\xa0\x80<"} {
		f.Add(s, false, 7)
		f.Add(s, true, 4096)
	}
	f.Fuzz(func(t *testing.T, s string, attr bool, size int) {
		var b bytes.Buffer
		w := &Writer{bw: bufio.NewWriterSize(&b, 16+size&0xfff)}
		w.escape(s, attr)
		w.escape(s, attr) // from another offset in the buffer
		if err := w.bw.Flush(); err != nil {
			t.Fatal(err)
		}
		want := xmltext.Append(nil, s, attr)
		want = xmltext.Append(want, s, attr)
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("%q (attr %v): %q, want %q", s, attr, b.Bytes(), want)
		}
	})
}
