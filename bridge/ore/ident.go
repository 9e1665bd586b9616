package ore

import (
	"net/url"
	"strings"
)

// Namespaces the extraction and the serialisations use.
const (
	nsAtom    = "http://www.w3.org/2005/Atom"
	nsORE     = "http://www.openarchives.org/ore/terms/"
	nsOREAtom = "http://www.openarchives.org/ore/atom/"
	nsRDF     = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsDCTerms = "http://purl.org/dc/terms/"
	nsDC      = "http://purl.org/dc/elements/1.1/"
	nsJunii2  = "http://irdb.nii.ac.jp/oai"
	nsOAIDC   = "http://www.openarchives.org/OAI/2.0/oai_dc/"
	nsGRDDL   = "http://www.w3.org/2003/g/data-view#"
	nsXML     = "http://www.w3.org/XML/1998/namespace"
)

// isJPCOAR recognises every JPCOAR namespace variant (GitHub or IRDB-hosted,
// 1.0, 2.0, 2.1, …; MD-001).
func isJPCOAR(ns string) bool {
	return strings.HasPrefix(ns, "https://github.com/JPCOAR/schema/blob/master/") ||
		strings.HasPrefix(ns, "https://irdb.nii.ac.jp/schema/jpcoar/")
}

func isDataCite(ns string) bool {
	return strings.HasPrefix(ns, "https://schema.datacite.org/meta/kernel-") ||
		strings.HasPrefix(ns, "http://datacite.org/schema/kernel-")
}

// isHTTP reports an absolute http(s) URL with a host, what a landing page or
// file must be.
func isHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// onHost reports whether URL u is on the repository's host, where JPCOAR's
// landing page is looked for first.
func onHost(u, host string) bool {
	p, err := url.Parse(u)
	return err == nil && host != "" && strings.EqualFold(p.Hostname(), host)
}

// cutPrefixFold removes prefix from s, ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// normalizeDOI returns the https://doi.org/ URL of a DOI written bare
// (10.x/y, only when bare is true), as doi:, info:doi/ or a doi.org URL, or ""
// when s is not a DOI.
func normalizeDOI(s string, bare bool) string {
	s = strings.TrimSpace(s)
	rest, ok := cutScheme(s, bare, "https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "info:doi/", "doi:")
	if !ok {
		return ""
	}
	if dec, err := url.PathUnescape(rest); err == nil {
		rest = dec
	}
	rest = strings.TrimSpace(rest)
	if !validDOI(rest) {
		return ""
	}
	return "https://doi.org/" + escapePath(rest)
}

// cutScheme removes the first of the prefixes s starts with (ignoring case);
// without one, s itself is the identifier when bare is true, else ok is false.
func cutScheme(s string, bare bool, prefixes ...string) (rest string, ok bool) {
	for _, p := range prefixes {
		if rest, ok = cutPrefixFold(s, p); ok {
			return rest, true
		}
	}
	return s, bare
}

// validDOI checks the DOI syntax 10.NNNN[.NNNN…]/suffix with a non-empty suffix
// and no white space or control characters.
func validDOI(d string) bool {
	reg, suffix, ok := strings.Cut(d, "/")
	if !ok || suffix == "" || !strings.HasPrefix(reg, "10.") || !digitsAndDots(reg[3:]) {
		return false
	}
	return printable(suffix)
}

// normalizeHandle returns the https://hdl.handle.net/ URL of a Handle written as
// a hdl.handle.net URL, hdl:, info:hdl/ or (when bare is true) prefix/suffix, or
// "" when s is not a Handle.
func normalizeHandle(s string, bare bool) string {
	s = strings.TrimSpace(s)
	rest, ok := cutScheme(s, bare, "https://hdl.handle.net/", "http://hdl.handle.net/", "info:hdl/", "hdl:")
	if !ok {
		return ""
	}
	if strings.HasPrefix(strings.ToLower(s), "http") {
		// Drop a query (?locatt=…, ?noredirect) or fragment from the URL form.
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
	}
	if dec, err := url.PathUnescape(rest); err == nil {
		rest = dec
	}
	rest = strings.TrimSpace(rest)
	prefix, suffix, ok := strings.Cut(rest, "/")
	if !ok || suffix == "" || !digitsAndDots(prefix) || !printable(suffix) {
		return ""
	}
	return "https://hdl.handle.net/" + escapePath(rest)
}

// digitsAndDots reports whether s is one or more dot-separated runs of digits.
func digitsAndDots(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if s[i-1] == '.' {
				return false
			}
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// printable reports whether s has no white space or control characters.
func printable(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u00a0' || r == '\u3000' || r == '\ufffd' {
			return false
		}
	}
	return true
}

// escapePath percent-encodes what may not stand in a URL path as it is: bytes
// outside the unreserved and sub-delims sets and ":@/". "%" is encoded too, since
// the input is already decoded.
func escapePath(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
			strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// lastSegment is the decoded last path segment of u, for a file's title; "" when
// the path has none.
func lastSegment(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	seg := strings.TrimRight(p.Path, "/")
	if i := strings.LastIndexByte(seg, '/'); i >= 0 {
		seg = seg[i+1:]
	}
	return strings.TrimSpace(seg)
}
