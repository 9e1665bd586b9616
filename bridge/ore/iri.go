package ore

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// iri returns s as an absolute IRI (RFC 3987) fit to be written as an Atom
// href (RFC 4287 §4.2.7.1) or an RDF/XML rdf:about / rdf:resource, or "" when
// it cannot be one.
//
//   - XML white space (space, tab, CR, LF) around s is trimmed.
//   - What an IRI does not allow where it stands is percent-encoded as UTF-8
//     bytes: ASCII controls, space and "<>\"{}|\\^`", a "%" that does not start
//     a %XX escape, "[" and "]" outside the authority, a second "#", non-ASCII
//     characters that are not ucschar (C1 controls, non-characters, U+FFF0..
//     U+FFFF, private use outside the query), the bidirectional formatting
//     characters RFC 3987 §4.1 forbids, and bytes that are not UTF-8.
//   - Everything else is kept as it is: existing %XX escapes (never decoded or
//     re-encoded, so the result names the same resource) and non-ASCII
//     characters an IRI allows (ucschar, iprivate in the query).
//
// The result must then start with a scheme (ALPHA *(ALPHA / DIGIT / "+" / "-"
// / ".") ":") and parse as a URL (a port is digits, an IP literal is well
// formed, a host has no percent-encoded ASCII); http and https IRIs need a
// host (RFC 9110 §4.2.1). Otherwise the value is dropped: "" is returned.
//
// iri is idempotent: iri(iri(s)) == iri(s).
func iri(s string) string {
	s = strings.Trim(s, " \t\r\n")
	colon := strings.IndexAny(s, ":/?#")
	if colon <= 0 || s[colon] != ':' || !validScheme(s[:colon]) {
		return ""
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:colon+1])
	rest := s[colon+1:]
	part := partPath
	if strings.HasPrefix(rest, "//") {
		b.WriteString("//")
		rest = rest[2:]
		part = partAuthority
	}
	for i := 0; i < len(rest); {
		c := rest[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(rest[i:])
			if (r == utf8.RuneError && size == 1) || !allowedNonASCII(r, part == partQuery) {
				pctEncode(&b, rest[i:i+size])
			} else {
				b.WriteString(rest[i : i+size])
			}
			i += size
			continue
		}
		switch {
		case c == '%':
			if i+2 < len(rest) && isHex(rest[i+1]) && isHex(rest[i+2]) {
				b.WriteString(rest[i : i+3])
				i += 3
				continue
			}
			pctEncode(&b, "%")
		case c == '/' && part == partAuthority:
			part = partPath
			b.WriteByte(c)
		case c == '?' && part < partQuery:
			part = partQuery
			b.WriteByte(c)
		case c == '#' && part < partFragment:
			part = partFragment
			b.WriteByte(c)
		case (c == '[' || c == ']') && part == partAuthority:
			b.WriteByte(c)
		case allowedASCII(c, part):
			b.WriteByte(c)
		default:
			pctEncode(&b, rest[i:i+1])
		}
		i++
	}
	out := b.String()
	u, err := url.Parse(out)
	if err != nil || u.Scheme == "" {
		return ""
	}
	if scheme := strings.ToLower(u.Scheme); (scheme == "http" || scheme == "https") && u.Host == "" {
		return ""
	}
	return out
}

// The parts of an IRI, in the order they come.
const (
	partAuthority = iota
	partPath
	partQuery
	partFragment
)

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// allowedASCII reports whether ASCII byte c may stand as it is in part (other
// than "%", "[", "]" and the delimiters iri handles itself): unreserved,
// sub-delims, ":" and "@", and "/" and "?" after the authority.
func allowedASCII(c byte, part int) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0:
		return true
	case c == '/' || c == '?':
		return part != partAuthority
	}
	return false
}

// allowedNonASCII reports whether r is ucschar, or iprivate in the query
// (RFC 3987 §2.2), and not a bidirectional formatting character (§4.1).
func allowedNonASCII(r rune, query bool) bool {
	switch {
	case r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E):
		return false
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0x10000 && r <= 0xEFFFD:
		return r&0xFFFF <= 0xFFFD
	case r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000 && r <= 0xFFFFD, r >= 0x100000 && r <= 0x10FFFD:
		return query
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func pctEncode(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		b.WriteByte('%')
		b.WriteByte(hex[s[i]>>4])
		b.WriteByte(hex[s[i]&15])
	}
}

// iris is iri applied to each of lists, dropping what is not an IRI and
// duplicates (after escaping), in order.
func iris(lists ...[]string) []string {
	var out []string
	seen := set{}
	for _, l := range lists {
		for _, v := range l {
			if u := iri(v); u != "" && seen.add(u) {
				out = append(out, u)
			}
		}
	}
	return out
}
