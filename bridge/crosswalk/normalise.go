package crosswalk

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// The normalisers of §E. They are pure functions over strings, written
// without regexp so that they need no package state and stay cheap.

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// cutPrefixFold removes prefix from s, ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// doiPrefixes are the forms J2N-02 strips (case-insensitive).
var doiPrefixes = []string{
	"info:doi/", "doi:", "https://doi.org/", "http://doi.org/",
	"https://dx.doi.org/", "http://dx.doi.org/",
}

// normDOI is J2N-02: strip the prefix, percent-decode, and require
// `^10\.<registrant>/\S+$`. It returns the bare DOI (the registration value).
//
// Changed from the digest's `\d{4,9}` registrant: the registrant is digits
// with optional dot-separated subdivisions (`10.1000.10/x`), any length.
// The digest's own T-J2J-12 example `doi:10.1/x` → `10.1/x` contradicts
// `\d{4,9}`, subdivided prefixes are valid DOI syntax, and JPCOAR itself
// only asks for `^10\.` ([JCV]); dropping such a DOI would lose data.
func normDOI(v string) (string, bool) {
	s := trim(v)
	for _, p := range doiPrefixes {
		if r, ok := cutPrefixFold(s, p); ok {
			s = r
			break
		}
	}
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	}
	if !strings.HasPrefix(s, "10.") {
		return "", false
	}
	reg, suffix, ok := strings.Cut(s[3:], "/")
	if !ok || suffix == "" || !isRegistrant(reg) {
		return "", false
	}
	for _, r := range suffix {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return "", false
		}
	}
	return s, true
}

// isRegistrant is `\d+(\.\d+)*`.
func isRegistrant(s string) bool {
	for _, p := range strings.Split(s, ".") {
		if !allDigits(p) {
			return false
		}
	}
	return true
}

// doiURL is the identifier form of a bare DOI ([X2 r63], [JCV]).
func doiURL(doi string) string { return "https://doi.org/" + doi }

// normISSN is J2N-04: upper-case x, insert the hyphen, require
// NNNN-NNNC. checksum reports whether the ISSN check digit is right
// (a failure is only a warning).
func normISSN(v string) (issn string, ok, checksum bool) {
	s := strings.ToUpper(trim(v))
	if len(s) == 8 {
		s = s[:4] + "-" + s[4:]
	}
	if len(s) != 9 || s[4] != '-' || !allDigits(s[:4]) || !allDigits(s[5:8]) ||
		!(isDigit(s[8]) || s[8] == 'X') {
		return "", false, false
	}
	sum := 0
	digits := s[:4] + s[5:8]
	for i := 0; i < 7; i++ {
		sum += int(digits[i]-'0') * (8 - i)
	}
	c := (11 - sum%11) % 11
	want := byte('0' + c)
	if c == 10 {
		want = 'X'
	}
	return s, true, s[8] == want
}

// normNCID is J2N-05: upper-case, `^(AA|AN|BN|BA|BB)\d{7,8}[0-9X]?$`.
func normNCID(v string) (string, bool) {
	s := strings.ToUpper(trim(v))
	if len(s) < 9 {
		return "", false
	}
	switch s[:2] {
	case "AA", "AN", "BN", "BA", "BB":
	default:
		return "", false
	}
	rest := s[2:]
	switch {
	case len(rest) >= 7 && len(rest) <= 8 && allDigits(rest):
	case len(rest) >= 8 && len(rest) <= 9 && allDigits(rest[:len(rest)-1]) && rest[len(rest)-1] == 'X':
	case len(rest) == 9 && allDigits(rest):
	default:
		return "", false
	}
	return s, true
}

// normISBN is J2N-06: kept as given when it matches `^[0-9][0-9-]*[0-9X]$`
// (case-insensitive x is upper-cased).
func normISBN(v string) (string, bool) {
	s := strings.ToUpper(trim(v))
	if len(s) < 2 || !isDigit(s[0]) || !(isDigit(s[len(s)-1]) || s[len(s)-1] == 'X') {
		return "", false
	}
	for i := 1; i < len(s)-1; i++ {
		if !isDigit(s[i]) && s[i] != '-' {
			return "", false
		}
	}
	return s, true
}

// stripDigits is J2N-03 for PMID and NAID: strip one of the prefixes and
// require digits.
func stripDigits(v string, prefixes ...string) (string, bool) {
	s := trim(v)
	for _, p := range prefixes {
		if r, ok := cutPrefixFold(s, p); ok {
			s = r
			break
		}
	}
	return s, allDigits(s)
}

// normIchushi is J2N-03 for ichushi: the id after `…/link/ui/` [INF]. The
// id is kept when it has no white space (its format is not documented).
func normIchushi(v string) (string, bool) {
	s := trim(v)
	for _, p := range []string{"http://search.jamas.or.jp/link/ui/", "https://search.jamas.or.jp/link/ui/"} {
		if r, ok := cutPrefixFold(s, p); ok {
			s = r
			break
		}
	}
	return s, s != "" && !strings.ContainsFunc(s, unicode.IsSpace)
}

