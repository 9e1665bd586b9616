package oaipmh

import (
	"bytes"
	"fmt"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// The byte scanner's states. It knows just enough XML to find item
// boundaries: tags with quoted attribute values, comments, CDATA sections,
// processing instructions and declarations. A '<' inside a tag or attribute
// value is not XML; it is taken as the start of the next construct, so an
// unescaped '<' or a stray quote in a record cannot swallow the rest of the
// page. C0 control characters are skipped everywhere (and removed from the
// envelope, emit). Each step below reads bytes while its state lasts and
// returns where it stopped; done reports an item just finished, where scan
// must stop.

func isCtrl(c byte) bool { return c < 0x20 && c != '\t' && c != '\n' && c != '\r' }

// Byte classes of the name states: the bytes that end a run of name bytes (a
// control character is skipped, the others end the name). A table, because
// one lookup per byte is cheaper than the comparisons.
const (
	scStartNameEnd = 1 << iota // control, white space, / > = " ' <
	scEndNameEnd               // control, white space, > <
)

var scanClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if isCtrl(b) || xmltext.IsSpace(b) || b == '>' || b == '<' {
			t[c] |= scStartNameEnd | scEndNameEnd
		}
		switch b {
		case '/', '=', '"', '\'':
			t[c] |= scStartNameEnd
		}
	}
	return t
}()

// scan consumes bytes of b (at body offset s.base) and returns how many it used;
// it stops right after an item is finished.
func (s *scanner) scan(b []byte) int {
	s.span = 0
	i := 0
	for i < len(b) {
		done := false
		switch s.st {
		case sText:
			i = s.textRun(b, i)
		case sLt:
			i = s.afterLt(b, i)
		case sStartName:
			i, done = s.startName(b, i)
		case sAttrs:
			i, done = s.startRest(b, i)
		case sQuote:
			i = s.quoted(b, i)
		case sEndName:
			i, done = s.endName(b, i)
		case sEndRest:
			i, done = s.endRest(b, i)
		case sBang:
			i = s.afterBang(b, i)
		case sComment, sCDATA, sPI, sDeclComment:
			i = s.literal(b, i)
		case sDecl:
			i = s.decl(b, i)
		case sDeclLt:
			i = s.declLt(b, i)
		}
		if done {
			return i
		}
	}
	s.flush(b, len(b))
	if !s.inRec && s.base+int64(len(b))-s.tokStart > int64(s.max) && s.err == nil {
		s.err = &tokenTooLargeError{off: s.tokStart, max: s.max}
	}
	return len(b)
}

// textRun skips character data up to the next '<', which opens a construct.
func (s *scanner) textRun(b []byte, i int) int {
	j := bytes.IndexByte(b[i:], '<')
	if j < 0 {
		return len(b)
	}
	i += j
	s.openTag(b, i)
	return i + 1
}

// afterLt decides what the construct after '<' is.
func (s *scanner) afterLt(b []byte, i int) int {
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case isCtrl(c):
			continue
		case c == '/':
			s.resetName()
			s.st = sEndName
		case c == '!':
			s.hold = -1
			s.bang = 0
			s.st = sBang
		case c == '?':
			s.hold = -1
			s.t1, s.t2 = 0, 0
			s.st = sPI
		case c == '<':
			s.hold = -1
			s.openTag(b, i)
		case xmltext.IsSpace(c) || c == '>' || c == '=' || c == '"' || c == '\'':
			// Not markup (encoding/xml rejects it); go on as text.
			s.hold = -1
			s.st = sText
			return i
		default:
			s.resetName()
			s.addName(b[i : i+1])
			s.attrs = 0
			s.st = sStartName
		}
		return i + 1
	}
	return i
}

// startName reads a start tag's name.
func (s *scanner) startName(b []byte, i int) (next int, done bool) {
	for i < len(b) {
		j := i
		for j < len(b) && scanClass[b[j]]&scStartNameEnd == 0 {
			j++
		}
		s.addName(b[i:j])
		if j == len(b) {
			return j, false
		}
		if isCtrl(b[j]) {
			i = j + 1
			continue
		}
		s.st = sAttrs
		s.prev, s.afterEq = 0, false
		return j, s.startNamed(b, j)
	}
	return i, false
}

