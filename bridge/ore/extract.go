package ore

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// Formats, the rules Extract applied (Facts.Format), chosen by the namespace of
// the root element.
const (
	FormatJPCOAR = "jpcoar" // every JPCOAR namespace variant
	FormatJunii2 = "junii2" // http://irdb.nii.ac.jp/oai
	FormatDC     = "dc"     // anything else: oai_dc and other Dublin Core based formats
)

// ErrNotWellFormed is wrapped by the error Extract returns for a document that is
// not well-formed XML.
var ErrNotWellFormed = errors.New("metadata is not well-formed XML")

// Facts is what one metadata document says about the scholarly object it
// describes.
type Facts struct {
	Format   string   // FormatJPCOAR, FormatJunii2 or FormatDC; "" when no root element was read
	Title    string   // title among the root's direct children: xml:lang "ja", else "en", else the first; trimmed, runs of XML white space collapsed
	Landing  string   // landing page, by the rules Landing shares (see the package doc)
	Files    []File   // full-text and data files, deduplicated by URI, in document order
	DOIs     []string // https://doi.org/{doi}, deduplicated case-insensitively
	Handles  []string // https://hdl.handle.net/{handle}
	Types    []string // COAR resource type URIs (JPCOAR dc:type/@rdf:resource)
	Creators []string // creator name identifier URIs (JPCOAR jpcoar:creator/jpcoar:nameIdentifier/@nameIdentifierURI, http(s) only)
	Authors  []Agent  // the creators with a name: JPCOAR creatorName (ja, en, first) and its ORCID or first identifier URI; junii2 and DC creator text
}

// File is a full-text or data file named by the metadata.
type File struct {
	URI        string
	MediaType  string // jpcoar:mimeType when given and shaped like type/subtype
	Length     int64  // bytes, from the first jpcoar:extent or datacite:size that parses as a size; 0 when unknown
	Label      string // jpcoar:URI/@label, else the last path segment
	ObjectType string // jpcoar:URI/@objectType (fulltext, abstract, dataset, software, summary, thumbnail, iiif, other); "fulltext" for junii2 fullTextURL; "" when unknown
}

// Extract reads one standalone metadata document (the child of OAI-PMH <metadata>
// with every namespace declaration it needs on its root, as rsbridge stores it)
// and returns what it says. repoHost is the repository's host name, preferred for
// the JPCOAR landing page. It reads only the root's direct children and, for
// jpcoar:file and jpcoar:creator, their children; nested structures such as
// jpcoar:catalog and jpcoar:relation describe other things and are ignored. A
// document that is not well-formed gives what was found before the error, and an
// error wrapping ErrNotWellFormed.
func Extract(metadata []byte, repoHost string) (Facts, error) {
	x := extractor{host: repoHost, r: tokens{d: xml.NewDecoder(bytes.NewReader(metadata))}, seen: set{}}
	err := x.run()
	f := x.finish()
	if err != nil {
		return f, fmt.Errorf("ore: extract: %w", err)
	}
	return f, nil
}

// formatOf chooses the rules for a record by its root element's namespace.
func formatOf(rootNS string) string {
	switch {
	case isJPCOAR(rootNS):
		return FormatJPCOAR
	case rootNS == nsJunii2:
		return FormatJunii2
	}
	return FormatDC
}

// extractor gathers the Facts of one document as Extract reads it.
type extractor struct {
	r       tokens
	host    string
	format  string
	titles  []langText
	hostURI string // first JPCOAR landing candidate on the repository's host
	first   string // first landing candidate
	facts   Facts
	seen    set // "t "+type, "c "+creator, "h "+handle, "d "+lower-case DOI, "f "+file URI
}

// run reads the prolog up to the root element, whose namespace sets the
// format, then the root's children, then what follows the root.
func (x *extractor) run() error {
	if err := x.root(); err != nil {
		return err
	}
	if err := x.r.children(x.child); err != nil {
		return err
	}
	return x.epilog()
}

// root reads up to and including the root's start tag.
func (x *extractor) root() error {
	for x.format == "" {
		tok, err := x.r.next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: no root element", ErrNotWellFormed)
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			x.format = formatOf(x.r.resolve(t.Name.Space))
		case xml.CharData:
			if !blank(t) {
				return fmt.Errorf("%w: text before the root element", ErrNotWellFormed)
			}
		}
	}
	return nil
}

// epilog reads what follows the root's end tag: comments, processing
// instructions and white space only.
func (x *extractor) epilog() error {
	for {
		tok, err := x.r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return fmt.Errorf("%w: a second root element <%s>", ErrNotWellFormed, xmltext.QName(t.Name.Space, t.Name.Local))
		case xml.CharData:
			if !blank(t) {
				return fmt.Errorf("%w: text after the root element", ErrNotWellFormed)
			}
		case xml.Directive:
			return fmt.Errorf("%w: a declaration after the root element", ErrNotWellFormed)
		}
	}
}

