package oaiserver

import (
	"io"
	"strconv"
	"time"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// sink is what the XML writer writes to: *bufio.Writer (responses) and
// *bytes.Buffer (Item) both implement it.
type sink interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// xw is a minimal streaming XML writer. Callers write markup with s and
// character data with text/attr, which escape it by xmltext's one rule: &, <,
// > and the apostrophe always (&apos;), CR as &#xD;, in attribute values also
// the double quote, TAB and LF; characters XML cannot carry become U+FFFD, so
// the output is always well-formed.
type xw struct {
	w       sink
	scratch []byte
}

func newXW(w sink) *xw { return &xw{w: w, scratch: make([]byte, 0, 64)} }

// s writes raw markup.
func (x *xw) s(str string) { _, _ = x.w.WriteString(str) }

// text writes escaped character data.
func (x *xw) text(str string) { _ = xmltext.Escape(x.w, str, false) }

// attr writes ` name="value"` with the value escaped.
func (x *xw) attr(name, val string) {
	_ = x.w.WriteByte(' ')
	_, _ = x.w.WriteString(name)
	_, _ = x.w.WriteString(`="`)
	_ = xmltext.Escape(x.w, val, true)
	_ = x.w.WriteByte('"')
}

// attrInt writes ` name="n"`.
func (x *xw) attrInt(name string, n int) {
	_ = x.w.WriteByte(' ')
	_, _ = x.w.WriteString(name)
	_, _ = x.w.WriteString(`="`)
	x.int(n)
	_ = x.w.WriteByte('"')
}

// int writes a decimal integer.
func (x *xw) int(n int) {
	x.scratch = strconv.AppendInt(x.scratch[:0], int64(n), 10)
	_, _ = x.w.Write(x.scratch)
}

// elem writes <name>escaped text</name>.
func (x *xw) elem(name, text string) {
	_ = x.w.WriteByte('<')
	_, _ = x.w.WriteString(name)
	_ = x.w.WriteByte('>')
	_ = xmltext.Escape(x.w, text, false)
	_, _ = x.w.WriteString("</")
	_, _ = x.w.WriteString(name)
	_, _ = x.w.WriteString(">")
}

// time writes t (UTC) with layout.
func (x *xw) time(t time.Time, layout string) {
	x.scratch = t.UTC().AppendFormat(x.scratch[:0], layout)
	_, _ = x.w.Write(x.scratch)
}
