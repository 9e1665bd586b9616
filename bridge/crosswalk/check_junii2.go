package crosswalk

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// CheckJunii2 applies IRDB's junii2 harvest checks ([IRDB-V], §F.1) and the
// community validator's rules ([JV], §F.2) to one junii2 metadata element,
// independently of conversion. Record errors (IRDB would not register the
// item) come first, then item errors (the field would be dropped), then
// normalisations and warnings, each group in document order. It never
// panics and needs no network.
func CheckJunii2(metadata []byte) (issues []Issue) {
	defer func() {
		if p := recover(); p != nil {
			issues = append(issues, Issue{Level: LevelRecord, Code: "internal-error", Msg: "checker failure; please report"})
		}
	}()
	src, err := parseJunii2(metadata)
	var nj *notJunii2Error
	switch {
	case errors.As(err, &nj):
		return []Issue{{Level: LevelRecord, Code: "not-junii2", Arg: clipArg(nj.qname()), Msg: "wrong root element or namespace (J2V-14)"}}
	case err != nil:
		return []Issue{{Level: LevelRecord, Code: "not-well-formed", Msg: err.Error()}}
	}
	var l issueList
	if d := src.dialect(); d != "" {
		l.add(LevelWarning, "legacy-dialect", d, "", "junii2 namespace or root is not canonical ([JV] error, J2V-14)")
	}
	checkRequired(&l, src)
	l.all = append(l.all, irdbConditions(src)...)
	checkItems(&l, src)
	checkWarnings(&l, src)
	return l.sorted()
}

// issueList collects issues and orders them by severity, stably.
type issueList struct{ all []Issue }

func (l *issueList) add(level Level, code, arg, path, msg string) {
	l.all = append(l.all, Issue{Level: level, Code: code, Arg: clipArg(arg), Path: path, Msg: msg})
}

func (l *issueList) sorted() []Issue {
	var out []Issue
	for _, lv := range []Level{LevelRecord, LevelItem, LevelNormalised, LevelWarning} {
		for _, is := range l.all {
			if is.Level == lv {
				out = append(out, is)
			}
		}
	}
	return out
}

// checkRequired is J2V-06 and J2V-07.
func checkRequired(l *issueList, src *junii2) {
	for _, n := range []string{"title", "NIItype", "URI"} {
		if !src.has(n) {
			l.add(LevelRecord, strings.ToLower(n)+"-missing", "", n, "required element missing (J2V-06)")
		}
	}
	if f := src.first("NIItype"); f != nil {
		if _, ok := niiTypes[f.value]; !ok {
			l.add(LevelRecord, "niitype-unknown", f.value, f.path(), "NIItype outside the vocabulary (J2V-07)")
		}
	}
}

// irdbConditions is J2V-08 and J2V-09, shared by CheckJunii2 and the
// conversion. JaLC conditions [INF]: every selfDOI needs title and
// fullTextURL; a Journal Article also spage; Crossref also publisher,
// jtitle, issn and language ([W2] Checkdoi). ETD conditions: [NII13].
func irdbConditions(src *junii2) []Issue {
	var out []Issue
	need := func(code, name, why string) {
		if !src.has(name) {
			out = append(out, Issue{Level: LevelRecord, Code: code, Arg: name, Path: name, Msg: why})
		}
	}
	if f := src.first("selfDOI"); f != nil {
		why := "selfDOI present but the JaLC DOI metadata condition is unmet (J2V-08)"
		need("jalc-conditions-unmet", "title", why)
		need("jalc-conditions-unmet", "fullTextURL", why)
		if nt := src.first("NIItype"); nt != nil && nt.value == "Journal Article" {
			need("jalc-conditions-unmet", "spage", why)
		}
		if strings.EqualFold(f.ra, "crossref") {
			for _, n := range []string{"publisher", "jtitle", "issn", "language"} {
				need("jalc-conditions-unmet", n, why)
			}
		}
	}
	tv := src.first("textversion")
	if tv == nil || !strings.EqualFold(tv.value, "ETD") {
		return out
	}
	why := "textversion ETD but the NDL condition is unmet (J2V-09)"
	if nt := src.first("NIItype"); nt == nil || nt.value != "Thesis or Dissertation" {
		out = append(out, Issue{Level: LevelRecord, Code: "etd-conditions-unmet", Arg: "NIItype", Path: "NIItype", Msg: why})
	}
	for _, n := range []string{"fullTextURL", "dateofgranted", "grantid", "degreename", "grantor"} {
		need("etd-conditions-unmet", n, why)
	}
	if f := src.first("dateofgranted"); f != nil {
		if d, ok := normDate(f.value); !ok || len(d) != 10 {
			out = append(out, Issue{Level: LevelRecord, Code: "etd-conditions-unmet", Arg: "dateofgranted", Path: f.path(), Msg: why + ": not YYYY-MM-DD"})
		}
	}
	if f := src.first("grantid"); f != nil {
		if _, _, ok := normGrantID(f.value); !ok {
			out = append(out, Issue{Level: LevelRecord, Code: "etd-conditions-unmet", Arg: "grantid", Path: f.path(), Msg: why + ": not the v3 form"})
		}
	}
	return out
}

