package crosswalk

import (
	"sort"
	"strings"
	"unicode"
)

// isKatakana is the Katakana range of J2N-14: U+30A0–30FF, U+31F0–31FF and
// half-width U+FF66–FF9F. (ー U+30FC and ・ U+30FB fall inside it.)
func isKatakana(r rune) bool {
	return (r >= 0x30A0 && r <= 0x30FF) || (r >= 0x31F0 && r <= 0x31FF) || (r >= 0xFF66 && r <= 0xFF9F)
}

// isKanaFiller is what J2N-14 allows beside Katakana in a reading: white
// space (U+3000 included), a comma or full stop in any width, a middle dot.
func isKanaFiller(r rune) bool {
	switch r {
	case ',', '、', '，', '.', '。', '．', '·', '･', '・', 'ー':
		return true
	}
	return unicode.IsSpace(r)
}

// isKatakanaOnly is J2N-14's reading detection: at least one Katakana
// character and nothing but fillers beside.
func isKatakanaOnly(s string) bool {
	kana := false
	for _, r := range s {
		switch {
		case isKatakana(r):
			kana = true
		case !isKanaFiller(r):
			return false
		}
	}
	return kana
}

// detectLang is GW-J2J-06's script heuristic for a value without @lang:
// Hiragana or Han → ja; Katakana only → ja-Kana; any Katakana → ja; Hangul
// → ko; Latin letters only → en (unless noLatin); otherwise no tag. It is
// a heuristic (J2L-19): Han-only Chinese is tagged ja.
func detectLang(s string, noLatin bool) string {
	var hira, han, kata, hangul, latin, other bool
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Hiragana, r):
			hira = true
		case unicode.Is(unicode.Han, r):
			han = true
		case isKatakana(r):
			kata = true
		case unicode.Is(unicode.Hangul, r):
			hangul = true
		case unicode.IsLetter(r):
			if unicode.Is(unicode.Latin, r) {
				latin = true
			} else {
				other = true
			}
		}
	}
	switch {
	case hira || han:
		return "ja"
	case kata && isKatakanaOnly(s):
		return "ja-Kana"
	case kata:
		return "ja"
	case hangul:
		return "ko"
	case latin && !other && !noLatin:
		return "en"
	}
	return ""
}

// langAttr is J2N-11: the junii2 @lang value → xml:lang. ok is false when
// the value is not recognised (warning lang-unrecognised, no attribute).
func langAttr(v string) (string, bool) {
	l := strings.ToLower(strings.ReplaceAll(trim(v), "_", "-"))
	switch l {
	case "ja", "jpn", "japanese":
		return "ja", true
	case "en", "eng", "english":
		return "en", true
	case "ja-kana":
		return "ja-Kana", true
	case "ja-latn":
		return "ja-Latn", true
	case "zh-cn", "zh-hans", "zh-sg":
		return "zh-cn", true
	case "zh-tw", "zh-hant", "zh-hk", "zh-mo":
		return "zh-tw", true
	}
	primary, _, _ := strings.Cut(l, "-")
	switch len(primary) {
	case 2:
		if _, ok := iso6391To3[primary]; ok {
			return primary, true
		}
	case 3:
		if two := iso6391For(primary); two != "" {
			return two, true
		}
	}
	return "", false
}

// iso6391For returns the ISO 639-1 code of a 639-3 or 639-2/B code, or "".
// The tables are small (184 and 20 entries), so a scan is cheap and keeps
// them as single literals (no derived table built at start-up).
func iso6391For(code string) string {
	if t, ok := iso6392BTo3[code]; ok {
		code = t
	}
	for two, three := range iso6391To3 {
		if three == code {
			return two
		}
	}
	return ""
}

// isISO6393 reports whether code is an ISO 639-3 identifier (binary search
// over the sorted, concatenated iso6393Codes).
func isISO6393(code string) bool {
	if len(code) != 3 {
		return false
	}
	n := len(iso6393Codes) / 3
	i := sort.Search(n, func(i int) bool { return iso6393Codes[3*i:3*i+3] >= code })
	return i < n && iso6393Codes[3*i:3*i+3] == code
}

// normLanguage is J2N-07: junii2 `language` → dc:language (ISO 639-3).
// Words japanese/english, ISO 639-1 codes, RFC tags (primary subtag) and
// ISO 639-2/B codes are mapped; a code outside ISO 639-3 becomes und
// ([IRDB-N22]). changed reports a rewrite other than case and white space.
func normLanguage(v string) (code string, changed bool) {
	l := strings.ToLower(trim(v))
	switch l {
	case "japanese":
		return "jpn", true
	case "english":
		return "eng", true
	}
	if p, _, ok := strings.Cut(strings.ReplaceAll(l, "_", "-"), "-"); ok {
		l, changed = p, true
	}
	if len(l) == 2 {
		if t, ok := iso6391To3[l]; ok {
			return t, true
		}
	}
	if t, ok := iso6392BTo3[l]; ok {
		return t, true
	}
	if isISO6393(l) {
		return l, changed
	}
	return "und", true
}

// hasJapanese reports Hiragana, Katakana or Han in s (J2N-08: the xml:lang
// of an unparsable date kept as dcterms:date).
func hasJapanese(s string) bool {
	for _, r := range s {
		if isKatakana(r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}
