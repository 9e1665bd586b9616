package oaipmh

import (
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// startTag reads a start tag whose name starts at b[i]. Duplicate attributes
// are accepted, as encoding/xml accepts them.
func (z *xmlTok) startTag(i int) (tokKind, error) {
	b := z.b
	j, name, err := z.readName(i, "expected element name after <")
	if err != nil {
		return tkNone, err
	}
	z.attrs = z.attrs[:0]
	for {
		j = z.skipSpace(j)
		if j >= len(b) {
			return z.fail(msgEOF)
		}
		switch b[j] {
		case '/':
			if j+1 >= len(b) {
				return z.fail(msgEOF)
			}
			if b[j+1] != '>' {
				return z.fail("expected /> in element")
			}
			z.selfClose = true
			z.pos = j + 2
			z.name = name
			return tkStart, nil
		case '>':
			z.pos = j + 1
			z.name = name
			return tkStart, nil
		}
		k, an, err := z.readName(j, "expected attribute name in element")
		if err != nil {
			return tkNone, err
		}
		j = z.skipSpace(k)
		if j >= len(b) {
			return z.fail(msgEOF)
		}
		if b[j] != '=' {
			return z.fail("attribute name without = in element")
		}
		j = z.skipSpace(j + 1)
		if j >= len(b) {
			return z.fail(msgEOF)
		}
		q := b[j]
		if q != '"' && q != '\'' {
			return z.fail("unquoted or missing attribute value in element")
		}
		end, plain, err := z.attrValue(j+1, q, false)
		if err != nil {
			return tkNone, err
		}
		z.attrs = append(z.attrs, rawAttr{name: an, raw: j + 1, val: b[j+1 : end-1], quote: q, plain: plain})
		j = end
	}
}

// attrValue reads a quoted attribute value starting at b[i] and returns the
// index after the closing quote, and whether the value is plain (nothing to
// decode). With emit, it appends the decoded value to the arena.
func (z *xmlTok) attrValue(i int, quote byte, emit bool) (end int, plain bool, err error) {
	b := z.b
	mask := uint8(bcAttr)
	if z.check {
		mask |= bcHigh
	}
	seg := i
	plain = true
	var bad string
	for i < len(b) {
		c := b[i]
		if xmltext.Class(c)&mask == 0 {
			i++
			continue
		}
		switch {
		case c == quote:
			if bad != "" {
				_, err := z.fail(bad)
				return 0, false, err
			}
			if emit {
				z.arena = append(z.arena, b[seg:i]...)
			}
			return i + 1, plain, nil
		case c == '"' || c == '\'':
			i++
		case c == '<':
			_, err := z.fail("unescaped < inside quoted string")
			return 0, false, err
		case c == '&':
			r, n, msg := z.reference(i)
			if msg != "" {
				_, err := z.fail(msg)
				return 0, false, err
			}
			if emit {
				z.arena = append(z.arena, b[seg:i]...)
				z.arena = utf8.AppendRune(z.arena, r)
			}
			plain = false
			if bad == "" && !xmltext.IsChar(r) {
				bad = illegalChar(r)
			}
			i += n
			seg = i
		case c == '\r':
			if emit {
				z.arena = append(z.arena, b[seg:i]...)
				z.arena = append(z.arena, '\n')
			}
			plain = false
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
			seg = i
		case c < utf8.RuneSelf: // a control character
			if bad == "" {
				bad = illegalChar(rune(c))
			}
			i++
		default:
			i += z.checkRune(i, &bad)
		}
	}
	// The input ends inside the value: encoding/xml checks what it read, then
	// fails to read on.
	if bad == "" {
		bad = msgEOF
	}
	_, err = z.fail(bad)
	return 0, false, err
}

// value returns the decoded value of an attribute of the current start tag,
// valid until the tokenizer is reset.
func (z *xmlTok) value(a rawAttr) []byte {
	if a.plain {
		return a.val
	}
	from := len(z.arena)
	// It cannot fail: startTag read the same bytes without error.
	z.attrValue(a.raw, a.quote, true)
	return z.arena[from:len(z.arena):len(z.arena)]
}

// endTag reads an end tag whose name starts at b[i].
func (z *xmlTok) endTag(i int) (tokKind, error) {
	b := z.b
	j, name, err := z.readName(i, "expected element name after </")
	if err != nil {
		return tkNone, err
	}
	j = z.skipSpace(j)
	if j >= len(b) {
		return z.fail(msgEOF)
	}
	if b[j] != '>' {
		_, local, _ := splitName(name)
		return z.fail("invalid characters between </" + string(local) + " and >")
	}
	z.pos = j + 1
	z.name = name
	z.attrs = z.attrs[:0]
	return tkEnd, nil
}
