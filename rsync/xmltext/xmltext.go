// Package xmltext holds the XML 1.0 character rules every reader and writer
// of rsbridge shares: whitespace, the characters a document may hold, name
// characters, and escaping with one rule for what XML cannot carry.
//
// It is the one package every other may import (cmd/rsbridge/imports_test.go).
package xmltext

import (
	"io"
	"unicode/utf8"
)

// IsSpace reports XML whitespace (production S): space, TAB, LF, CR.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// AllSpace reports whether b is empty or only whitespace.
func AllSpace(b []byte) bool {
	for _, c := range b {
		if !IsSpace(c) {
			return false
		}
	}
	return true
}

// IsChar reports whether an XML 1.0 document may hold r (production Char).
func IsChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// IsNameStart reports whether r may start an XML name (NameStartChar,
// colon included).
func IsNameStart(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == ':':
		return true
	case r < 0xC0:
		return false
	}
	return r <= 0xD6 && r != 0xD7 || r >= 0xD8 && r <= 0xF6 || r >= 0xF8 && r <= 0x2FF ||
		r >= 0x370 && r <= 0x37D || r >= 0x37F && r <= 0x1FFF || r >= 0x200C && r <= 0x200D ||
		r >= 0x2070 && r <= 0x218F || r >= 0x2C00 && r <= 0x2FEF || r >= 0x3001 && r <= 0xD7FF ||
		r >= 0xF900 && r <= 0xFDCF || r >= 0xFDF0 && r <= 0xFFFD || r >= 0x10000 && r <= 0xEFFFF
}

// IsNameChar reports whether r may continue an XML name (NameChar).
func IsNameChar(r rune) bool {
	return IsNameStart(r) || r >= '0' && r <= '9' || r == '-' || r == '.' || r == 0xB7 ||
		r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}

// QName joins a prefix (or namespace) and a local name as "space:local", or
// returns local alone when space is empty.
func QName(space, local string) string {
	if space == "" {
		return local
	}
	return space + ":" + local
}

// Replacement stands in for what XML cannot carry: C0 controls other than
// TAB, LF and CR, U+FFFE, U+FFFF and bytes that are not UTF-8.
const Replacement = "\uFFFD"

// The escapes: '&', '<', '>' and the apostrophe always, and CR (which a
// parser would turn into LF); in attribute values, delimited by '"', also
// '"', TAB and LF, which attribute-value normalisation would turn into
// spaces. stops[0] (text) and stops[1] (attributes) mark the bytes the scan
// stops at: those escaped, and every byte from 0x80, whose sequence is then
// checked as UTF-8; escapes holds what replaces an ASCII byte.
var stops, escapes = tables()

func tables() (stops [2][256]bool, escapes [utf8.RuneSelf]string) {
	for c := range 0x20 {
		if c != '\t' && c != '\n' && c != '\r' {
			escapes[c] = Replacement
		}
	}
	for c, e := range map[byte]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '\'': "&apos;", '\r': "&#xD;"} {
		escapes[c] = e
	}
	for c := range stops[0] {
		stops[0][c] = c >= utf8.RuneSelf || escapes[c] != ""
		stops[1][c] = stops[0][c] || c == '"' || c == '\t' || c == '\n'
	}
	for c, e := range map[byte]string{'"': "&quot;", '\t': "&#x9;", '\n': "&#xA;"} {
		escapes[c] = e
	}
	return stops, escapes
}