// child handles one direct child of the root by the rules of the format; each
// handler reads the child through its end tag.
func (x *extractor) child(t xml.StartElement, ns string) error {
	switch x.format {
	case FormatJPCOAR:
		return x.jpcoarChild(t, ns)
	case FormatJunii2:
		return x.junii2Child(t, ns)
	}
	return x.dcChild(t, ns)
}

func (x *extractor) jpcoarChild(t xml.StartElement, ns string) error {
	switch local := t.Name.Local; {
	case ns == nsDC && local == "title":
		return x.title(t, false)
	case ns == nsDC && local == "type":
		x.types(t)
	case isJPCOAR(ns) && local == "identifier":
		return x.jpcoarIdentifier(t)
	case isJPCOAR(ns) && local == "identifierRegistration":
		s, err := x.r.text()
		if err != nil {
			return err
		}
		switch typ := strings.ToLower(strings.TrimSpace(attr(t, "identifierType"))); typ {
		case "jalc", "crossref", "datacite":
			x.doi(s, true)
		}
		return nil
	case isJPCOAR(ns) && local == "creator":
		return x.jpcoarCreator()
	case isJPCOAR(ns) && local == "file":
		return x.jpcoarFile()
	}
	return x.r.skip()
}

// types takes the COAR resource type of a dc:type from its rdf:resource.
func (x *extractor) types(t xml.StartElement) {
	for _, a := range t.Attr {
		if a.Name.Local == "resource" && x.r.attrNS(a.Name.Space) == nsRDF {
			if u := strings.TrimSpace(a.Value); isHTTP(u) && x.seen.add("t "+u) {
				x.facts.Types = append(x.facts.Types, u)
			}
		}
	}
}

// jpcoarIdentifier reads a direct jpcoar:identifier: of type URI a landing page
// candidate (the type compared exactly, as Landing does), DOI or HDL an
// identifier of the object.
func (x *extractor) jpcoarIdentifier(t xml.StartElement) error {
	s, err := x.r.text()
	if err != nil {
		return err
	}
	switch typ := attr(t, "identifierType"); {
	case typ == "URI":
		x.landing(s)
	case strings.EqualFold(typ, "DOI"):
		x.doi(s, true)
	case strings.EqualFold(typ, "HDL"):
		x.handle(s, true)
	}
	return nil
}

func (x *extractor) junii2Child(t xml.StartElement, ns string) error {
	if ns != nsJunii2 {
		return x.r.skip()
	}
	switch local := t.Name.Local; local {
	case "title":
		return x.title(t, true)
	case "URI", "fullTextURL", "selfDOI", "creator":
		s, err := x.r.text()
		if err != nil {
			return err
		}
		switch u := strings.TrimSpace(s); local {
		case "URI":
			x.landing(u)
		case "fullTextURL":
			if isHTTP(u) {
				x.addFile(File{URI: u, Label: lastSegment(u), ObjectType: "fulltext"})
			}
		case "selfDOI":
			x.doi(u, true)
		default:
			x.author(Agent{Name: collapseSpace(u)})
		}
		return nil
	}
	return x.r.skip()
}

// dcChild applies the Dublin Core rules, to oai_dc and to any format not
// recognised: an http(s) dc:identifier is a landing page candidate and, unless
// it is a DOI or Handle, a file when its path ends in a file extension.
func (x *extractor) dcChild(t xml.StartElement, ns string) error {
	if ns != nsDC {
		return x.r.skip()
	}
	switch local := t.Name.Local; local {
	case "title":
		return x.title(t, false)
	case "identifier", "creator":
		s, err := x.r.text()
		if err != nil {
			return err
		}
		u := strings.TrimSpace(s)
		if local == "creator" {
			x.author(Agent{Name: collapseSpace(u)})
			return nil
		}
		x.landing(u)
		if !x.doi(u, false) && !x.handle(u, false) && isHTTP(u) && looksLikeFile(u) {
			x.addFile(File{URI: u, Label: lastSegment(u)})
		}
		return nil
	}
	return x.r.skip()
}

func (x *extractor) title(t xml.StartElement, junii2 bool) error {
	s, err := x.r.text()
	if err != nil {
		return err
	}
	lang := ""
	for _, a := range t.Attr {
		if a.Name.Local == "lang" && (a.Name.Space == "xml" || (junii2 && a.Name.Space == "")) {
			lang = strings.TrimSpace(a.Value)
		}
	}
	x.titles = append(x.titles, langText{lang, collapseSpace(s)})
	return nil
}

