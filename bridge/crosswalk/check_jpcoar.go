package crosswalk

import (
	"errors"
	"strings"
)

// CheckJPCOAR checks one jpcoar:jpcoar metadata element (harvested or
// derived) against what matters for IRDB:
//   - [XSD2] structure (J2V-01..03): codes prefixed `xsd-`, plus the
//     required-element record errors title-missing, type-missing,
//     type-unknown and identifier-missing;
//   - IRDB's JPCOAR record errors ([IRDB-J], J2V-04), level record-error;
//   - the community validator ([JCV], J2V-05): codes prefixed `jcv-`, its
//     errors as item errors and its warnings as warnings.
//
// It is not a full XSD validator (xs:anyURI lexical rules, for one, are
// left to xmllint), never panics, and needs no network.
func CheckJPCOAR(metadata []byte) (issues []Issue) {
	defer func() {
		if p := recover(); p != nil {
			issues = append(issues, Issue{Level: LevelRecord, Code: "internal-error", Msg: "checker failure; please report"})
		}
	}()
	root, err := parseTree(metadata)
	if err != nil {
		msg := err.Error()
		if !errors.Is(err, errNotWellFormed) {
			msg = "unexpected: " + msg
		}
		return []Issue{{Level: LevelRecord, Code: "not-well-formed", Msg: msg}}
	}
	if root.space != nsJPCOAR || root.local != "jpcoar" {
		return []Issue{{Level: LevelRecord, Code: "not-jpcoar", Arg: clipArg(root.key()), Msg: "root is not jpcoar:jpcoar in the 2.0 namespace"}}
	}
	var l issueList
	checkSequence(&l, root)
	checkTitles(&l, root)
	checkTypeAndIDs(&l, root)
	checkValues(&l, root)
	checkNames(&l, root)
	checkLangs(&l, root)
	return l.sorted()
}

// sequence is the xs:sequence of jpcoar:content (J2V-01).
var sequence = map[string]int{
	"dc:title": 1, "dcterms:alternative": 2, "jpcoar:creator": 3, "jpcoar:contributor": 4,
	"dcterms:accessRights": 5, "dc:rights": 6, "jpcoar:rightsHolder": 7, "jpcoar:subject": 8,
	"datacite:description": 9, "dc:publisher": 10, "jpcoar:publisher": 11, "datacite:date": 12,
	"dcterms:date": 13, "dc:language": 14, "dc:type": 15, "datacite:version": 16,
	"oaire:version": 17, "jpcoar:identifier": 18, "jpcoar:identifierRegistration": 19,
	"jpcoar:relation": 20, "dcterms:temporal": 21, "datacite:geoLocation": 22,
	"jpcoar:fundingReference": 23, "jpcoar:sourceIdentifier": 24, "dcndl:edition": 25,
	"dcndl:volumeTitle": 26, "dcndl:originalLanguage": 27, "dcterms:extent": 28,
	"jpcoar:format": 29, "jpcoar:holdingAgent": 30, "jpcoar:datasetSeries": 31,
	"jpcoar:sourceTitle": 32, "jpcoar:volume": 33, "jpcoar:issue": 34, "jpcoar:numPages": 35,
	"jpcoar:pageStart": 36, "jpcoar:pageEnd": 37, "dcndl:dissertationNumber": 38,
	"dcndl:degreeName": 39, "dcndl:dateGranted": 40, "jpcoar:degreeGrantor": 41,
	"jpcoar:conference": 42, "jpcoar:file": 43, "jpcoar:catalog": 44,
}

// maxOne are the root children with maxOccurs 1 ([XSD2]).
var maxOne = []string{
	"dcterms:accessRights", "datacite:version", "oaire:version", "jpcoar:identifierRegistration",
	"jpcoar:holdingAgent", "jpcoar:datasetSeries", "jpcoar:volume", "jpcoar:issue",
	"jpcoar:numPages", "jpcoar:pageStart", "jpcoar:pageEnd", "dcndl:dissertationNumber",
	"dcndl:dateGranted", "jpcoar:catalog",
}

func checkSequence(l *issueList, root *node) {
	last := 0
	for _, k := range root.kids {
		i, ok := sequence[k.key()]
		switch {
		case !ok:
			l.add(LevelItem, "xsd-unexpected-element", k.key(), k.path(), "not a jpcoar:jpcoar child ([XSD2])")
		case i < last:
			l.add(LevelItem, "xsd-sequence", k.key(), k.path(), "out of the xs:sequence order (J2V-01)")
		default:
			last = i
		}
	}
	for _, k := range maxOne {
		if len(root.children(k)) > 1 {
			l.add(LevelItem, "xsd-repeated", k, k, "maxOccurs is 1 ([XSD2])")
		}
	}
}