// next finds the next byte of s at or after i that needs escaping and what
// replaces it; n is how many bytes it replaces (0: none left).
func next(s string, i int, attr bool) (at int, rep string, n int) {
	stop := &stops[0]
	if attr {
		stop = &stops[1]
	}
	for i < len(s) {
		c := s[i]
		if !stop[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i, escapes[c], 1
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == 0xFFFE || r == 0xFFFF {
			return i, Replacement, size
		}
		i += size
	}
	return len(s), "", 0
}

// Escape writes s as character data (attr false) or as an attribute value
// delimited by '"' (attr true), by the package's one rule.
func Escape(w io.StringWriter, s string, attr bool) error {
	last := 0
	for {
		i, rep, n := next(s, last, attr)
		if n == 0 {
			break
		}
		if _, err := w.WriteString(s[last:i]); err != nil {
			return err
		}
		if _, err := w.WriteString(rep); err != nil {
			return err
		}
		last = i + n
	}
	_, err := w.WriteString(s[last:])
	return err
}

// Append appends s escaped as Escape writes it.
func Append(dst []byte, s string, attr bool) []byte {
	last := 0
	for {
		i, rep, n := next(s, last, attr)
		if n == 0 {
			break
		}
		dst = append(append(dst, s[last:i]...), rep...)
		last = i + n
	}
	return append(dst, s[last:]...)
}

// EscapedLen is the length of s once escaped.
func EscapedLen(s string, attr bool) int {
	total, last := len(s), 0
	for {
		i, rep, n := next(s, last, attr)
		if n == 0 {
			return total
		}
		total += len(rep) - n
		last = i + n
	}
}

// Entity is the character one of XML's five predefined entities names (the
// name between '&' and ';'); ok is false for any other name.
func Entity[T string | []byte](name T) (r rune, ok bool) {
	switch string(name) {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "apos":
		return '\'', true
	case "quot":
		return '"', true
	}
	return 0, false
}

// CharRefDigits reads the digits of a character reference from s[i]
// (decimal, or hexadecimal when hex, either case): it returns the index of
// the first byte that is not one, and their value, which saturates at
// utf8.MaxRune+1 (out of range either way).
func CharRefDigits[T string | []byte](s T, i int, hex bool) (end int, v int64) {
	base := int64(10)
	if hex {
		base = 16
	}
	for ; i < len(s); i++ {
		c := s[i]
		var d int64
		switch {
		case '0' <= c && c <= '9':
			d = int64(c - '0')
		case hex && 'a' <= c && c <= 'f':
			d = int64(c-'a') + 10
		case hex && 'A' <= c && c <= 'F':
			d = int64(c-'A') + 10
		default:
			return i, v
		}
		v = min(v*base+d, utf8.MaxRune+1)
	}
	return i, v
}

// CharRefRune is what a reference to v (at most utf8.MaxRune) decodes to,
// as string(rune(v)) has it: a surrogate becomes U+FFFD.
func CharRefRune(v int64) rune {
	if 0xD800 <= v && v <= 0xDFFF {
		return utf8.RuneError
	}
	return rune(v)
}

// Byte classes for the tokenizers' hot loops (the OAI-PMH decoder's and the
// crosswalk's): Class answers several questions with one table lookup.
const (
	ClassName      = 1 << iota // continues a name as encoding/xml's readName reads it: ASCII name bytes, and every byte >= 0x80
	ClassNameStart             // starts an ASCII name: letters, '_' and ':'
	ClassSpace                 // white space (production S)
	ClassText                  // interrupts plain character data: < & > CR and the other control characters
	ClassAttr                  // interrupts a plain attribute value: < & " ' CR and the other control characters
	ClassHigh                  // >= 0x80: part of a multi-byte character
)

var classes = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		switch {
		case 'A' <= b && b <= 'Z', 'a' <= b && b <= 'z', b == '_', b == ':':
			t[c] |= ClassName | ClassNameStart
		case '0' <= b && b <= '9', b == '.', b == '-':
			t[c] |= ClassName
		case b >= utf8.RuneSelf:
			t[c] |= ClassName | ClassHigh
		}
		if IsSpace(b) {
			t[c] |= ClassSpace
		}
		if b < 0x20 && b != '\t' && b != '\n' {
			t[c] |= ClassText | ClassAttr // CR, and control characters
		}
		switch b {
		case '<', '&':
			t[c] |= ClassText | ClassAttr
		case '>':
			t[c] |= ClassText
		case '"', '\'':
			t[c] |= ClassAttr
		}
	}
	return t
}()

// Class is the byte's classes (Class… above).
func Class(c byte) uint8 { return classes[c] }
