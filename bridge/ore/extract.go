package ore

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
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
	Landing  string   // landing page, exactly the bridge/landing.go rules
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

type nsDecl struct{ prefix, uri string }

type frame struct {
	name  xml.Name // raw: Space is the prefix
	decls []nsDecl
}

// tokens wraps RawToken with the checks it leaves out (matching end tags, end of
// input inside an element) and with namespace scopes resolved like
// bridge/landing.go resolves them.
type tokens struct {
	d     *xml.Decoder
	stack []frame
}

func (r *tokens) depth() int { return len(r.stack) }

func (r *tokens) next() (xml.Token, error) {
	tok, err := r.d.RawToken()
	if err != nil {
		if errors.Is(err, io.EOF) {
			if len(r.stack) > 0 {
				return nil, fmt.Errorf("%w: document ends inside <%s>", ErrNotWellFormed, qname(r.stack[len(r.stack)-1].name))
			}
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%w: %w", ErrNotWellFormed, err)
	}
	switch t := tok.(type) {
	case xml.StartElement:
		var decls []nsDecl
		for _, a := range t.Attr {
			if a.Name.Space == "xmlns" {
				decls = append(decls, nsDecl{a.Name.Local, a.Value})
			} else if a.Name.Space == "" && a.Name.Local == "xmlns" {
				decls = append(decls, nsDecl{"", a.Value})
			}
		}
		r.stack = append(r.stack, frame{name: t.Name, decls: decls})
	case xml.EndElement:
		if len(r.stack) == 0 {
			return nil, fmt.Errorf("%w: end tag </%s> without a start tag", ErrNotWellFormed, qname(t.Name))
		}
		if open := r.stack[len(r.stack)-1].name; open != t.Name {
			return nil, fmt.Errorf("%w: <%s> closed by </%s>", ErrNotWellFormed, qname(open), qname(t.Name))
		}
		r.stack = r.stack[:len(r.stack)-1]
	}
	return tok, nil
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// resolve returns the namespace bound to prefix ("" for the default namespace)
// in the current scope, or "" when it is unbound. Within one start tag the last
// declaration of a prefix wins.
func (r *tokens) resolve(prefix string) string {
	for i := len(r.stack) - 1; i >= 0; i-- {
		decls := r.stack[i].decls
		for j := len(decls) - 1; j >= 0; j-- {
			if decls[j].prefix == prefix {
				return decls[j].uri
			}
		}
	}
	return ""
}

// attrNS is the namespace of an attribute with the given prefix: none without a
// prefix, the XML namespace for xml:.
func (r *tokens) attrNS(prefix string) string {
	switch prefix {
	case "":
		return ""
	case "xml":
		return nsXML
	}
	return r.resolve(prefix)
}

// text reads the element just started through its end tag and returns its own
// character data (not that of child elements), like bridge/landing.go's
// elementText.
func (r *tokens) text() (string, error) {
	var b strings.Builder
	depth := len(r.stack)
	for {
		tok, err := r.next()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if len(r.stack) < depth {
				return b.String(), nil
			}
		case xml.CharData:
			if len(r.stack) == depth {
				b.Write(t)
			}
		}
	}
}

// skip reads the element just started through its end tag.
func (r *tokens) skip() error {
	depth := len(r.stack)
	for len(r.stack) >= depth {
		if _, err := r.next(); err != nil {
			return err
		}
	}
	return nil
}

// children calls fn for each child element of the element just started, which
// fn must read through its end tag, and returns after the element's end tag.
func (r *tokens) children(fn func(t xml.StartElement, ns string) error) error {
	depth := len(r.stack)
	for {
		tok, err := r.next()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t, r.resolve(t.Name.Space)); err != nil {
				return err
			}
		case xml.EndElement:
			if len(r.stack) < depth {
				return nil
			}
		}
	}
}

func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

func isSpace(b []byte) bool {
	return len(bytes.TrimLeft(bytes.TrimSpace(b), "\ufeff")) == 0
}

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

func (x *extractor) run() error {
	r := &x.r
	for x.format == "" {
		tok, err := r.next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: no root element", ErrNotWellFormed)
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch ns := r.resolve(t.Name.Space); {
			case isJPCOAR(ns):
				x.format = FormatJPCOAR
			case ns == nsJunii2:
				x.format = FormatJunii2
			default:
				x.format = FormatDC
			}
		case xml.CharData:
			if !isSpace(t) {
				return fmt.Errorf("%w: text before the root element", ErrNotWellFormed)
			}
		}
	}
	if err := r.children(x.child); err != nil {
		return err
	}
	for {
		tok, err := r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return fmt.Errorf("%w: a second root element <%s>", ErrNotWellFormed, qname(t.Name))
		case xml.CharData:
			if !isSpace(t) {
				return fmt.Errorf("%w: text after the root element", ErrNotWellFormed)
			}
		case xml.Directive:
			return fmt.Errorf("%w: a declaration after the root element", ErrNotWellFormed)
		}
	}
}

// child handles one direct child of the root.
func (x *extractor) child(t xml.StartElement, ns string) error {
	r := &x.r
	local := t.Name.Local
	switch x.format {
	case FormatJPCOAR:
		switch {
		case ns == nsDC && local == "title":
			return x.title(t, false)
		case ns == nsDC && local == "type":
			for _, a := range t.Attr {
				if a.Name.Local == "resource" && r.attrNS(a.Name.Space) == nsRDF {
					if u := strings.TrimSpace(a.Value); isHTTP(u) && x.seen.add("t "+u) {
						x.facts.Types = append(x.facts.Types, u)
					}
				}
			}
		case isJPCOAR(ns) && local == "identifier":
			s, err := r.text()
			if err != nil {
				return err
			}
			switch typ := attr(t, "identifierType"); {
			case typ == "URI": // exactly as bridge/landing.go
				x.landing(s)
			case strings.EqualFold(typ, "DOI"):
				x.doi(s, true)
			case strings.EqualFold(typ, "HDL"):
				x.handle(s, true)
			}
			return nil
		case isJPCOAR(ns) && local == "identifierRegistration":
			s, err := r.text()
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
	case FormatJunii2:
		if ns != nsJunii2 {
			break
		}
		switch local {
		case "title":
			return x.title(t, true)
		case "URI", "fullTextURL", "selfDOI", "creator":
			s, err := r.text()
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
	default:
		if ns != nsDC {
			break
		}
		switch local {
		case "title":
			return x.title(t, false)
		case "identifier", "creator":
			s, err := r.text()
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
	}
	return r.skip()
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

// landing takes a landing page candidate the way bridge/landing.go does: an
// absolute http(s) URL; in JPCOAR the first one on the repository's host wins,
// else the first one.
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

// isMediaType accepts type/subtype with optional parameters, as Atom's
// atomMediaType pattern (.+/.+) and HTTP want it.
func isMediaType(s string) bool {
	mt, _, _ := strings.Cut(s, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(mt), "/")
	return ok && isToken(typ) && isToken(sub)
}

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

// collapseSpace trims s (strings.TrimSpace) and collapses each run of XML white
// space (space, tab, CR, LF) inside it to one space. Other spaces, such as
// U+3000 in Japanese titles, are kept.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
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
