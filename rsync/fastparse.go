package rsync

import (
	"bytes"
	"encoding/xml"
	"strings"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// parseFast parses the XML that sitemaps are written in, in memory, without
// encoding/xml: encoding/xml reads byte by byte through an interface and
// allocates for every token, names and text included, which made a 50,000
// entry manifest take 0.3 s to read, longer than unpacking its package.
//
// It feeds the builder the events encoding/xml's Token would feed it for the
// same bytes, and gives up (ok false, and Parse starts again with
// encoding/xml) on anything it does not check the way encoding/xml does, so
// that whatever it accepts encoding/xml accepts the same way and whatever
// encoding/xml rejects it rejects or gives up on:
//
//   - bytes: printable ASCII, tab, line feed and UTF-8 characters in the Char
//     production (checked as encoding/xml checks them); no carriage returns
//     (nothing to normalise) and no other control bytes;
//   - names: ASCII names, at most one colon and not at either end;
//     a byte >= 0x80 in a name gives up;
//   - tags: attributes separated by white space, each name="value" or
//     name='value' with no '<' in the value; end tags naming the element
//     they close, prefix included;
//   - references: the five predefined entities only;
//   - comments and processing instructions (an xml-stylesheet, say); the XML
//     declaration only at the very start, in the usual forms (version 1.0,
//     UTF-8, standalone); no CDATA section or DOCTYPE;
//   - namespaces: declarations and lookups as encoding/xml does them, except
//     that a prefix declared empty, or a declaration of the xml or xmlns
//     prefix, gives up;
//   - nothing but white space and comments outside the root element, and no
//     text but white space before it.
//
// The error ok comes with is the builder's (a document that is well-formed
// XML but not a sitemap, or has a bad rs:md value), which encoding/xml's
// tokens would have led the builder to as well.
func parseFast(b []byte) (doc *Document, ok bool, err error) {
	f := fastParser{b: b}
	return f.parse()
}

type fastParser struct {
	b      []byte
	p      builder
	ns     []nsBinding // in scope, innermost last
	open   []openElem
	attrs  []fastAttr
	xattrs []xml.Attr
	buf    []byte // decoded text
}

type nsBinding struct{ prefix, url string }

// maxBindings bounds the declarations in scope: lookup walks them, and a
// document that nests thousands (no sitemap does) is left to encoding/xml's
// map rather than walked for every element.
const maxBindings = 64

type openElem struct {
	name []byte // as written, prefix included
	ns   int    // len(ns) before the element's declarations
}

type fastAttr struct {
	prefix, local, value []byte
	amp                  bool // the value has a reference to decode
}

const xmlNS = "http://www.w3.org/XML/1998/namespace"

// byteClasses has a class for every byte value: 'n' a name byte
// (xmltext.IsNameChar, as encoding/xml's isNameByte has it for ASCII), 's'
// white space (xmltext.IsSpace but for '\r'), '<', '&', ']', 'u' for the
// bytes of UTF-8 sequences (>= 0x80), 'x' for the bytes parseFast leaves to
// encoding/xml (other control bytes and '\r', which it would have to
// normalise), 'p' for the rest. The loops look bytes up here rather than call
// xmltext per byte; TestByteClasses spells the classes out.
var byteClasses = classes()

// nameStart marks the ASCII bytes that may start a name
// (xmltext.IsNameStart); parseFast leaves a name that starts with any other
// byte to encoding/xml.
var nameStart = nameStarts()

func classes() (t [256]byte) {
	for c := range len(t) {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = cUTF8
		case c == '\r' || !xmltext.IsChar(rune(c)):
			t[c] = cBad
		case xmltext.IsSpace(byte(c)):
			t[c] = cSpace
		case c == '<' || c == '&' || c == ']':
			t[c] = byte(c)
		case xmltext.IsNameChar(rune(c)):
			t[c] = cName
		default:
			t[c] = 'p'
		}
	}
	return t
}

func nameStarts() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = xmltext.IsNameStart(rune(c))
	}
	return t
}

const (
	cName    = 'n'
	cSpace   = 's'
	cLT      = '<'
	cAmp     = '&'
	cBracket = ']'
	cBad     = 'x'
	cUTF8    = 'u'
)

// char is the length of the character at b[i:], a byte >= 0x80, when it is
// valid UTF-8 and in XML's Char production (encoding/xml checks both in text
// and attribute values), or 0.
func char(b []byte, i int) int {
	r, n := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && n == 1 || !xmltext.IsChar(r) {
		return 0
	}
	return n
}

