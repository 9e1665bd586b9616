package oaipmh

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// charData reads character data up to the next '<' or the end of the input.
// CR and CR LF become LF; "]]>" is an error. A character outside the Char
// production is reported at the end of the token, as encoding/xml does, so a
// reference error further on wins.
func (z *xmlTok) charData() (tokKind, error) {
	b := z.b
	mask := uint8(bcText)
	if z.check {
		mask |= bcHigh
	}
	start := z.pos
	i, seg := start, start
	decoded := false
	out := z.scratch[:0]
	var bad string
loop:
	for i < len(b) {
		if i+8 <= len(b) && !textWordSpecial(binary.LittleEndian.Uint64(b[i:]), z.check) {
			i += 8
			continue
		}
		c := b[i]
		if xmltext.Class(c)&mask == 0 {
			i++
			continue
		}
		switch {
		case c == '<':
			break loop
		case c == '>':
			if i-2 >= start && b[i-1] == ']' && b[i-2] == ']' {
				return z.fail("unescaped ]]> not in CDATA section")
			}
			i++
		case c == '&':
			r, n, msg := z.reference(i)
			if msg != "" {
				return z.fail(msg)
			}
			out = append(out, b[seg:i]...)
			out = utf8.AppendRune(out, r)
			decoded = true
			if bad == "" && !xmltext.IsChar(r) {
				bad = illegalChar(r)
			}
			i += n
			seg = i
		case c == '\r':
			out = append(out, b[seg:i]...)
			out = append(out, '\n')
			decoded = true
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
	if bad != "" {
		return z.fail(bad)
	}
	if decoded {
		out = append(out, b[seg:i]...)
		z.scratch = out
		z.text = out
	} else {
		z.text = b[start:i]
	}
	z.pos = i
	return tkText, nil
}

// textWordSpecial reports whether one of the eight bytes in x may interrupt
// character data: '<', '&', '>', a control character (tab and LF too), or,
// with high, a byte >= 0x80. It errs towards yes only, so the bytes of a word
// it flags are looked at one by one.
func textWordSpecial(x uint64, high bool) bool {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	lt := x ^ ('<' * lsb)
	amp := x ^ ('&' * lsb)
	gt := x ^ ('>' * lsb)
	m := (lt-lsb)&^lt | (amp-lsb)&^amp | (gt-lsb)&^gt | (x-0x20*lsb)&^x
	if high {
		m |= x
	}
	return m&msb != 0
}

// cdata reads a CDATA section whose content starts at b[i].
func (z *xmlTok) cdata(i int) (tokKind, error) {
	b := z.b
	k := bytes.Index(b[i:], seqCDATAEnd[:])
	if k < 0 {
		return z.fail("unexpected EOF in CDATA section")
	}
	content := b[i : i+k]
	var bad string
	decoded := false
	out := z.scratch[:0]
	seg := 0
	for j := 0; j < len(content); {
		c := content[j]
		switch {
		case c == '\r':
			out = append(out, content[seg:j]...)
			out = append(out, '\n')
			decoded = true
			j++
			if j < len(content) && content[j] == '\n' {
				j++
			}
			seg = j
		case c < 0x20 && c != '\t' && c != '\n':
			if bad == "" {
				bad = illegalChar(rune(c))
			}
			j++
		case c >= utf8.RuneSelf && z.check:
			j += z.checkRune(i+j, &bad)
		default:
			j++
		}
	}
	if bad != "" {
		return z.fail(bad)
	}
	if decoded {
		out = append(out, content[seg:]...)
		z.scratch = out
		z.text = out
	} else {
		z.text = content
	}
	z.pos = i + k + 3
	return tkText, nil
}
