package oaiserver

import (
	"bytes"
	"strings"
)

const (
	nsOAI      = "http://www.openarchives.org/OAI/2.0/"
	nsXSI      = "http://www.w3.org/2001/XMLSchema-instance"
	nsDC       = "http://purl.org/dc/elements/1.1/"
	nsOAIDC    = "http://www.openarchives.org/OAI/2.0/oai_dc/"
	nsDCTerms  = "http://purl.org/dc/terms/"
	nsDatacite = "https://schema.datacite.org/meta/kernel-4/"
	nsRDF      = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsJPCOAR   = "https://github.com/JPCOAR/schema/blob/master/2.0/"
	nsOAIID    = "http://www.openarchives.org/OAI/2.0/oai-identifier"

	schemaOAI    = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
	schemaOAIDC  = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
	schemaJPCOAR = "https://github.com/JPCOAR/schema/blob/master/2.0/jpcoar_scm.xsd"
	schemaOAIID  = "http://www.openarchives.org/OAI/2.0/oai-identifier.xsd"

	repoID     = "demo.rsbridge.example"
	idPrefix   = "oai:" + repoID + ":"
	landing    = "https://demo.rsbridge.example/records/"
	adminEmail = "admin@demo.rsbridge.example"

	prefixOAIDC  = "oai_dc"
	prefixJPCOAR = "jpcoar_2.0"
)

// decl is a namespace declaration; prefix "" is the default namespace.
type decl struct{ prefix, uri string }

func (d decl) String() string {
	if d.prefix == "" {
		return ` xmlns="` + d.uri + `"`
	}
	return ` xmlns:` + d.prefix + `="` + d.uri + `"`
}

// format is a metadata format the provider can disseminate.
type format struct {
	prefix, schema, ns string
	jp                 bool   // jpcoar layout (extra declarations on root and verb element)
	junii2             bool   // junii2 layout (junii2.go)
	own                []decl // declarations on the metadata root element itself
	standalone         string // D of the package doc, precomputed
}

// baseRootDecls are declared on every OAI-PMH root element.
func rootDecls(jp bool) []decl {
	d := []decl{{"", nsOAI}, {"xsi", nsXSI}, {"dc", nsDC}}
	if jp {
		d = append(d, decl{"dcterms", nsDCTerms}, decl{"datacite", nsDatacite}, decl{"rdf", nsRDF})
	}
	return d
}

func verbDecls(jp bool) []decl {
	if jp {
		return []decl{{"jpcoar", nsJPCOAR}}
	}
	return nil
}

// standaloneDecls implements the rule documented in the package comment:
// ancestors' declarations outermost first, document order within an element,
// innermost wins for a redeclared prefix, minus those the element declares.
func standaloneDecls(ancestors [][]decl, own []decl) string {
	var flat []decl
	for _, a := range ancestors {
		for _, d := range a {
			for j := range flat {
				if flat[j].prefix == d.prefix {
					flat = append(flat[:j], flat[j+1:]...)
					break
				}
			}
			flat = append(flat, d)
		}
	}
	var b strings.Builder
	for _, d := range flat {
		if d.prefix == "" && d.uri == "" {
			continue
		}
		skip := false
		for _, o := range own {
			if o.prefix == d.prefix {
				skip = true
				break
			}
		}
		if !skip {
			b.WriteString(d.String())
		}
	}
	return b.String()
}

func builtinFormats() []*format {
	fs := []*format{
		{prefix: prefixOAIDC, schema: schemaOAIDC, ns: nsOAIDC, own: []decl{{"oai_dc", nsOAIDC}}},
		{prefix: prefixJPCOAR, schema: schemaJPCOAR, ns: nsJPCOAR, jp: true, own: []decl{{"dc", nsDC}}},
		{prefix: prefixJunii2, schema: schemaJunii2, ns: nsJunii2, junii2: true, own: []decl{{"", nsJunii2}}},
	}
	for _, f := range fs {
		// ancestors: OAI-PMH, ListRecords/GetRecord, record, metadata
		f.standalone = standaloneDecls([][]decl{rootDecls(f.jp), verbDecls(f.jp), nil, nil}, f.own)
	}
	return fs
}