// landing takes a landing page candidate: an absolute http(s) URL. In JPCOAR
// the first one on the repository's host wins, else the first one (finish).
// Landing's byte scanner applies the same rules and must agree (FuzzLanding).
func (x *extractor) landing(s string) {
	u := strings.TrimSpace(s)
	if !isHTTP(u) {
		return
	}
	if x.first == "" {
		x.first = u
	}
	if x.format == FormatJPCOAR && x.hostURI == "" && onHost(u, x.host) {
		x.hostURI = u
	}
}

func (x *extractor) doi(s string, bare bool) bool {
	u := normalizeDOI(s, bare)
	if u == "" {
		return false
	}
	if x.seen.add("d " + strings.ToLower(u)) {
		x.facts.DOIs = append(x.facts.DOIs, u)
	}
	return true
}

func (x *extractor) handle(s string, bare bool) bool {
	u := normalizeHandle(s, bare)
	if u == "" {
		return false
	}
	if x.seen.add("h " + u) {
		x.facts.Handles = append(x.facts.Handles, u)
	}
	return true
}

func (x *extractor) addFile(f File) {
	if x.seen.add("f " + f.URI) {
		x.facts.Files = append(x.facts.Files, f)
	}
}

func (x *extractor) author(a Agent) {
	if a.Name != "" {
		x.facts.Authors = append(x.facts.Authors, a)
	}
}

// jpcoarCreator reads the children of a direct jpcoar:creator: its own
// nameIdentifiers (not those of its affiliations) and its names.
func (x *extractor) jpcoarCreator() error {
	var names, family, given []langText
	var first, orcid string
	err := x.r.children(func(t xml.StartElement, ns string) error {
		if !isJPCOAR(ns) {
			return x.r.skip()
		}
		switch t.Name.Local {
		case "nameIdentifier":
			if u := strings.TrimSpace(attr(t, "nameIdentifierURI")); isHTTP(u) {
				if x.seen.add("c " + u) {
					x.facts.Creators = append(x.facts.Creators, u)
				}
				if first == "" {
					first = u
				}
				if orcid == "" && strings.EqualFold(strings.TrimSpace(attr(t, "nameIdentifierScheme")), "ORCID") {
					orcid = u
				}
			}
			return x.r.skip()
		case "creatorName", "familyName", "givenName":
			s, err := x.r.text()
			if err != nil {
				return err
			}
			lt := langText{text: collapseSpace(s)}
			for _, a := range t.Attr {
				if a.Name.Space == "xml" && a.Name.Local == "lang" {
					lt.lang = strings.TrimSpace(a.Value)
				}
			}
			switch t.Name.Local {
			case "creatorName":
				names = append(names, lt)
			case "familyName":
				family = append(family, lt)
			default:
				given = append(given, lt)
			}
			return nil
		}
		return x.r.skip()
	})
	name := pickLang(names)
	if name == "" {
		name = strings.Trim(pickLang(family)+", "+pickLang(given), ", ")
	}
	uri := orcid
	if uri == "" {
		uri = first
	}
	x.author(Agent{Name: name, URI: uri})
	return err
}

// jpcoarFile reads the children of a direct jpcoar:file.
func (x *extractor) jpcoarFile() error {
	var f File
	sized := false
	err := x.r.children(func(t xml.StartElement, ns string) error {
		switch {
		case isJPCOAR(ns) && t.Name.Local == "URI":
			s, err := x.r.text()
			if u := strings.TrimSpace(s); err == nil && f.URI == "" && isHTTP(u) {
				f.URI = u
				f.Label = strings.TrimSpace(attr(t, "label"))
				f.ObjectType = strings.TrimSpace(attr(t, "objectType"))
			}
			return err
		case isJPCOAR(ns) && t.Name.Local == "mimeType":
			s, err := x.r.text()
			if s = strings.TrimSpace(s); err == nil && f.MediaType == "" && isMediaType(s) {
				f.MediaType = s
			}
			return err
		case isJPCOAR(ns) && t.Name.Local == "extent", isDataCite(ns) && t.Name.Local == "size":
			s, err := x.r.text()
			if n, ok := parseSize(s); err == nil && !sized && ok {
				f.Length, sized = n, true
			}
			return err
		}
		return x.r.skip()
	})
	if f.URI != "" && err == nil {
		if f.Label == "" {
			f.Label = lastSegment(f.URI)
		}
		x.addFile(f)
	}
	return err
}

// finish settles the title and the landing page and drops, in Dublin Core, the
// file candidate that is the landing page.
func (x *extractor) finish() Facts {
	f := x.facts
	f.Format = x.format
	f.Title = pickLang(x.titles)
	f.Landing = x.first
	if x.hostURI != "" {
		f.Landing = x.hostURI
	}
	if f.Landing != "" && x.format == FormatDC {
		kept := f.Files[:0]
		for _, file := range f.Files {
			if file.URI != f.Landing {
				kept = append(kept, file)
			}
		}
		f.Files = kept
	}
	if len(f.Files) == 0 {
		f.Files = nil
	}
	return f
}
