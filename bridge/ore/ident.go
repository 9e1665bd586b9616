package ore

import (
	"net/url"
	"path"
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
// 1.0, 2.0, 2.1, …; MD-001), exactly as bridge/landing.go does.
func isJPCOAR(ns string) bool {
	return strings.HasPrefix(ns, "https://github.com/JPCOAR/schema/blob/master/") ||
		strings.HasPrefix(ns, "https://irdb.nii.ac.jp/schema/jpcoar/")
}

func isDataCite(ns string) bool {
	return strings.HasPrefix(ns, "https://schema.datacite.org/meta/kernel-") ||
		strings.HasPrefix(ns, "http://datacite.org/schema/kernel-")
}

// isHTTP is bridge/landing.go's test: an absolute http(s) URL with a host.
func isHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// onHost is bridge/landing.go's test for a URL on the repository's host.
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

// isFileExtension reports whether ext (lower case, no dot) makes a Dublin Core
// identifier URL a file rather than a page. Web page extensions (.html, .php,
// .jsp, …) are left out on purpose.
func isFileExtension(ext string) bool {
	switch ext {
	case "pdf", "ps", "eps", "djvu", "epub", "txt", "rtf",
		"doc", "docx", "odt", "xls", "xlsx", "ods", "ppt", "pptx", "odp", "tex", "bib", "ris",
		"csv", "tsv", "json", "jsonld", "xml", "rdf", "ttl", "nt",
		"zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar",
		"jpg", "jpeg", "png", "gif", "tif", "tiff", "jp2", "svg", "webp", "bmp",
		"mp3", "wav", "flac", "ogg", "m4a", "mp4", "m4v", "mov", "avi", "mkv", "webm", "mpg", "mpeg",
		"nc", "h5", "hdf5", "mat", "sav", "dta", "rdata", "rds", "parquet", "ipynb", "py", "r",
		"kml", "kmz", "geojson", "shp", "gpx", "dcm", "fits", "sqlite":
		return true
	}
	return false
}

// guessMediaType gives the media type of a file named by its URL's extension,
// or of a IIIF manifest, when the metadata gave none; "" when it cannot tell.
// The table is the package's own, so the answer does not depend on the
// machine's MIME database.
func guessMediaType(u, objectType string) string {
	if strings.EqualFold(objectType, "iiif") {
		return "application/ld+json"
	}
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	base := path.Base(p.Path)
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 {
		return ""
	}
	const (
		ooxml = "application/vnd.openxmlformats-officedocument."
		odf   = "application/vnd.oasis.opendocument."
	)
	switch strings.ToLower(base[dot+1:]) {
	case "pdf":
		return "application/pdf"
	case "txt":
		return "text/plain"
	case "csv":
		return "text/csv"
	case "tsv":
		return "text/tab-separated-values"
	case "html", "htm":
		return "text/html"
	case "xml":
		return "application/xml"
	case "json":
		return "application/json"
	case "jsonld":
		return "application/ld+json"
	case "rdf":
		return "application/rdf+xml"
	case "ttl":
		return "text/turtle"
	case "zip":
		return "application/zip"
	case "gz", "tgz":
		return "application/gzip"
	case "tar":
		return "application/x-tar"
	case "bz2":
		return "application/x-bzip2"
	case "xz":
		return "application/x-xz"
	case "7z":
		return "application/x-7z-compressed"
	case "rar":
		return "application/vnd.rar"
	case "doc":
		return "application/msword"
	case "docx":
		return ooxml + "wordprocessingml.document"
	case "xls":
		return "application/vnd.ms-excel"
	case "xlsx":
		return ooxml + "spreadsheetml.sheet"
	case "ppt":
		return "application/vnd.ms-powerpoint"
	case "pptx":
		return ooxml + "presentationml.presentation"
	case "odt":
		return odf + "text"
	case "ods":
		return odf + "spreadsheet"
	case "odp":
		return odf + "presentation"
	case "rtf":
		return "application/rtf"
	case "epub":
		return "application/epub+zip"
	case "ps", "eps":
		return "application/postscript"
	case "jpg", "jpeg":
		return "image/jpeg"
	case "png":
		return "image/png"
	case "gif":
		return "image/gif"
	case "tif", "tiff":
		return "image/tiff"
	case "jp2":
		return "image/jp2"
	case "svg":
		return "image/svg+xml"
	case "webp":
		return "image/webp"
	case "mp3":
		return "audio/mpeg"
	case "wav":
		return "audio/wav"
	case "flac":
		return "audio/flac"
	case "ogg":
		return "audio/ogg"
	case "mp4", "m4v":
		return "video/mp4"
	case "mov":
		return "video/quicktime"
	case "webm":
		return "video/webm"
	}
	return ""
}

// looksLikeFile reports whether the path of the http(s) URL u ends in a file
// extension that isFileExtension accepts (case-insensitive; the query does not count).
func looksLikeFile(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	base := path.Base(p.Path)
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 {
		return false
	}
	return isFileExtension(strings.ToLower(base[dot+1:]))
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
