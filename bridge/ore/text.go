package ore

import (
	"strings"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// langText is a text and its xml:lang.
type langText struct{ lang, text string }

// pickLang returns the text in Japanese, else English, else the first; texts are
// trimmed and empty ones ignored.
func pickLang(c []langText) string {
	for _, want := range [...]string{"ja", "en", ""} {
		for _, v := range c {
			if v.text != "" && (want == "" || strings.EqualFold(v.lang, want)) {
				return v.text
			}
		}
	}
	return ""
}

// set is a set of strings; lists are deduplicated through one so that a record
// with very many identifiers costs linear time, not quadratic.
type set map[string]struct{}

// add adds k and reports whether it was new.
func (s set) add(k string) bool {
	if _, ok := s[k]; ok {
		return false
	}
	s[k] = struct{}{}
	return true
}

// unique returns the non-empty values of lists in order, each once.
func unique(lists ...[]string) []string {
	var out []string
	seen := set{}
	for _, l := range lists {
		for _, v := range l {
			if v != "" && seen.add(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// collapseSpace trims s (strings.TrimSpace) and collapses each run of XML white
// space (space, tab, CR, LF) inside it to one space. Other spaces, such as
// U+3000 in Japanese titles, are kept.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		if r < utf8.RuneSelf && xmltext.IsSpace(byte(r)) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
