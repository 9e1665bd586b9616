package crosswalk

import "strings"

// Enumerations of [XSD2] that CheckJPCOAR enforces (J2V-03).
var (
	subjectSchemes = map[string]bool{
		"BSH": true, "DDC": true, "e-Rad_field": true, "JEL": true, "LCC": true, "LCSH": true,
		"MeSH": true, "NDC": true, "NDLC": true, "NDLSH": true, "SciVal": true, "UDC": true, "Other": true,
	}
	descriptionTypes = map[string]bool{
		"Abstract": true, "Methods": true, "TableOfContents": true, "TechnicalInfo": true, "Other": true,
	}
	dateTypes = map[string]bool{
		"Accepted": true, "Available": true, "Collected": true, "Copyrighted": true, "Created": true,
		"Issued": true, "Submitted": true, "Updated": true, "Valid": true,
	}
	sourceIDTypes = map[string]bool{"PISSN": true, "EISSN": true, "ISSN": true, "NCID": true}
	nameSchemes   = map[string]bool{
		"e-Rad_Researcher": true, "NRID": true, "ORCID": true, "ISNI": true, "VIAF": true,
		"AID": true, "kakenhi": true, "Ringgold": true, "GRID": true, "ROR": true,
	}
)

// checkValues is J2V-03 and the value warnings of [JCV] (J2V-05).
func checkValues(l *issueList, root *node) {
	isVersionOf := false
	for _, r := range root.children("jpcoar:relation") {
		if rt, _ := r.attr("", "relationType"); rt == "isVersionOf" {
			isVersionOf = true
		}
		rids := r.children("jpcoar:relatedIdentifier")
		if len(rids) > 1 {
			l.add(LevelItem, "xsd-relation-identifiers", "", r.path(), "at most one relatedIdentifier per relation")
		}
		for _, id := range rids {
			if t, _ := id.attr("", "identifierType"); t == "NAID" || t == "ISSN" {
				l.add(LevelWarning, "jcv-deprecated-related-identifier", t, id.path(), "deprecated relatedIdentifier type ([JCV])")
			}
		}
	}
	for _, k := range root.kids {
		switch k.key() {
		case "dc:language":
			if !isLower3(k.text) {
				l.add(LevelItem, "xsd-language", k.text, k.path(), "dc:language must match [a-z]{3}")
			}
		case "datacite:date":
			if t, _ := k.attr("", "dateType"); !dateTypes[t] {
				l.add(LevelItem, "xsd-date-type", t, k.path(), "dateType missing or outside the vocabulary")
			}
			if !isDateOrRange(k.text) {
				l.add(LevelItem, "xsd-date", k.text, k.path(), "not a W3CDTF date or range")
			}
		case "oaire:version":
			checkVersion(l, k, isVersionOf)
		case "jpcoar:sourceIdentifier":
			checkSourceID(l, k)
		case "jpcoar:subject":
			if s, _ := k.attr("", "subjectScheme"); !subjectSchemes[s] {
				l.add(LevelItem, "xsd-subject-scheme", s, k.path(), "subjectScheme missing or outside the vocabulary")
			}
		case "datacite:description":
			if t, _ := k.attr("", "descriptionType"); !descriptionTypes[t] {
				l.add(LevelItem, "xsd-description-type", t, k.path(), "descriptionType missing or outside the vocabulary")
			}
		case "jpcoar:pageStart", "jpcoar:pageEnd", "jpcoar:numPages":
			if !isPositiveInteger(k.text) {
				l.add(LevelItem, "xsd-not-positive-integer", k.text, k.path(), "must be xs:positiveInteger")
			}
		case "dcndl:dateGranted":
			if d, ok := normDate(k.text); !ok || d != k.text {
				l.add(LevelItem, "xsd-date-granted", k.text, k.path(), "must be xs:date, xs:gYearMonth or xs:gYear")
			}
		case "dcndl:dissertationNumber":
			if !isDissertationNumber(k.text) {
				l.add(LevelWarning, "jcv-dissertation-number", k.text, k.path(), "expected 甲第n号, 乙第n号 or 他第n号 ([JCV])")
			}
		case "jpcoar:volume", "jpcoar:issue":
			low := strings.ToLower(k.text)
			for _, bad := range []string{"巻", "号", "年", "vol", "issue"} {
				if strings.Contains(low, bad) {
					l.add(LevelWarning, "jcv-volume-chars", k.text, k.path(), "volume or issue with unit characters ([JCV])")
					break
				}
			}
		}
	}
}

// isDateOrRange approximates datacite ISOdateType: a W3CDTF date (time
// part not examined) or a `/` range with at least one side.
func isDateOrRange(s string) bool {
	from, to, isRange := strings.Cut(s, "/")
	ok := func(v string) bool {
		d, _, _ := strings.Cut(v, "T")
		n, valid := normDate(d)
		return valid && n == d
	}
	if !isRange {
		return ok(s)
	}
	return (from != "" || to != "") && (from == "" || ok(from)) && (to == "" || ok(to))
}

func isLower3(s string) bool {
	return len(s) == 3 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z' && s[2] >= 'a' && s[2] <= 'z'
}

// isDissertationNumber is [JCV]'s `^[甲乙他]第\d+号`.
func isDissertationNumber(s string) bool {
	for _, p := range []string{"甲第", "乙第", "他第"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			i := 0
			for i < len(rest) && isDigit(rest[i]) {
				i++
			}
			return i > 0 && strings.HasPrefix(rest[i:], "号")
		}
	}
	return false
}

