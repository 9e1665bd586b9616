package oaipmh

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// editKind is one kind of change the repair pass makes to a record's bytes.
type editKind uint8

const (
	editCtrl    editKind = iota + 1 // a C0 control character removed
	editUTF8                        // an invalid UTF-8 sequence replaced by U+FFFD
	editNonChar                     // a raw U+FFFE or U+FFFF replaced by U+FFFD
	editRef                         // a reference to a character XML forbids replaced by &#xFFFD;
)

// edit is one change, at its position in the repaired bytes.
type edit struct {
	pos  int
	kind editKind
}

const replacementRef = "&#xFFFD;"

// repairItem returns the bytes of one list item ready for the tokenizer: b itself
// when nothing needs repair (the common case, checked without copying), otherwise
// a repaired copy with every change listed in order. The copy is cut at limit
// bytes (truncated reports it); the caller decides what the changes mean by where
// they fall (repairs in metadata, quarantine in the header).
func repairItem(b []byte, limit int) (out []byte, edits []edit, truncated bool) {
	if !needsRepair(b) {
		return b, nil, false
	}
	out = make([]byte, 0, min(len(b)+len(b)/8+64, limit))
	literalEnd := 0 // bytes before this index are in a comment, CDATA section or PI
	for i := 0; i < len(b); {
		if len(out) >= limit {
			return out, edits, true
		}
		c := b[i]
		switch {
		case c == '<' && i >= literalEnd:
			literalEnd = literalSpan(b, i)
			out = append(out, c)
			i++
		case c == '&' && i >= literalEnd && i+1 < len(b) && b[i+1] == '#':
			if n, legal, ok := charRef(b[i:]); ok && !legal {
				edits = append(edits, edit{len(out), editRef})
				out = append(out, replacementRef...)
				i += n
				continue
			}
			out = append(out, c)
			i++
		case c < 0x20:
			if isCtrl(c) {
				edits = append(edits, edit{len(out), editCtrl})
			} else {
				out = append(out, c)
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				edits = append(edits, edit{len(out), editUTF8})
				out = append(out, "\uFFFD"...)
			case r == 0xFFFE || r == 0xFFFF:
				edits = append(edits, edit{len(out), editNonChar})
				out = append(out, "\uFFFD"...)
			default:
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	if len(edits) == 0 {
		// A false alarm (a reference inside a comment or CDATA section).
		return b, nil, false
	}
	return out, edits, false
}

// needsRepair is the fast check: a control character, invalid UTF-8, a raw
// non-character or a reference to a character XML forbids anywhere in b.
func needsRepair(b []byte) bool {
	if hasCtrl(b) || !utf8.Valid(b) {
		return true
	}
	// In valid UTF-8, EF BF BE and EF BF BF can only be U+FFFE and U+FFFF.
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte{0xEF, 0xBF})
		if j < 0 {
			break
		}
		i += j + 2
		if i < len(b) && (b[i] == 0xBE || b[i] == 0xBF) {
			return true
		}
	}
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '&')
		if j < 0 {
			return false
		}
		i += j
		if i+1 < len(b) && b[i+1] == '#' {
			if _, legal, ok := charRef(b[i:]); ok && !legal {
				return true
			}
		}
		i++
	}
}

// hasCtrl reports a C0 control character other than tab, LF and CR, eight bytes
// at a time: (x - 0x20…) &^ x & 0x80… is non-zero when some byte of x is below
// 0x20 (and can only err towards yes, so flagged words are checked bytewise).
func hasCtrl(b []byte) bool {
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-0x2020202020202020)&^x&0x8080808080808080 != 0 {
			for _, c := range b[:8] {
				if isCtrl(c) {
					return true
				}
			}
		}
		b = b[8:]
	}
	for _, c := range b {
		if isCtrl(c) {
			return true
		}
	}
	return false
}

// literalSpan returns the index after the comment, CDATA section or processing
// instruction starting at b[i] == '<', or i when none starts there.
func literalSpan(b []byte, i int) int {
	rest := b[i:]
	var open, close string
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		open, close = "<!--", "-->"
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		open, close = "<![CDATA[", "]]>"
	case bytes.HasPrefix(rest, []byte("<?")):
		open, close = "<?", "?>"
	default:
		return i
	}
	if j := bytes.Index(rest[len(open):], []byte(close)); j >= 0 {
		return i + len(open) + j + len(close)
	}
	return len(b)
}

// charRef reads a numeric character reference at the start of b ("&#...;" or
// "&#x...;"). ok is false when b does not start with a complete one (the tokenizer
// then rejects it and the record is quarantined); legal says whether XML allows
// the character it names.
func charRef(b []byte) (n int, legal, ok bool) {
	i, hex := 2, false
	if i < len(b) && b[i] == 'x' {
		i, hex = i+1, true
	}
	end, v := xmltext.CharRefDigits(b, i, hex)
	if end == i || end >= len(b) || b[end] != ';' {
		return 0, false, false
	}
	return end + 1, xmltext.IsChar(rune(v)), true
}

// editsIn counts the edits with from <= pos < to by kind. A removed control
// character at from was before the region's first byte and does not count.
func editsIn(edits []edit, from, to int) (n [editRef + 1]int) {
	lo, hi := 0, len(edits)
	for lo < hi { // first edit with pos >= from
		m := (lo + hi) / 2
		if edits[m].pos < from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for _, e := range edits[lo:] {
		if e.pos >= to {
			break
		}
		if e.kind == editCtrl && e.pos == from {
			continue
		}
		n[e.kind]++
	}
	return n
}

// unusable names the first change in a header field that makes it unusable
// ("" if none): such fields are never repaired silently.
func unusable(n [editRef + 1]int, field string) string {
	switch {
	case n[editUTF8] > 0:
		return "invalid UTF-8 in " + field
	case n[editNonChar] > 0:
		return "a non-character (U+FFFE or U+FFFF) in " + field
	case n[editRef] > 0:
		return "a reference to a character XML forbids (such as &#1;) in " + field
	}
	return ""
}

// repairNotes describes the repairs made to metadata, one line per kind.
func repairNotes(n [editRef + 1]int, where string) []string {
	var out []string
	if n[editUTF8] > 0 {
		out = append(out, fmt.Sprintf("%s replaced by U+FFFD%s", plural(n[editUTF8], "invalid UTF-8 sequence"), where))
	}
	if n[editNonChar] > 0 {
		out = append(out, fmt.Sprintf("%s (U+FFFE, U+FFFF) replaced by U+FFFD%s", plural(n[editNonChar], "non-character"), where))
	}
	if n[editRef] > 0 {
		out = append(out, fmt.Sprintf("%s to characters XML forbids (such as &#1;) replaced by &#xFFFD;%s", plural(n[editRef], "reference"), where))
	}
	if n[editCtrl] > 0 {
		out = append(out, fmt.Sprintf("%s removed%s", plural(n[editCtrl], "C0 control character"), where))
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
