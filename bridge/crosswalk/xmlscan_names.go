package crosswalk

import (
	"encoding/xml"
	"strings"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// The byte classes the scanner asks about (xmltext.Class). Bytes >= 0x80
// interrupt plain text and attribute values here: their characters are
// checked.
const (
	bcName      = xmltext.ClassName
	bcNameStart = xmltext.ClassNameStart
	bcText      = xmltext.ClassText | xmltext.ClassHigh
	bcAttr      = xmltext.ClassAttr | xmltext.ClassHigh
)

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
	for j < len(s.src) && xmltext.Class(s.src[j])&bcName != 0 {
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
	if xmltext.Class(name[0])&bcNameStart == 0 && name[0] < utf8.RuneSelf {
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
