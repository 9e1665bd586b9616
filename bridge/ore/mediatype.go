package ore

import (
	"net/url"
	"path"
	"strings"
)

// isMediaType accepts type/subtype with optional parameters, as Atom's
// atomMediaType pattern (.+/.+) and HTTP want it.
func isMediaType(s string) bool {
	mt, _, _ := strings.Cut(s, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(mt), "/")
	return ok && isToken(typ) && isToken(sub)
}

// isToken reports whether s is an HTTP token: ASCII without controls, space or
// separators.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// guessMediaType gives the media type of a file named by its URL's extension,
// or of an IIIF manifest, when the metadata gave none; "" when it cannot tell.
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
	return mediaTypes[strings.ToLower(base[dot+1:])]
}

// The prefixes of the Office Open XML and OpenDocument media types.
const (
	ooxml = "application/vnd.openxmlformats-officedocument."
	odf   = "application/vnd.oasis.opendocument."
)

// mediaTypes maps a lower-case file extension to its media type.
var mediaTypes = map[string]string{
	"pdf":    "application/pdf",
	"txt":    "text/plain",
	"csv":    "text/csv",
	"tsv":    "text/tab-separated-values",
	"html":   "text/html",
	"htm":    "text/html",
	"xml":    "application/xml",
	"json":   "application/json",
	"jsonld": "application/ld+json",
	"rdf":    "application/rdf+xml",
	"ttl":    "text/turtle",
	"zip":    "application/zip",
	"gz":     "application/gzip",
	"tgz":    "application/gzip",
	"tar":    "application/x-tar",
	"bz2":    "application/x-bzip2",
	"xz":     "application/x-xz",
	"7z":     "application/x-7z-compressed",
	"rar":    "application/vnd.rar",
	"doc":    "application/msword",
	"docx":   ooxml + "wordprocessingml.document",
	"xls":    "application/vnd.ms-excel",
	"xlsx":   ooxml + "spreadsheetml.sheet",
	"ppt":    "application/vnd.ms-powerpoint",
	"pptx":   ooxml + "presentationml.presentation",
	"odt":    odf + "text",
	"ods":    odf + "spreadsheet",
	"odp":    odf + "presentation",
	"rtf":    "application/rtf",
	"epub":   "application/epub+zip",
	"ps":     "application/postscript",
	"eps":    "application/postscript",
	"jpg":    "image/jpeg",
	"jpeg":   "image/jpeg",
	"png":    "image/png",
	"gif":    "image/gif",
	"tif":    "image/tiff",
	"tiff":   "image/tiff",
	"jp2":    "image/jp2",
	"svg":    "image/svg+xml",
	"webp":   "image/webp",
	"mp3":    "audio/mpeg",
	"wav":    "audio/wav",
	"flac":   "audio/flac",
	"ogg":    "audio/ogg",
	"mp4":    "video/mp4",
	"m4v":    "video/mp4",
	"mov":    "video/quicktime",
	"webm":   "video/webm",
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
