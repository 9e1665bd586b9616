package crosswalk

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// charData reads character data from s.pos up to the next '<' or the end
// of the input. References are decoded, CR and CR LF become LF, and "]]>"
// is an error. encoding/xml checks the characters only once it has read
// the whole text, so a bad character is reported at the end of the text
// and a bad reference or "]]>" further on wins over it.
func (s *scanner) charData() tokenKind {
	src := s.src
	start := s.pos
	i, seg := start, start
	out, decoded := s.buf[:0], false
	var bad string // the first character outside the Char production
loop:
	for i < len(src) {
		c := src[i]
		if xmltext.Class(c)&bcText == 0 {
			i++
			continue
		}
		switch {
		case c == '<':
			break loop
		case c == '>':
			if i-start >= 2 && src[i-1] == ']' && src[i-2] == ']' {
				return s.fail(i+1, "unescaped ]]> not in CDATA section")
			}
			i++
		case c == '&', c == '\r':
			out = append(out, src[seg:i]...)
			if i, out = s.decode(i, out, &bad); i < 0 {
				return tokNone
			}
			seg, decoded = i, true
		default:
			i += checkChar(src, i, &bad)
		}
	}
	if bad != "" {
		return s.fail(i, bad)
	}
	s.text = src[start:i]
	if decoded {
		s.buf = append(out, src[seg:i]...)
		s.text = string(s.buf)
	}
	s.pos = i
	return tokText
}

// attrValue reads an attribute value whose first byte is src[i], up to
// the closing quote, and returns the index after that quote and the value.
// References are decoded and CR and CR LF become LF; white space is not
// normalised, as encoding/xml does not normalise it.
func (s *scanner) attrValue(i int, quote byte) (end int, value string, ok bool) {
	src := s.src
	start, seg := i, i
	out, decoded := s.buf[:0], false
	var bad string
	for i < len(src) {
		c := src[i]
		if xmltext.Class(c)&bcAttr == 0 {
			i++
			continue
		}
		switch {
		case c == quote:
			return s.attrDone(i, start, seg, out, decoded, bad)
		case c == '"' || c == '\'':
			i++
		case c == '<':
			s.fail(i+1, "unescaped < inside quoted string")
			return 0, "", false
		case c == '&', c == '\r':
			out = append(out, src[seg:i]...)
			if i, out = s.decode(i, out, &bad); i < 0 {
				return 0, "", false
			}
			seg, decoded = i, true
		default:
			i += checkChar(src, i, &bad)
		}
	}
	// The input ends inside the value: encoding/xml checks what it read,
	// then fails to read on.
	if bad == "" {
		bad = msgEOF
	}
	s.fail(len(src), bad)
	return 0, "", false
}

// attrDone finishes a value whose closing quote is src[i].
func (s *scanner) attrDone(i, start, seg int, out []byte, decoded bool, bad string) (int, string, bool) {
	if bad != "" {
		s.fail(i+1, bad)
		return 0, "", false
	}
	if !decoded {
		return i + 1, s.src[start:i], true
	}
	s.buf = append(out, s.src[seg:i]...)
	return i + 1, string(s.buf), true
}

// decode appends what the reference or CR at src[i] stands for to out and
// returns the index after it (-1 after an error).
func (s *scanner) decode(i int, out []byte, bad *string) (int, []byte) {
	if s.src[i] == '\r' {
		i++
		if i < len(s.src) && s.src[i] == '\n' {
			i++
		}
		return i, append(out, '\n')
	}
	r, n := s.reference(i)
	if n == 0 {
		return -1, out
	}
	if *bad == "" && !xmltext.IsChar(r) {
		*bad = illegalChar(r)
	}
	return i + n, utf8.AppendRune(out, r)
}

// cdata reads a CDATA section whose content starts at src[i]: it ends at
// the first "]]>"; CR and CR LF become LF.
func (s *scanner) cdata(i int) tokenKind {
	src := s.src
	k := strings.Index(src[i:], "]]>")
	if k < 0 {
		return s.fail(len(src), "unexpected EOF in CDATA section")
	}
	end := i + k
	out, decoded := s.buf[:0], false
	var bad string
	seg := i
	for j := i; j < end; {
		c := src[j]
		switch {
		case c == '\r':
			out = append(out, src[seg:j]...)
			j, out = s.decode(j, out, &bad)
			seg, decoded = j, true
		case c < 0x20 && c != '\t' && c != '\n', c >= utf8.RuneSelf:
			j += checkChar(src, j, &bad)
		default:
			j++
		}
	}
	if bad != "" {
		return s.fail(end+3, bad)
	}
	s.text = src[i:end]
	if decoded {
		s.buf = append(out, src[seg:end]...)
		s.text = string(s.buf)
	}
	s.pos = end + 3
	return tokText
}

// checkChar checks the character at src[i] (a control character or a
// byte >= 0x80), notes the first problem in *bad, and returns its length.
func checkChar(src string, i int, bad *string) int {
	c := src[i]
	if c < utf8.RuneSelf {
		if *bad == "" {
			*bad = illegalChar(rune(c))
		}
		return 1
	}
	r, size := utf8.DecodeRuneInString(src[i:])
	if *bad == "" {
		if r == utf8.RuneError && size == 1 {
			*bad = "invalid UTF-8"
		} else if !xmltext.IsChar(r) {
			*bad = illegalChar(r)
		}
	}
	return size
}

func illegalChar(r rune) string { return fmt.Sprintf("illegal character code %U", r) }

// reference reads the reference at src[i] == '&' and returns the character
// and the reference's length (0 after an error, with encoding/xml's
// message). Only the five predefined entities and decimal or hexadecimal
// (lower-case x) character references exist; a character reference
// decodes as string(rune(n)) does, so a surrogate becomes U+FFFD.
func (s *scanner) reference(i int) (r rune, n int) {
	src := s.src
	j := i + 1
	if j < len(src) && src[j] == '#' {
		return s.charRef(i)
	}
	k, eof := s.scanName(j)
	switch {
	case eof:
		s.failEOF()
		return 0, 0
	case src[k] != ';':
		s.fail(k, "invalid character entity "+src[i:k]+" (no semicolon)")
		return 0, 0
	}
	r, ok := xmltext.Entity(src[j:k])
	if !ok {
		s.fail(k+1, "invalid character entity "+src[i:k+1])
		return 0, 0
	}
	return r, k + 1 - i
}

// charRef reads the character reference at src[i:] == "&#…".
func (s *scanner) charRef(i int) (r rune, n int) {
	src := s.src
	j := i + 2
	hex := j < len(src) && src[j] == 'x'
	if hex {
		j++
	}
	digits := j
	j, v := xmltext.CharRefDigits(src, j, hex)
	switch {
	case j >= len(src):
		s.failEOF()
		return 0, 0
	case src[j] != ';':
		s.fail(j, "invalid character entity "+src[i:j]+" (no semicolon)")
		return 0, 0
	case j == digits || v > utf8.MaxRune:
		s.fail(j+1, "invalid character entity "+src[i:j+1])
		return 0, 0
	}
	return xmltext.CharRefRune(v), j + 1 - i
}