func (f *fastParser) parse() (*Document, bool, error) {
	b := f.b
	i := 0
	rooted := false // the root element has started
	for i < len(b) {
		if b[i] != '<' {
			j, amp, ok := f.scanText(i)
			if !ok {
				return nil, false, nil
			}
			text := b[i:j]
			if len(f.open) == 0 {
				// No CR: scanText gives up on it.
				if !xmltext.AllSpace(text) {
					return nil, false, nil
				}
			} else {
				if amp {
					if text, ok = f.decode(text); !ok {
						return nil, false, nil
					}
				}
				f.p.chars(text)
			}
			i = j
			continue
		}
		if i+1 >= len(b) {
			return nil, false, nil
		}
		var ok bool
		var err error
		switch b[i+1] {
		case '/':
			i, ok, err = f.endTag(i + 2)
		case '!':
			i, ok = f.comment(i)
		case '?':
			i, ok = f.procInst(i)
		default:
			if rooted && len(f.open) == 0 {
				return nil, false, nil // a second root element
			}
			rooted = true
			i, ok, err = f.startTag(i + 1)
		}
		if !ok || err != nil {
			return nil, ok, err
		}
	}
	if len(f.open) != 0 || !rooted {
		return nil, false, nil
	}
	doc, err := f.p.finish()
	return doc, true, err
}

// scanText finds the end of character data at i and whether it has a
// reference; not ok on a byte parseFast leaves to encoding/xml or "]]>".
func (f *fastParser) scanText(i int) (end int, amp, ok bool) {
	b := f.b
	for ; i < len(b); i++ {
		switch byteClasses[b[i]] {
		case cLT:
			return i, amp, true
		case cAmp:
			amp = true
		case cBracket:
			if i+2 < len(b) && b[i+1] == ']' && b[i+2] == '>' {
				return 0, false, false
			}
		case cUTF8:
			n := char(b, i)
			if n == 0 {
				return 0, false, false
			}
			i += n - 1
		case cBad:
			return 0, false, false
		}
	}
	return i, amp, true
}

// decode replaces the predefined entities in text, into f.buf; not ok on any
// other reference.
func (f *fastParser) decode(text []byte) ([]byte, bool) {
	out := f.buf[:0]
	for {
		k := bytes.IndexByte(text, '&')
		if k < 0 {
			break
		}
		out = append(out, text[:k]...)
		text = text[k+1:]
		semi := bytes.IndexByte(text, ';')
		if semi < 0 {
			return nil, false
		}
		var c byte
		switch string(text[:semi]) {
		case "lt":
			c = '<'
		case "gt":
			c = '>'
		case "amp":
			c = '&'
		case "apos":
			c = '\''
		case "quot":
			c = '"'
		default:
			return nil, false
		}
		out = append(out, c)
		text = text[semi+1:]
	}
	out = append(out, text...)
	f.buf = out
	return out, true
}

// name reads an ASCII name at i: its prefix (nil when none), its local part,
// and the index after it.
func (f *fastParser) name(i int) (prefix, local []byte, end int, ok bool) {
	b := f.b
	if i >= len(b) {
		return nil, nil, 0, false
	}
	if !nameStart[b[i]] {
		return nil, nil, 0, false
	}
	start, colon := i, -1
	for ; i < len(b) && byteClasses[b[i]] == cName; i++ {
		if b[i] == ':' {
			if colon >= 0 {
				return nil, nil, 0, false
			}
			colon = i
		}
	}
	// A name ends at a byte encoding/xml does not take into it; a byte >=
	// 0x80 it would take.
	if i >= len(b) || b[i] >= 0x80 || colon == start || colon == i-1 {
		return nil, nil, 0, false
	}
	if colon < 0 {
		return nil, b[start:i], i, true
	}
	return b[start:colon], b[colon+1 : i], i, true
}

func (f *fastParser) space(i int) int {
	for i < len(f.b) && byteClasses[f.b[i]] == cSpace {
		i++
	}
	return i
}

// endTag reads an end tag whose name is at i.
func (f *fastParser) endTag(i int) (int, bool, error) {
	b := f.b
	nameStart := i
	_, local, i, ok := f.name(i)
	if !ok || len(f.open) == 0 || !bytes.Equal(b[nameStart:i], f.open[len(f.open)-1].name) {
		return 0, false, nil
	}
	if i = f.space(i); i >= len(b) || b[i] != '>' {
		return 0, false, nil
	}
	return f.close(i+1, internName(local))
}