// writeMetadata writes the metadata root element of item i at version v in
// format f. extra is inserted right after the element name (empty when
// serving, f.standalone for Item).
func (s *Synthetic) writeMetadata(x *xw, f *format, i, v int, extra string) {
	if f.jp {
		s.writeJPCOAR(x, i, v, extra)
	} else if f.junii2 {
		s.writeJunii2(x, i, v, extra)
	} else {
		s.writeOAIDC(x, i, v, extra)
	}
}

func (s *Synthetic) metadataBytes(f *format, i, v int) []byte {
	var b bytes.Buffer
	b.Grow(s.recordBytes + 1024)
	s.writeMetadata(newXW(&b), f, i, v, f.standalone)
	return b.Bytes()
}

// Deterministic content tables. Functions (not package variables) so the
// package has no globals.

func creatorName(i int) (ja, en string) {
	switch i % 6 {
	case 0:
		return "安達, 淳", "Adachi, Jun"
	case 1:
		return "山田, 花子", "Yamada, Hanako"
	case 2:
		return "O'Brien, Siobhán", "O'Brien, Siobhan"
	case 3:
		return "Müller, Jürgen", "Mueller, Juergen"
	case 4:
		return "鈴木 & 佐藤 研究室", "Suzuki & Sato Lab <AI>"
	default:
		return "李, 明", "Li, Ming"
	}
}

func resourceType(i int) (label, uri string) {
	switch i % 4 {
	case 0:
		return "departmental bulletin paper", "http://purl.org/coar/resource_type/c_6501"
	case 1:
		return "journal article", "http://purl.org/coar/resource_type/c_6501"
	case 2:
		return "doctoral thesis", "http://purl.org/coar/resource_type/c_db06"
	default:
		return "dataset", "http://purl.org/coar/resource_type/c_ddb1"
	}
}

// writeTitle writes the (escaped) English-ish/mixed title of item i, version v.
func writeTitle(x *xw, i, v int) {
	switch i % 5 {
	case 0:
		x.s("情報爆発時代の研究基盤構想 第")
		x.int(i)
		x.s("報")
	case 1:
		x.text("Fish & Chips <Volume ")
		x.int(i)
		x.text("> & more")
	case 2:
		x.s(`Research on "quotes" and 'apostrophes', no. `)
		x.int(i)
	case 3:
		x.text("機械学習による書誌データの名寄せ ")
		x.int(i)
		x.text(" & evaluation")
	default:
		x.s("Plain English title number ")
		x.int(i)
	}
	if v > 0 {
		x.s(" (revision ")
		x.int(v)
		x.s(")")
	}
}

func writeJATitle(x *xw, i, v int) {
	x.s("合成データによる研究基盤の評価 第")
	x.int(i)
	x.s("報")
	if v > 0 {
		x.s("（改訂")
		x.int(v)
		x.s("）")
	}
}

func writeIssued(x *xw, i int) {
	y, m, d := 1990+i%35, 1+i%12, 1+i%28
	x.int(y)
	x.s("-")
	if m < 10 {
		x.s("0")
	}
	x.int(m)
	x.s("-")
	if d < 10 {
		x.s("0")
	}
	x.int(d)
}

func writeLanding(x *xw, i int) {
	x.s(landing)
	x.int(i)
}

func (s *Synthetic) writeOAIDC(x *xw, i, v int, extra string) {
	x.s("<oai_dc:dc")
	x.s(extra)
	x.s(` xmlns:oai_dc="` + nsOAIDC + `" xsi:schemaLocation="` + nsOAIDC + ` ` + schemaOAIDC + `">`)
	x.s("\n<dc:title>")
	writeTitle(x, i, v)
	x.s("</dc:title>\n<dc:creator>")
	ja, en := creatorName(i)
	x.text(ja)
	x.s("</dc:creator>\n<dc:creator>")
	x.text(en)
	x.s("</dc:creator>\n<dc:date>")
	writeIssued(x, i)
	x.s("</dc:date>\n<dc:identifier>")
	writeLanding(x, i)
	x.s("</dc:identifier>\n<dc:type>")
	label, _ := resourceType(i)
	x.s(label)
	x.s("</dc:type>\n<dc:language>jpn</dc:language>\n<dc:description>Synthetic record ")
	x.int(i)
	x.s(", version ")
	x.int(v)
	x.s(".")
	s.writePad(x, i, v)
	s.writeHostileText(x, i, extra != "")
	x.s("</dc:description>\n</oai_dc:dc>")
}