func checkVersion(l *issueList, k *node, isVersionOf bool) {
	uri, hasURI := k.attr(nsRDF, "resource")
	want, ok := coarVersions[k.text]
	switch {
	case !ok:
		l.add(LevelItem, "xsd-version", k.text, k.path(), "oaire:version outside the vocabulary")
	case !hasURI:
		l.add(LevelItem, "xsd-version-uri-missing", "", k.path(), "rdf:resource is required")
	case uri != want:
		l.add(LevelItem, "jcv-version-uri-mismatch", k.text, k.path(), "label and rdf:resource disagree ([JCV])")
	}
	if ok && k.text != "VoR" && k.text != "CVoR" && k.text != "EVoR" && !isVersionOf {
		l.add(LevelWarning, "jcv-version-without-isversionof", k.text, k.path(), "non-VoR version without relation isVersionOf ([JCV])")
	}
}

func checkSourceID(l *issueList, k *node) {
	t, _ := k.attr("", "identifierType")
	if !sourceIDTypes[t] {
		l.add(LevelItem, "xsd-source-identifier-type", t, k.path(), "identifierType outside PISSN|EISSN|ISSN|NCID")
		return
	}
	if t == "ISSN" {
		l.add(LevelWarning, "jcv-source-issn", "", k.path(), "ISSN is for junii2 compatibility only; prefer PISSN or EISSN ([JCV], [X2 r97])")
	}
	ok := false
	if t == "NCID" {
		v, valid := normNCID(k.text)
		ok = valid && v == k.text
	} else {
		v, valid, _ := normISSN(k.text)
		ok = valid && v == k.text
	}
	if !ok {
		l.add(LevelItem, "jcv-identifier-format", t, k.path(), "value does not match its identifierType ([JCV])")
	}
}

// checkNames is the [JCV] name identifier rules (J2V-05) on creators,
// contributors and degree grantors.
func checkNames(l *issueList, root *node) {
	for _, key := range []string{"jpcoar:creator", "jpcoar:contributor"} {
		for _, p := range root.children(key) {
			for _, id := range p.children("jpcoar:nameIdentifier") {
				s, _ := id.attr("", "nameIdentifierScheme")
				switch {
				case !nameSchemes[s]:
					l.add(LevelItem, "xsd-name-identifier-scheme", s, id.path(), "nameIdentifierScheme missing or outside the vocabulary")
				case s == "NRID" || s == "kakenhi" || s == "GRID":
					l.add(LevelWarning, "jcv-deprecated-scheme", s, p.path()+"/"+id.path(), "deprecated nameIdentifierScheme ([JCV])")
				}
				if uri, ok := id.attr("", "nameIdentifierURI"); ok && s == "NRID" {
					d, valid := strings.CutPrefix(uri, "https://nrid.nii.ac.jp/nrid/")
					if !valid || len(d) != 13 || !allDigits(d) {
						l.add(LevelWarning, "jcv-nrid-uri", uri, p.path()+"/"+id.path(), "NRID URI must be https://nrid.nii.ac.jp/nrid/ + 13 digits ([JCV])")
					}
				}
			}
		}
	}
	for _, g := range root.children("jpcoar:degreeGrantor") {
		kakenhi := false
		for _, id := range g.children("jpcoar:nameIdentifier") {
			if s, _ := id.attr("", "nameIdentifierScheme"); s == "kakenhi" {
				kakenhi = true
			}
		}
		if !kakenhi {
			l.add(LevelWarning, "jcv-grantor-without-kakenhi", "", g.path(), "degreeGrantor without a kakenhi nameIdentifier ([JCV])")
		}
	}
}

// langElements are the elements [JCV] requires xml:lang on (J2V-05),
// given as (parent key or "" for the root, element key).
var langElements = [][2]string{
	{"", "dc:title"}, {"", "dcterms:alternative"}, {"", "dc:rights"}, {"", "datacite:description"},
	{"", "dc:publisher"}, {"", "jpcoar:sourceTitle"}, {"", "dcndl:degreeName"},
	{"jpcoar:creator", "jpcoar:creatorName"}, {"jpcoar:contributor", "jpcoar:contributorName"},
	{"jpcoar:relation", "jpcoar:relatedTitle"}, {"jpcoar:degreeGrantor", "jpcoar:degreeGrantorName"},
}

// checkLangs is [JCV]'s xml:lang rules (J2V-05): missing, duplicated within
// one group, and ja-Kana or ja-Latn without ja. dc:title duplicates are
// IRDB record errors and reported by checkTitles instead.
func checkLangs(l *issueList, root *node) {
	for _, pe := range langElements {
		groups := [][]*node{root.children(pe[1])}
		if pe[0] != "" {
			groups = groups[:0]
			for _, p := range root.children(pe[0]) {
				groups = append(groups, p.children(pe[1]))
			}
		}
		for _, g := range groups {
			seen := map[string]bool{}
			for _, n := range g {
				lg := n.lang()
				switch {
				case lg == "":
					l.add(LevelItem, "jcv-lang-missing", pe[1], n.path(), "xml:lang is required ([JCV])")
				case seen[lg] && pe[1] != "dc:title" && pe[0] != "":
					l.add(LevelItem, "jcv-lang-duplicated", lg, n.path(), "duplicated xml:lang ([JCV])")
				}
				seen[lg] = true
			}
			if (seen["ja-Kana"] || seen["ja-Latn"]) && !seen["ja"] && pe[1] != "dc:title" && pe[0] != "" {
				l.add(LevelItem, "jcv-kana-without-ja", pe[1], pe[1], "ja-Kana or ja-Latn without ja ([JCV])")
			}
		}
	}
}
