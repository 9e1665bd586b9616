// Package rsync writes and reads ResourceSync 1.1 documents (ANSI/NISO
// Z39.99-2017): Sitemap <urlset> and <sitemapindex> documents with the rs:md and
// rs:ln extension elements. Writers stream entry by entry to an io.Writer, so a
// list of any length never sits in memory. Standard library only; it knows
// nothing of OAI-PMH or HTTP.
package rsync

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// Namespaces.
const (
	SitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	RSNS      = "http://www.openarchives.org/rs/terms/"
)

// Capabilities (root rs:md/@capability).
const (
	Description          = "description"
	CapabilityList       = "capabilitylist"
	ResourceList         = "resourcelist"
	ChangeList           = "changelist"
	ResourceDump         = "resourcedump"
	ChangeDump           = "changedump"
	ResourceDumpManifest = "resourcedump-manifest"
	ChangeDumpManifest   = "changedump-manifest"
)

// MaxEntries is the Sitemap limit of entries per document (RS-006).
const MaxEntries = 50000

// MaxBytes is the Sitemap limit of a document's size, uncompressed: 50 MiB
// (sitemaps.org: "50MB (52,428,800 bytes)"; RS-006, D-RS-17).
const MaxBytes = 50 << 20

// MaxLoc is the longest <loc> the sitemap schema accepts (tLoc, maxLength
// 2048).
const MaxLoc = 2048

// MD is an rs:md element. Zero values are omitted.
type MD struct {
	Capability string
	At         time.Time
	Completed  time.Time
	From       time.Time
	Until      time.Time
	Change     string // created, updated, deleted
	DateTime   time.Time
	Hash       string // e.g. "md5:… sha-256:…"
	Length     int64
	HasLength  bool // Length is written even when 0
	Type       string
	Encoding   string
	Path       string
}

func (m *MD) empty() bool {
	return m == nil || *m == MD{}
}

// Link is an rs:ln element.
type Link struct {
	Rel       string
	Href      string
	Type      string
	Modified  time.Time
	Hash      string
	Length    int64
	HasLength bool
	Pri       int
	Profile   string
}

// Entry is a <url> (in a urlset) or <sitemap> (in a sitemapindex).
type Entry struct {
	Loc     string
	LastMod time.Time
	MD      *MD
	Links   []Link
}

// FormatTime renders a W3C datetime in UTC with a Z: seconds precision, plus
// the fractional digits needed for sub-second times (GW-RS-06).
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999999Z")
}

// Hash builds the hash attribute from hex digests; empty ones are left out.
func Hash(md5hex, sha256hex string) string {
	var parts []string
	if md5hex != "" {
		parts = append(parts, "md5:"+md5hex)
	}
	if sha256hex != "" {
		parts = append(parts, "sha-256:"+sha256hex)
	}
	return strings.Join(parts, " ")
}

// Writer streams one document. Call Close to finish it; the first write error
// sticks and is returned by every later call.
type Writer struct {
	out     *counter
	bw      *bufio.Writer
	item    string
	root    string
	err     error
	count   int
	scratch []byte // for numbers and times, so an entry allocates nothing
}

// ErrTooMany reports more entries than MaxEntries.
var ErrTooMany = errors.New("rsync: more than 50000 entries in one document")

// ErrTooLarge reports a document that would pass MaxBytes.
var ErrTooLarge = errors.New("rsync: a document of more than 50 MiB (52,428,800 bytes)")

// counter counts what goes through to the underlying writer.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// EntrySize is the number of bytes Write writes for e in a <urlset>.
func EntrySize(e Entry) int64 {
	c := &counter{w: io.Discard}
	w := &Writer{bw: bufio.NewWriterSize(c, 4096), item: "url", out: c}
	w.entry(e)
	w.bw.Flush()
	return c.n
}

// EscapedLen is the length of s escaped as an attribute value, which is also
// an upper bound of its length escaped as text (<loc>): an attribute value
// escapes every byte text escapes, the same way, and '"', TAB and LF
// besides (xmltext's rule).
func EscapedLen(s string) int {
	return xmltext.EscapedLen(s, true)
}

// NewURLSet starts a <urlset> with the root links and rs:md.
func NewURLSet(w io.Writer, md MD, links ...Link) *Writer {
	return start(w, "urlset", "url", md, links)
}

// NewSitemapIndex starts a <sitemapindex> with the root links and rs:md.
func NewSitemapIndex(w io.Writer, md MD, links ...Link) *Writer {
	return start(w, "sitemapindex", "sitemap", md, links)
}

func start(w io.Writer, root, item string, md MD, links []Link) *Writer {
	c := &counter{w: w}
	wr := &Writer{out: c, bw: bufio.NewWriterSize(c, 64<<10), item: item, root: root}
	wr.str(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<" + root + ` xmlns="` + SitemapNS + `" xmlns:rs="` + RSNS + `">` + "\n")
	for _, l := range links {
		wr.str("  ")
		wr.link(l)
		wr.str("\n")
	}
	wr.str("  ")
	wr.md(&md)
	wr.str("\n")
	return wr
}

// Count is the number of entries written.
func (w *Writer) Count() int { return w.count }

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.out.n + int64(w.bw.Buffered()) }

