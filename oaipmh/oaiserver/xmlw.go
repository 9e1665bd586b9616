package oaiserver

import (
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// sink is what the XML writer writes to: *bufio.Writer (responses) and
// *bytes.Buffer (Item) both implement it.
type sink interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// xw is a minimal streaming XML writer. Callers write markup with s and
// character data with text/attr, which escape.
type xw struct {
	w       sink
	scratch []byte
}

func newXW(w sink) *xw { return &xw{w: w, scratch: make([]byte, 0, 64)} }

// s writes raw markup.
func (x *xw) s(str string) { _, _ = x.w.WriteString(str) }

// text writes escaped character data.
func (x *xw) text(str string) { escape(x.w, str, false) }

// attr writes ` name="value"` with the value escaped.
func (x *xw) attr(name, val string) {
	_ = x.w.WriteByte(' ')
	_, _ = x.w.WriteString(name)
	_, _ = x.w.WriteString(`="`)
	escape(x.w, val, true)
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
	escape(x.w, text, false)
	_, _ = x.w.WriteString("</")
	_, _ = x.w.WriteString(name)
	_, _ = x.w.WriteString(">")
}

// time writes t (UTC) with layout.
func (x *xw) time(t time.Time, layout string) {
	x.scratch = t.UTC().AppendFormat(x.scratch[:0], layout)
	_, _ = x.w.Write(x.scratch)
}

// escape writes str as XML character data (attr=false) or as an attribute
// value delimited by double quotes (attr=true). '&', '<' and '>' are always
// escaped; in attributes also '"', TAB and LF (so they survive attribute
// value normalisation). CR is always written as a character reference.
// Characters not allowed in XML 1.0 (other C0 controls, U+FFFE, U+FFFF,
// invalid UTF-8) are replaced by U+FFFD, so the output is always well-formed.
func escape(w sink, str string, attr bool) {
	last := 0
	for i := 0; i < len(str); {
		c := str[i]
		if c < utf8.RuneSelf {
			var esc string
			switch {
			case c == '&':
				esc = "&amp;"
			case c == '<':
				esc = "&lt;"
			case c == '>':
				esc = "&gt;"
			case c == '"' && attr:
				esc = "&quot;"
			case c == '\t' && attr:
				esc = "&#9;"
			case c == '\n' && attr:
				esc = "&#10;"
			case c == '\r':
				esc = "&#13;"
			case c < 0x20 && c != '\t' && c != '\n':
				esc = "\uFFFD"
			default:
				i++
				continue
			}
			_, _ = w.WriteString(str[last:i])
			_, _ = w.WriteString(esc)
			i++
			last = i
			continue
		}
		r, size := utf8.DecodeRuneInString(str[i:])
		if (r == utf8.RuneError && size == 1) || r == 0xFFFE || r == 0xFFFF {
			_, _ = w.WriteString(str[last:i])
			_, _ = w.WriteString("\uFFFD")
			i += size
			last = i
			continue
		}
		i += size
	}
	_, _ = w.WriteString(str[last:])
}