// checkItems is J2V-10..12, J2V-15..17: values IRDB drops or rewrites.
func checkItems(l *issueList, src *junii2) {
	thesis := false
	if nt := src.first("NIItype"); nt != nil {
		thesis = nt.value == "Thesis or Dissertation"
	}
	for i := range src.fields {
		f := &src.fields[i]
		switch heading, isClass := classElements[f.name]; {
		case isClass && !heading && !validClass(f.name, f.value):
			l.add(LevelItem, "classification-invalid", f.value, f.path(), "classification code with invalid characters (J2V-12)")
		case f.name == "issn":
			if _, ok, _ := normISSN(f.value); !ok {
				l.add(LevelItem, "issn-invalid", f.value, f.path(), "not an issnType value (J2V-15)")
			}
		case f.name == "language":
			if code, _ := normLanguage(f.value); code == "und" && f.value != "und" {
				l.add(LevelNormalised, "language-und", f.value, f.path(), "not in ISO 639-3: IRDB sets und (J2V-11)")
			} else if strings.ToLower(f.value) != code {
				l.add(LevelNormalised, "language-normalised", f.value, f.path(), "rewritten to ISO 639-3 "+code)
			}
		case f.name == "URI" || f.name == "fullTextURL":
			if !isAbsoluteURI(f.value) {
				l.add(LevelItem, "uri-not-absolute", f.value, f.path(), "not a valid absolute anyURI (J2V-15)")
			}
		case f.name == "textversion":
			if _, ok := versions[strings.ToLower(f.value)]; !ok && !strings.EqualFold(f.value, "none") {
				l.add(LevelItem, "textversion-unknown", f.value, f.path(), "not a versionType value (J2V-15)")
			}
		case f.name == "NIIsubject":
			if !niiSubjects[f.value] {
				l.add(LevelItem, "niisubject-unknown", f.value, f.path(), "outside the NIIsubject vocabulary (J2V-16)")
			}
		case f.name == "date" || f.name == "dateofissued":
			if _, ok := normDate(f.value); !ok {
				l.add(LevelItem, "date-unparsable", f.value, f.path(), "not a W3CDTF date")
			}
		case !thesis && (f.name == "grantid" || f.name == "dateofgranted" || f.name == "degreename" || f.name == "grantor"):
			l.add(LevelItem, "degree-element-not-thesis", f.name, f.path(), "degree element on a non-thesis record (J2V-17)")
		}
	}
}

// checkWarnings is J2V-18 ([JV] warnings).
func checkWarnings(l *issueList, src *junii2) {
	for i, f := range src.get("creator") {
		if i > 0 && isKatakanaOnly(f.value) {
			l.add(LevelWarning, "katakana-creator", f.value, f.path(), "creator contains only Katakana ([JV])")
		}
		if !strings.Contains(f.value, ", ") && utf8.RuneCountInString(f.value) < 50 {
			l.add(LevelWarning, "creator-no-comma", f.value, f.path(), "no \", \" between family and given name ([JV])")
		}
	}
	uriForm := map[string]string{"doi": "info:doi/", "selfDOI": "info:doi/", "pmid": "info:pmid/",
		"NAID": "http://ci.nii.ac.jp/naid/", "ichushi": "http://search.jamas.or.jp/link/ui/"}
	for i := range src.fields {
		f := &src.fields[i]
		switch {
		case f.name == "format" && !isIMT(f.value):
			l.add(LevelWarning, "format-not-imt", f.value, f.path(), "format is not an Internet media type ([JV])")
		case uriForm[f.name] != "":
			if _, ok := cutPrefixFold(f.value, uriForm[f.name]); !ok {
				l.add(LevelWarning, "identifier-not-uri-form", f.value, f.path(), "expected the "+uriForm[f.name]+" form ([JV])")
			}
		case f.name == "isbn":
			if _, ok := normISBN(f.value); !ok {
				l.add(LevelWarning, "isbn-invalid", f.value, f.path(), "ISBN pattern failure ([JV])")
			}
		case f.name == "NCID":
			if _, ok := normNCID(f.value); !ok {
				l.add(LevelWarning, "ncid-invalid", f.value, f.path(), "NCID pattern failure ([JV])")
			}
		case f.name == "volume" || f.name == "issue" || f.name == "spage" || f.name == "epage":
			if !isJunii2Number(f.value) {
				l.add(LevelWarning, "number-type", f.value, f.path(), "not numeric ([JV])")
			}
		case f.name == "NIIspatial" && !niiSpatial[f.value]:
			l.add(LevelWarning, "niispatial-unknown", f.value, f.path(), "outside the NIIspatial vocabulary ([JV])")
		}
	}
}
