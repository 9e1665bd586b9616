package oaipmh

import (
	"fmt"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// checkRune decodes the non-ASCII character at b[i], notes the first problem in
// *bad and returns its length.
func (z *xmlTok) checkRune(i int, bad *string) int {
	r, size := utf8.DecodeRune(z.b[i:])
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

// reference reads the entity or character reference at b[i] == '&' and returns
// the character, its length in bytes, or encoding/xml's message for it. Only
// the five predefined entities and decimal or hexadecimal (lower-case x)
// references exist; a reference decodes as string(rune(n)) does.
func (z *xmlTok) reference(i int) (r rune, n int, msg string) {
	b := z.b
	j := i + 1
	if j >= len(b) {
		return 0, 0, msgEOF
	}
	if b[j] == '#' {
		j++
		if j >= len(b) {
			return 0, 0, msgEOF
		}
		hex := b[j] == 'x'
		if hex {
			j++
			if j >= len(b) {
				return 0, 0, msgEOF
			}
		}
		digits := j
		j, v := xmltext.CharRefDigits(b, j, hex)
		if j >= len(b) {
			return 0, 0, msgEOF
		}
		if b[j] != ';' {
			return 0, 0, "invalid character entity " + string(b[i:j]) + " (no semicolon)"
		}
		if j == digits || v > utf8.MaxRune {
			return 0, 0, "invalid character entity " + string(b[i:j+1])
		}
		return xmltext.CharRefRune(v), j + 1 - i, ""
	}
	k, eof := z.scanName(j)
	if eof {
		return 0, 0, msgEOF
	}
	if b[k] != ';' {
		return 0, 0, "invalid character entity " + string(b[i:k]) + " (no semicolon)"
	}
	r, ok := xmltext.Entity(b[j:k])
	if !ok {
		return 0, 0, "invalid character entity " + string(b[i:k+1])
	}
	return r, k + 1 - i, ""
}
