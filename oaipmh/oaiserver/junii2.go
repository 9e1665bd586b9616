package oaiserver

// junii2 3.1 (the format IRDB harvests from Japanese repositories; see
// ../shared/spec/junii2-jpcoar.md, part A), served as metadataPrefix
// junii2 in the namespace http://irdb.nii.ac.jp/oai, default-declared on
// the root element as DSpace and WEKO emit it. The records carry the same
// items as the other formats, shaped by NIItype, and a known share of the
// faults IRDB's checks find, so a quality report over a synthetic
// repository has figures to show:
//
//	i%50 == 7    NIItype outside the vocabulary (a record error)
//	i%100 == 13  an ISSN with a wrong check digit (an item error)
//	i%50 == 29   no title (required: a record that cannot be derived)
//
// and, as real data has them, an organisation as the first creator (no ", "
// between family and given name: a warning) in every item with i%6 == 4.

const (
	nsJunii2     = "http://irdb.nii.ac.jp/oai"
	schemaJunii2 = "http://irdb.nii.ac.jp/oai/junii2-3-1.xsd"
	prefixJunii2 = "junii2"
)

// Junii2Fault is the fault junii2 record i is served with ("" for none),
// as the package comment of junii2.go lists them.
func Junii2Fault(i int) string {
	switch {
	case i%50 == 7:
		return "NIItype"
	case i%100 == 13:
		return "issn"
	case i%50 == 29:
		return "title"
	}
	return ""
}

// niiType is the NIItype of item i, matching resourceType's COAR type.
func niiType(i int) string {
	if Junii2Fault(i) == "NIItype" {
		return "Journal article" // wrong case: outside the vocabulary
	}
	switch i % 4 {
	case 0:
		return "Departmental Bulletin Paper"
	case 1:
		return "Journal Article"
	case 2:
		return "Thesis or Dissertation"
	default:
		return "Data or Dataset"
	}
}

func (s *Synthetic) writeJunii2(x *xw, i, v int, extra string) {
	x.s("<junii2")
	x.s(extra)
	x.s(` xmlns="` + nsJunii2 + `" version="3.1" xsi:schemaLocation="` + nsJunii2 + ` ` + schemaJunii2 + `">`)
	if Junii2Fault(i) != "title" {
		x.s("\n<title>")
		writeJATitle(x, i, v)
		x.s("</title>\n<alternative>")
		writeTitle(x, i, v)
		x.s("</alternative>")
	}
	ja, en := creatorName(i)
	x.s("\n<creator>")
	x.text(ja)
	x.s("</creator>\n<creator>")
	x.text(en)
	x.s("</creator>\n<NIIsubject>情報学</NIIsubject>\n<description>Synthetic record ")
	x.int(i)
	x.s(", version ")
	x.int(v)
	x.s(".")
	s.writeHostileText(x, i, extra != "")
	x.s("</description>\n<publisher>rsbridge demo university</publisher>\n<date>")
	writeIssued(x, i)
	x.s("</date>\n<type>text</type>\n<NIItype>")
	x.text(niiType(i))
	x.s("</NIItype>\n<format>application/pdf</format>\n<URI>")
	writeLanding(x, i)
	x.s("</URI>\n<fullTextURL>")
	writeLanding(x, i)
	x.s("/files/item-")
	x.int(i)
	x.s(".pdf</fullTextURL>")
	switch i % 4 {
	case 0, 1: // bulletin papers and journal articles: the journal
		x.s("\n<issn>")
		if Junii2Fault(i) == "issn" {
			x.s("0287-0984") // check digit should be 3
		} else {
			x.s("0287-0983")
		}
		x.s("</issn>\n<NCID>AN00000001</NCID>\n<jtitle>rsbridge 紀要</jtitle>\n<volume>")
		x.int(1 + i%40)
		x.s("</volume>\n<issue>")
		x.int(1 + i%4)
		x.s("</issue>\n<spage>")
		x.int(1 + i%200)
		x.s("</spage>\n<epage>")
		x.int(10 + i%200)
		x.s("</epage>\n<dateofissued>")
		writeIssued(x, i)
		x.s("</dateofissued>")
		if i%4 == 1 {
			x.s("\n<doi>info:doi/10.99999/demo.")
			x.int(i)
			x.s("</doi>")
		}
	case 2: // doctoral theses, deposited as ETDs
		x.s("\n<dateofissued>")
		writeIssued(x, i)
		x.s("</dateofissued>")
	}
	x.s("\n<language>jpn</language>\n<rights>© rsbridge demo university</rights>\n<textversion>")
	if i%4 == 2 {
		x.s("ETD</textversion>\n<grantid>12345甲第")
		x.int(i)
		x.s("号</grantid>\n<dateofgranted>")
		writeIssued(x, i)
		x.s("</dateofgranted>\n<degreename>博士（情報学）</degreename>\n<grantor>rsbridge demo university</grantor>")
	} else {
		x.s("publisher</textversion>")
	}
	x.s("\n</junii2>")
}