func (s *Synthetic) writeJPCOAR(x *xw, i, v int, extra string) {
	x.s("<jpcoar:jpcoar")
	x.s(extra)
	x.s(` xmlns:dc="` + nsDC + `" xsi:schemaLocation="` + nsJPCOAR + ` ` + schemaJPCOAR + `">`)
	x.s("\n<dc:title xml:lang=\"ja\">")
	writeJATitle(x, i, v)
	x.s("</dc:title>\n<dc:title xml:lang=\"en\">")
	writeTitle(x, i, v)
	ja, en := creatorName(i)
	x.s("</dc:title>\n<jpcoar:creator>\n<jpcoar:creatorName xml:lang=\"ja\">")
	x.text(ja)
	x.s("</jpcoar:creatorName>\n<jpcoar:creatorName xml:lang=\"en\">")
	x.text(en)
	x.s("</jpcoar:creatorName>\n</jpcoar:creator>\n" +
		`<dcterms:accessRights rdf:resource="http://purl.org/coar/access_right/c_abf2">open access</dcterms:accessRights>` +
		"\n<datacite:description xml:lang=\"en\" descriptionType=\"Abstract\">Synthetic record ")
	x.int(i)
	x.s(", version ")
	x.int(v)
	x.s(".")
	s.writeHostileText(x, i, extra != "")
	x.s("</datacite:description>\n<datacite:date dateType=\"Issued\">")
	writeIssued(x, i)
	label, uri := resourceType(i)
	x.s("</datacite:date>\n<dc:language>jpn</dc:language>\n<dc:type")
	x.attr("rdf:resource", uri)
	x.s(">")
	x.s(label)
	x.s("</dc:type>\n<jpcoar:identifier identifierType=\"URI\">")
	writeLanding(x, i)
	x.s("</jpcoar:identifier>\n<jpcoar:file>\n<jpcoar:URI objectType=\"fulltext\" label=\"item-")
	x.int(i)
	x.s(".pdf\">")
	writeLanding(x, i)
	x.s("/files/item-")
	x.int(i)
	x.s(".pdf</jpcoar:URI>\n<jpcoar:mimeType>application/pdf</jpcoar:mimeType>\n</jpcoar:file>\n</jpcoar:jpcoar>")
}

// padText is the filler used for dc:description; ASCII words separated by
// single spaces.
const padText = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor " +
	"incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud " +
	"exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure " +
	"dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. " +
	"Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt " +
	"mollit anim id est laborum. "

// initPad sizes the dc:description padding so that an oai_dc metadata element
// is about recordBytes long.
func (s *Synthetic) initPad() {
	s.padLen = 0
	var b bytes.Buffer
	s.writeOAIDC(newXW(&b), 0, 0, "")
	if n := s.recordBytes - b.Len(); n > 1 {
		s.padLen = n - 1 // one separating space
	}
	if s.padLen == 0 {
		return
	}
	var sb strings.Builder
	for sb.Len() < s.padLen+len(padText) {
		sb.WriteString(padText)
	}
	s.pad = sb.String()
	for j := 0; j < len(padText); j++ {
		if j == 0 || padText[j-1] == ' ' {
			s.padStarts = append(s.padStarts, j)
		}
	}
}

func (s *Synthetic) writePad(x *xw, i, v int) {
	if s.padLen == 0 {
		return
	}
	off := s.padStarts[(i*7+v*13)%len(s.padStarts)]
	p := strings.TrimRight(s.pad[off:off+s.padLen], " ")
	x.s(" ")
	x.s(p)
}