// checkTitles is J2V-02 and [IRDB-J] (J2V-04) for dc:title.
func checkTitles(l *issueList, root *node) {
	titles := root.children("dc:title")
	if len(titles) == 0 {
		l.add(LevelRecord, "title-missing", "", "dc:title", "dc:title is required (J2V-02, [IRDB-J])")
		return
	}
	seen, noLang := map[string]bool{}, 0
	for _, t := range titles {
		lg := t.lang()
		if lg == "" {
			noLang++
			continue
		}
		if seen[lg] {
			l.add(LevelRecord, "title-lang-duplicated", lg, t.path(), "two dc:title with the same xml:lang ([IRDB-J])")
		}
		seen[lg] = true
	}
	if noLang > 1 {
		l.add(LevelRecord, "title-nolang-multiple", "", "dc:title", "more than one dc:title without xml:lang ([IRDB-J])")
	}
	if seen["ja-Kana"] && !seen["ja"] {
		l.add(LevelRecord, "title-kana-without-ja", "", "dc:title", "ja-Kana title without a ja title ([IRDB-J])")
	}
}

// checkTypeAndIDs is J2V-02 for dc:type and jpcoar:identifier, and the
// identifier rules of [JCV] (J2V-05).
func checkTypeAndIDs(l *issueList, root *node) {
	types := root.children("dc:type")
	switch {
	case len(types) == 0:
		l.add(LevelRecord, "type-missing", "", "dc:type", "dc:type is required (J2V-02, [IRDB-J])")
	case !resourceTypeLabels[types[0].text]:
		l.add(LevelRecord, "type-unknown", types[0].text, types[0].path(), "outside the resource type vocabulary ([IRDB-J])")
	}
	for _, t := range types {
		if _, ok := t.attr(nsRDF, "resource"); !ok {
			l.add(LevelItem, "xsd-type-uri-missing", "", t.path(), "rdf:resource is required")
		}
	}
	if len(types) == 1 && thesisTypes[types[0].text] && len(root.children("jpcoar:creator")) == 0 {
		l.add(LevelRecord, "thesis-without-creator", types[0].text, "jpcoar:creator", "a thesis needs jpcoar:creator ([IRDB-J])")
	}
	ids := root.children("jpcoar:identifier")
	if len(ids) == 0 {
		l.add(LevelRecord, "identifier-missing", "", "jpcoar:identifier", "jpcoar:identifier is required in 2.0 (J2V-02)")
	}
	dois := map[string]bool{}
	for _, id := range ids {
		typ, _ := id.attr("", "identifierType")
		switch typ {
		case "DOI", "HDL", "URI":
		case "PMID":
			l.add(LevelItem, "jcv-pmid-identifier", "", id.path(), "PMID is not an identifierType of jpcoar:identifier ([JCV])")
		default:
			l.add(LevelItem, "xsd-identifier-type", typ, id.path(), "identifierType must be DOI, HDL or URI")
		}
		if !identifierMatches(typ, id.text) {
			l.add(LevelItem, "jcv-identifier-format", typ, id.path(), "value does not match its identifierType ([JCV])")
		}
		if typ == "DOI" {
			dois[strings.TrimPrefix(strings.TrimPrefix(id.text, "https://doi.org/"), "http://doi.org/")] = true
		}
	}
	for _, r := range root.children("jpcoar:identifierRegistration") {
		typ, _ := r.attr("", "identifierType")
		switch typ {
		case "JaLC", "Crossref", "DataCite":
			if !strings.HasPrefix(r.text, "10.") {
				l.add(LevelItem, "jcv-identifier-format", typ, r.path(), "registration value must be a bare DOI 10.… ([JCV], [X2 r65])")
			} else if !dois[r.text] {
				l.add(LevelWarning, "jcv-registration-not-identifier", r.text, r.path(), "registered DOI not repeated as a DOI jpcoar:identifier ([JCV])")
			}
		case "PMID":
			l.add(LevelItem, "jcv-pmid-identifier", "", r.path(), "PMID registration is not allowed ([JCV])")
		default:
			l.add(LevelItem, "xsd-registration-type", typ, r.path(), "identifierType outside JaLC|Crossref|DataCite|PMID")
		}
	}
}

// identifierMatches is [JCV] IDENTIFIER_REGEXP for DOI and HDL (J2V-05).
func identifierMatches(typ, v string) bool {
	switch typ {
	case "DOI":
		for _, p := range []string{"https://doi.org/10.", "http://doi.org/10."} {
			if strings.HasPrefix(v, p) {
				return true
			}
		}
		return false
	case "HDL":
		return strings.HasPrefix(v, "https://hdl.handle.net/") || strings.HasPrefix(v, "http://hdl.handle.net/")
	}
	return true
}
