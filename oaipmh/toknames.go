package oaipmh

import (
	"bytes"
	"encoding/xml"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// isXMLName is encoding/xml's isName. ASCII names are checked here; a name
// with other characters is rare in metadata and is given to encoding/xml
// itself, so the two agree on the XML 1.0 name tables by construction.
func isXMLName(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return xmlAcceptsName(s)
		}
		if xmltext.Class(c)&bcName == 0 {
			return false
		}
	}
	return xmltext.Class(s[0])&bcNameStart != 0
}

// xmlAcceptsName asks encoding/xml whether s is a name: as an element name,
// it is checked by the same isName the tokenizer must agree with.
func xmlAcceptsName(s []byte) bool {
	doc := make([]byte, 0, len(s)+3)
	doc = append(append(append(doc, '<'), s...), '/', '>')
	_, err := xml.NewDecoder(bytes.NewReader(doc)).RawToken()
	return err == nil
}

// checkName is isXMLName for a name scanName read, with the number of colons
// in it, in one pass over an ASCII name.
func checkName(s []byte) (ok bool, colons int) {
	if len(s) == 0 || xmltext.Class(s[0])&bcNameStart == 0 && s[0] < utf8.RuneSelf {
		return false, 0
	}
	for _, c := range s {
		switch {
		case c == ':':
			colons++
		case c >= utf8.RuneSelf:
			return isXMLName(s), bytes.Count(s, []byte{':'})
		case xmltext.Class(c)&bcName == 0:
			return false, 0
		}
	}
	return true, colons
}

// splitName splits a name as encoding/xml's nsname does: ok is false with more
// than one colon; a colon at either end is part of the local name.
func splitName(n []byte) (prefix, local []byte, ok bool) {
	c := bytes.IndexByte(n, ':')
	if c < 0 {
		return nil, n, true
	}
	if bytes.IndexByte(n[c+1:], ':') >= 0 {
		return nil, nil, false
	}
	if c == 0 || c == len(n)-1 {
		return nil, n, true
	}
	return n[:c], n[c+1:], true
}

// readName reads the name starting at b[i] and returns its end and the
// name; a missing name, or one with more than one colon, fails with missing
// (encoding/xml's wording for where it stands).
func (z *xmlTok) readName(i int, missing string) (int, []byte, error) {
	j, eof := z.scanName(i)
	switch {
	case eof:
		_, err := z.fail(msgEOF)
		return 0, nil, err
	case j == i:
		_, err := z.fail(missing)
		return 0, nil, err
	}
	name := z.b[i:j]
	ok, colons := checkName(name)
	switch {
	case !ok:
		_, err := z.fail("invalid XML name: " + string(name))
		return 0, nil, err
	case colons > 1:
		_, err := z.fail(missing)
		return 0, nil, err
	}
	return j, name, nil
}