// close ends the innermost element.
func (f *fastParser) close(i int, name string) (int, bool, error) {
	top := f.open[len(f.open)-1]
	f.open = f.open[:len(f.open)-1]
	f.ns = f.ns[:top.ns]
	if err := f.p.end(name); err != nil {
		return 0, true, err
	}
	return i, true, nil
}

// comment skips a comment at i; anything else that starts "<!" is left to
// encoding/xml.
func (f *fastParser) comment(i int) (int, bool) {
	b := f.b
	if !bytes.HasPrefix(b[i:], []byte("<!--")) {
		return 0, false
	}
	for k := i + 4; k+1 < len(b); {
		if b[k] == '-' && b[k+1] == '-' {
			if k+2 < len(b) && b[k+2] == '>' {
				return k + 3, true
			}
			return 0, false
		}
		n := plainChar(b, k)
		if n == 0 {
			return 0, false
		}
		k += n
	}
	return 0, false
}

// plainChar is the length of the character at b[i:] if parseFast takes it
// in a comment or processing instruction (where encoding/xml checks nothing;
// parseFast is stricter), or 0.
func plainChar(b []byte, i int) int {
	switch byteClasses[b[i]] {
	case cBad:
		return 0
	case cUTF8:
		return char(b, i)
	}
	return 1
}

// procInst skips a processing instruction at i (an xml-stylesheet, say),
// which the builder ignores, or the XML declaration, which must be the very
// first thing and say what encoding/xml accepts without a CharsetReader.
func (f *fastParser) procInst(i int) (int, bool) {
	b := f.b
	prefix, target, j, ok := f.name(i + 2)
	if !ok || prefix != nil || byteClasses[b[j]] != cSpace && b[j] != '?' {
		return 0, false
	}
	end := bytes.Index(b[j:], []byte("?>"))
	if end < 0 {
		return 0, false
	}
	content := b[j : j+end]
	for k := 0; k < len(content); {
		n := plainChar(content, k)
		if n == 0 {
			return 0, false
		}
		k += n
	}
	if string(target) == "xml" {
		// encoding/xml's Inst starts after the white space that follows the
		// target; Parse checks the declaration ends where one space would put
		// it. One space, then only the usual pseudo-attributes.
		if i != 0 || len(content) < 2 || content[0] != ' ' || !plainDeclaration(content[1:]) {
			return 0, false
		}
	}
	return j + end + 2, true
}

// plainDeclaration reports whether s (a declaration's content) is
// version="1.0", then optionally encoding="UTF-8" (any case) and
// standalone="yes" or "no", one space apart, either quotes: forms for which
// encoding/xml's lenient reading gives version 1.0 and UTF-8.
func plainDeclaration(s []byte) bool {
	parts := bytes.Split(s, []byte(" "))
	want := []string{"version", "encoding", "standalone"}
	for k, part := range parts {
		name, value, ok := bytes.Cut(part, []byte("="))
		if !ok || len(value) < 2 || value[0] != '"' && value[0] != '\'' || value[len(value)-1] != value[0] {
			return false
		}
		for len(want) > 0 && want[0] != string(name) && want[0] != "version" {
			want = want[1:] // encoding and standalone are optional
		}
		if len(want) == 0 || want[0] != string(name) {
			return false
		}
		v := string(value[1 : len(value)-1])
		switch {
		case name[0] == 'v' && (k != 0 || v != "1.0"),
			name[0] == 'e' && !strings.EqualFold(v, "utf-8"),
			name[0] == 's' && v != "yes" && v != "no":
			return false
		}
		want = want[1:]
	}
	return true
}

// internName returns the names sitemaps use without allocating.
func internName(b []byte) string {
	switch string(b) {
	case "urlset":
		return "urlset"
	case "sitemapindex":
		return "sitemapindex"
	case "url":
		return "url"
	case "sitemap":
		return "sitemap"
	case "loc":
		return "loc"
	case "lastmod":
		return "lastmod"
	case "md":
		return "md"
	case "ln":
		return "ln"
	case "hash":
		return "hash"
	case "length":
		return "length"
	case "type":
		return "type"
	case "path":
		return "path"
	case "href":
		return "href"
	case "rel":
		return "rel"
	}
	return string(b)
}
