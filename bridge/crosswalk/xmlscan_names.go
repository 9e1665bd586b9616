package crosswalk

import (
	"encoding/xml"
	"strings"
	"unicode/utf8"
)

// Byte classes of the scanner. One table lookup answers the questions the
// hot loops ask; the table is built once and never written.
const (
	bcName      = 1 << iota // may be in a name as encoding/xml's readName reads it: ASCII name bytes, and every byte >= 0x80
	bcNameStart             // starts an ASCII name: letters, '_' and ':'
	bcText                  // interrupts plain character data: < & > CR, control characters, bytes >= 0x80
	bcAttr                  // interrupts a plain attribute value: < & " ' CR, control characters, bytes >= 0x80
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		switch {
		case 'A' <= b && b <= 'Z', 'a' <= b && b <= 'z', b == '_', b == ':':
			t[c] |= bcName | bcNameStart
		case '0' <= b && b <= '9', b == '.', b == '-':
			t[c] |= bcName
		case b >= utf8.RuneSelf:
			t[c] |= bcName | bcText | bcAttr
		case b < 0x20 && b != '\t' && b != '\n': // CR and control characters
			t[c] |= bcText | bcAttr
		}
		switch b {
		case '<', '&':
			t[c] |= bcText | bcAttr
		case '>':
			t[c] |= bcText
		case '"', '\'':
			t[c] |= bcAttr
		}
	}
	return t
}()

// nameVerdict remembers encoding/xml's answer for one non-ASCII name:
// records repeat their names.
type nameVerdict struct {
	name string
	ok   bool
}

// scanName finds the end of the name at src[i:] as encoding/xml's readName
// does: it ends before the first ASCII byte that cannot be in a name. end
// == i when no name starts there; eof when the input ends first.
func (s *scanner) scanName(i int) (end int, eof bool) {
	j := i
	for j < len(s.src) && byteClass[s.src[j]]&bcName != 0 {
		j++
	}
	return j, j >= len(s.src)
}

// readName reads the name at src[i:]. A missing name (or, when qualified,
// one with more than one colon) fails with missing, encoding/xml's words
// for the place; a name with characters outside the name tables fails as
// an invalid name.
func (s *scanner) readName(i int, missing string, qualified bool) (end int, name string, ok bool) {
	j, eof := s.scanName(i)
	switch {
	case eof:
		s.failEOF()
		return 0, "", false
	case j == i:
		s.fail(i, missing)
		return 0, "", false
	}
	name = s.src[i:j]
	valid, colons := s.checkName(name)
	switch {
	case !valid:
		s.fail(j, "invalid XML name: "+name)
	case qualified && colons > 1:
		s.fail(j, missing)
	default:
		return j, name, true
	}
	return 0, "", false
}

// checkName is encoding/xml's isName, with the number of colons. ASCII
// names are checked here. encoding/xml's tables for other characters (XML
// 1.0 Appendix B, narrower than the fifth edition's NameChar) are not
// exported, and such names are rare in records, so encoding/xml itself
// judges them: the two agree by construction.
func (s *scanner) checkName(name string) (ok bool, colons int) {
	if byteClass[name[0]]&bcNameStart == 0 && name[0] < utf8.RuneSelf {
		return false, 0
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == ':':
			colons++
		case c >= utf8.RuneSelf:
			return s.xmlName(name), strings.Count(name, ":")
		}
	}
	return true, colons
}

// xmlName asks encoding/xml whether name is a name, as the target of a
// processing instruction (a target, unlike an element name, may hold any
// number of colons).
func (s *scanner) xmlName(name string) bool {
	if s.last.name != name {
		_, err := xml.NewDecoder(strings.NewReader("<?" + name + "?>")).RawToken()
		s.last = nameVerdict{name, err == nil}
	}
	return s.last.ok
}

// splitName splits a qualified name as encoding/xml's nsname does, for a
// name with at most one colon: a colon at either end belongs to the local
// name.
func splitName(qname string) (prefix, local string) {
	p, l, ok := strings.Cut(qname, ":")
	if !ok || p == "" || l == "" {
		return "", qname
	}
	return p, l
}