// normDate is J2N-08: `/` and `.` become `-`, month and day are zero-padded,
// compact YYYYMMDD is read, `-00` suffixes are stripped, a W3CDTF time part
// is cut, and only real calendar dates YYYY, YYYY-MM or YYYY-MM-DD pass.
func normDate(v string) (string, bool) {
	s := trim(v)
	if i := strings.IndexByte(s, 'T'); i == 10 || i == 8 {
		s = s[:i]
	}
	if len(s) == 8 && allDigits(s) {
		s = s[:4] + "-" + s[4:6] + "-" + s[6:]
	}
	s = strings.NewReplacer("/", "-", ".", "-").Replace(s)
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) != 4 || !allDigits(parts[0]) {
		return "", false
	}
	y, _ := strconv.Atoi(parts[0])
	out := parts[0]
	month := 0
	for i, p := range parts[1:] {
		if p == "" || len(p) > 2 || !allDigits(p) {
			return "", false
		}
		n, _ := strconv.Atoi(p)
		if n == 0 {
			// [DS] formDate: -00 means "unknown", and nothing after it counts.
			for _, rest := range parts[i+2:] {
				if rest != "00" && rest != "0" {
					return "", false
				}
			}
			break
		}
		if i == 0 {
			if n > 12 {
				return "", false
			}
			month = n
		} else if n > daysIn(y, month) {
			return "", false
		}
		out += "-" + twoDigits(n)
	}
	return out, true
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// normGrantID is J2N-13: the 3.1 form `^(\d{5})(.*第.*\d+号)$` keeps group 2,
// the 3.0 form `^(\d{5})([ABZ])(\d+)$` becomes 甲第n号, 乙第n号 or 第n号;
// the 5-digit kakenhi institution code goes to degreeGrantor (GW-J2J-15).
// ok is false for any other form (kept verbatim, warning grantid-format).
func normGrantID(v string) (number, kakenhi string, ok bool) {
	s := trim(v)
	if len(s) < 6 || !allDigits(s[:5]) {
		return s, "", false
	}
	code, rest := s[:5], s[5:]
	if i := strings.Index(rest, "第"); i >= 0 && strings.HasSuffix(rest, "号") {
		num := strings.TrimSuffix(rest[i+len("第"):], "号")
		if num != "" && isDigit(num[len(num)-1]) {
			return rest, code, true
		}
	}
	if len(rest) >= 2 && allDigits(rest[1:]) {
		switch rest[0] {
		case 'A':
			return "甲第" + rest[1:] + "号", code, true
		case 'B':
			return "乙第" + rest[1:] + "号", code, true
		case 'Z':
			return "第" + rest[1:] + "号", code, true
		}
	}
	return s, "", false
}

// normNRID is J2N-10: the rns or nrid URI → 13 digits.
func normNRID(id string) (string, bool) {
	s := trim(id)
	for _, p := range []string{
		"http://rns.nii.ac.jp/nr/", "https://rns.nii.ac.jp/nr/",
		"http://nrid.nii.ac.jp/nrid/", "https://nrid.nii.ac.jp/nrid/",
	} {
		if r, ok := cutPrefixFold(s, p); ok {
			return r, len(r) == 13 && allDigits(r)
		}
	}
	return "", false
}

// nridURI is the nameIdentifierURI of an NRID ([JCV] NAME_IDENTIFIER_URI_REGEXP).
func nridURI(digits string) string { return "https://nrid.nii.ac.jp/nrid/" + digits }

// isAbsoluteURI is J2N-09's "absolute" test: a scheme among http, https,
// info and urn, something after it, and no white space or control
// characters, so the value is a valid xs:anyURI.
func isAbsoluteURI(s string) bool {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return false
	}
	switch strings.ToLower(scheme) {
	case "http", "https":
		if !strings.HasPrefix(rest, "//") || len(rest) < 3 {
			return false
		}
	case "info", "urn":
	default:
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// uriType is J2N-09: an item URI → identifierType, or ok=false when the
// value is not absolute (warning uri-not-absolute).
func uriType(s string) (string, bool) {
	if !isAbsoluteURI(s) {
		return "", false
	}
	if r, ok := cutPrefixFold(s, "http://"); ok {
		s = r
	} else if r, ok := cutPrefixFold(s, "https://"); ok {
		s = r
	} else {
		return "URI", true
	}
	if _, ok := cutPrefixFold(s, "hdl.handle.net/"); ok {
		return "HDL", true
	}
	if r, ok := cutPrefixFold(s, "dx."); ok {
		s = r
	}
	if _, ok := cutPrefixFold(s, "doi.org/10."); ok {
		return "DOI", true
	}
	return "URI", true
}

// isIMT is J2N-15: `^(application|audio|image|message|model|multipart|text|
// video|example|chemical)/[\w.+-]+$`.
func isIMT(s string) bool {
	top, sub, ok := strings.Cut(s, "/")
	if !ok || sub == "" {
		return false
	}
	switch top {
	case "application", "audio", "image", "message", "model", "multipart", "text", "video", "example", "chemical":
	default:
		return false
	}
	for i := 0; i < len(sub); i++ {
		if !isWordByte(sub[i]) && sub[i] != '.' && sub[i] != '+' && sub[i] != '-' {
			return false
		}
	}
	return true
}

func isWordByte(b byte) bool {
	return isDigit(b) || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_'
}

// validClass is J2N-16 / J2V-12: NDC codes are digits and dots; NDLC, DDC,
// LCC and UDC codes are `[\w.]+` as [JV] allows. Headings are free text.
func validClass(scheme, v string) bool {
	if classElements[scheme] {
		return true
	}
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if scheme == "NDC" && !isDigit(c) && c != '.' {
			return false
		}
		if !isWordByte(c) && c != '.' {
			return false
		}
	}
	return true
}

// isPositiveInteger is xs:positiveInteger as pageStart and pageEnd require
// ([XSD2]); digits only, not all zeros.
func isPositiveInteger(s string) bool {
	return allDigits(s) && strings.TrimLeft(s, "0") != ""
}

// isJunii2Number is [JV]'s numberType warning rule `\w?[\d\-/.]+` (J2V-18).
func isJunii2Number(s string) bool {
	if s == "" {
		return false
	}
	if isWordByte(s[0]) && !isDigit(s[0]) {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && s[i] != '-' && s[i] != '/' && s[i] != '.' {
			return false
		}
	}
	return true
}