// Write adds one entry. Past MaxEntries entries, or when the document with
// its closing tag would pass MaxBytes, it fails with ErrTooMany or
// ErrTooLarge and the document is not to be used.
func (w *Writer) Write(e Entry) error {
	if w.err != nil {
		return w.err
	}
	if w.count >= MaxEntries {
		w.err = ErrTooMany
		return w.err
	}
	w.count++
	w.entry(e)
	if w.err == nil && w.Size()+int64(len(w.root))+4 > MaxBytes {
		w.err = ErrTooLarge
	}
	return w.err
}

func (w *Writer) entry(e Entry) {
	w.str("  <")
	w.str(w.item)
	w.str("><loc>")
	w.escape(e.Loc, false)
	w.str("</loc>")
	if !e.LastMod.IsZero() {
		w.str("<lastmod>")
		w.scratch = appendTime(w.scratch[:0], e.LastMod)
		w.raw(w.scratch)
		w.str("</lastmod>")
	}
	if !e.MD.empty() {
		w.md(e.MD)
	}
	for _, l := range e.Links {
		w.link(l)
	}
	w.str("</")
	w.str(w.item)
	w.str(">\n")
}

// Close ends the document and flushes it.
func (w *Writer) Close() error {
	w.str("</" + w.root + ">\n")
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

func (w *Writer) str(s string) {
	if w.err == nil {
		_, w.err = w.bw.WriteString(s)
	}
}

func (w *Writer) attrStart(name string) {
	w.str(" ")
	w.str(name)
	w.str(`="`)
}

func (w *Writer) attr(name, v string) {
	if v == "" {
		return
	}
	w.attrStart(name)
	w.escape(v, true)
	w.str(`"`)
}

// raw writes a value that needs no escaping (digits, times).
func (w *Writer) raw(b []byte) {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
}

func (w *Writer) timeAttr(name string, t time.Time) {
	if !t.IsZero() {
		w.attrStart(name)
		w.scratch = appendTime(w.scratch[:0], t)
		w.raw(w.scratch)
		w.str(`"`)
	}
}

func (w *Writer) intAttr(name string, v int64) {
	w.attrStart(name)
	w.scratch = strconv.AppendInt(w.scratch[:0], v, 10)
	w.raw(w.scratch)
	w.str(`"`)
}

func (w *Writer) md(m *MD) {
	w.str("<rs:md")
	w.attr("capability", m.Capability)
	w.attr("change", m.Change)
	w.timeAttr("at", m.At)
	w.timeAttr("completed", m.Completed)
	w.timeAttr("from", m.From)
	w.timeAttr("until", m.Until)
	w.timeAttr("datetime", m.DateTime)
	w.attr("hash", m.Hash)
	if m.HasLength || m.Length != 0 {
		w.intAttr("length", m.Length)
	}
	w.attr("type", m.Type)
	w.attr("encoding", m.Encoding)
	w.attr("path", m.Path)
	w.str("/>")
}

func (w *Writer) link(l Link) {
	w.str("<rs:ln")
	w.attr("rel", l.Rel)
	w.attr("href", l.Href)
	w.timeAttr("modified", l.Modified)
	w.attr("hash", l.Hash)
	if l.HasLength || l.Length != 0 {
		w.intAttr("length", l.Length)
	}
	w.attr("type", l.Type)
	if l.Pri > 0 {
		w.intAttr("pri", int64(l.Pri))
	}
	w.attr("profile", l.Profile)
	w.str("/>")
}

// escape writes s as character data (attr false) or as an attribute value
// delimited by '"' (attr true), by xmltext's rule: '&', '<', '>', the
// apostrophe and CR always, '"', TAB and LF in attribute values, and U+FFFD
// for what XML cannot carry.
//
// Most values (URLs, hashes, media types) are ASCII with few bytes or none
// to escape: runs of bytes xmltext leaves alone are written at once, after a
// scan as tight as a loop can be, and an ASCII byte it escapes is replaced
// as it replaces it. From the first byte that is not ASCII, xmltext escapes
// the rest, checking it as UTF-8.
func (w *Writer) escape(s string, attr bool) {
	t := &asciiEscapes[0]
	if attr {
		t = &asciiEscapes[1]
	}
	for w.err == nil {
		i := 0
		for i < len(s) && t[s[i]] == "" {
			i++
		}
		if i == len(s) {
			_, w.err = w.bw.WriteString(s)
			return
		}
		if _, w.err = w.bw.WriteString(s[:i]); w.err != nil {
			return
		}
		if s[i] >= utf8.RuneSelf {
			w.err = xmltext.Escape(w.bw, s[i:], attr)
			return
		}
		_, w.err = w.bw.WriteString(t[s[i]])
		s = s[i+1:]
	}
}

// asciiEscapes holds, in text ([0]) and in attribute values ([1]), what
// xmltext writes for each ASCII byte it escapes, and a placeholder (".") for
// every byte from 0x80, which escape leaves to xmltext; "" for the rest.
var asciiEscapes = escapeTables()

func escapeTables() (t [2][256]string) {
	for k, attr := range []bool{false, true} {
		for c := range utf8.RuneSelf {
			if s, e := string(rune(c)), string(xmltext.Append(nil, string(rune(c)), attr)); e != s {
				t[k][c] = e
			}
		}
		for c := utf8.RuneSelf; c < len(t[k]); c++ {
			t[k][c] = "."
		}
	}
	return t
}

// appendTime appends t as a W3C datetime in UTC with a Z and only the
// fractional digits needed, like FormatTime but without a layout to parse.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	b = append(b, byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		var digits [9]byte
		for i := 8; i >= 0; i-- {
			digits[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for n > 0 && digits[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, digits[:n]...)
	}
	return append(b, 'Z')
}