// startRest reads a start tag after its name, up to '>' or a quoted value,
// counting its attributes by their '='.
func (s *scanner) startRest(b []byte, i int) (next int, done bool) {
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '>':
			i++
			s.st = sText
			return i, s.startEnded(b, i, s.prev == '/')
		case c == '<':
			s.abortTag(b, i)
			return i + 1, false
		case isCtrl(c):
		case (c == '"' || c == '\'') && s.afterEq:
			s.quote = c
			s.st = sQuote
			s.afterEq = false
			return i + 1, false
		case xmltext.IsSpace(c):
			s.prev = c
		case c == '=':
			if !s.afterEq {
				if s.attrs++; s.attrs == maxAttrs+1 {
					s.tooMany(fmt.Sprintf("an element with more than %d attributes", maxAttrs))
				}
			}
			s.afterEq = true
			s.prev = c
		default:
			s.afterEq = false
			s.prev = c
		}
	}
	return i, false
}

// quoted skips an attribute value up to its closing quote (or a '<').
func (s *scanner) quoted(b []byte, i int) int {
	j := i
	for j < len(b) && b[j] != s.quote && b[j] != '<' {
		j++
	}
	if j == len(b) {
		return j
	}
	if b[j] == '<' {
		s.abortTag(b, j)
	} else {
		s.st = sAttrs
		s.prev = s.quote
	}
	return j + 1
}

// endName reads an end tag's name.
func (s *scanner) endName(b []byte, i int) (next int, done bool) {
	for i < len(b) {
		j := i
		for j < len(b) && scanClass[b[j]]&scEndNameEnd == 0 {
			j++
		}
		s.addName(b[i:j])
		if j == len(b) {
			return j, false
		}
		switch c := b[j]; {
		case isCtrl(c):
			i = j + 1
		case c == '<':
			s.abortTag(b, j)
			return j + 1, false
		default: // white space or '>'
			s.st = sEndRest
			return j, s.endNamed(b, j)
		}
	}
	return i, false
}

// endRest reads an end tag after its name, up to '>'.
func (s *scanner) endRest(b []byte, i int) (next int, done bool) {
	for ; i < len(b); i++ {
		switch b[i] {
		case '>':
			i++
			s.st = sText
			return i, s.endEnded(b, i)
		case '<':
			s.abortTag(b, i)
			return i + 1, false
		}
	}
	return i, false
}

// afterBang tells a comment or CDATA section after "<!" from a declaration.
func (s *scanner) afterBang(b []byte, i int) int {
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case isCtrl(c):
		case s.bang == 0 && (c == '-' || c == '['):
			s.bangKind = c
			s.bang = 1
		case s.bang > 0 && s.bangKind == '-' && c == '-':
			s.t1, s.t2 = 0, 0
			s.st = sComment
			return i + 1
		case s.bang > 0 && s.bangKind == '[' && c == "CDATA["[s.bang-1]:
			s.bang++
			if s.bang == 7 {
				s.t1, s.t2 = 0, 0
				s.st = sCDATA
				return i + 1
			}
		default:
			// A declaration, or something encoding/xml will reject.
			s.declDepth, s.declQuote = 0, 0
			s.st = sDecl
			return i
		}
	}
	return i
}

// literal skips a comment, CDATA section or PI (or a comment inside a
// declaration) up to its end: "-->", "]]>" or "?>".
func (s *scanner) literal(b []byte, i int) int {
	for ; i < len(b); i++ {
		c := b[i]
		if isCtrl(c) {
			continue
		}
		if c == '>' && ((s.st == sPI && s.t2 == '?') ||
			((s.st == sComment || s.st == sDeclComment) && s.t1 == '-' && s.t2 == '-') ||
			(s.st == sCDATA && s.t1 == ']' && s.t2 == ']')) {
			i++
			if s.st == sDeclComment {
				s.st = sDecl
			} else {
				s.endConstruct(i)
			}
			return i
		}
		s.t1, s.t2 = s.t2, c
	}
	return i
}

// decl reads a declaration as encoding/xml reads a directive: quotes, nested
// <...>, comments.
func (s *scanner) decl(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		i++
		switch {
		case isCtrl(c):
		case s.declQuote == 0 && c == '>' && s.declDepth == 0:
			s.endConstruct(i)
			return i
		case s.declQuote != 0:
			if c == s.declQuote {
				s.declQuote = 0
			}
		case c == '\'' || c == '"':
			s.declQuote = c
		case c == '>':
			s.declDepth--
		case c == '<':
			s.bang = 0
			s.st = sDeclLt
			return i
		}
	}
	return i
}

// declLt reads what follows '<' inside a declaration: a comment, or a nested
// <...>.
func (s *scanner) declLt(b []byte, i int) int {
	for ; i < len(b); i++ {
		c := b[i]
		if isCtrl(c) {
			continue
		}
		if c != "!--"[s.bang] {
			s.declDepth++
			s.st = sDecl // c is read again in sDecl
			return i
		}
		s.bang++
		if s.bang == 3 {
			s.t1, s.t2 = 0, 0
			s.st = sDeclComment
			return i + 1
		}
	}
	return i
}
