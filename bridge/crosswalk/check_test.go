package crosswalk

import (
	"path/filepath"
	"strings"
	"testing"
)

// codes lists the reasons of issues at the given level ("" = all levels).
func codes(is []Issue, level Level) []string {
	var out []string
	for _, i := range is {
		if level == "" || i.Level == level {
			out = append(out, i.Reason())
		}
	}
	return out
}

func hasCode(is []Issue, reason string, level Level) bool {
	for _, i := range is {
		if (i.Reason() == reason || i.Code == reason) && (level == "" || i.Level == level) {
			return true
		}
	}
	return false
}

// TestCheckJunii2Fixtures: the real fixtures raise no record error (IRDB
// registered them), only the legacy dialect warning for Gakugei.
func TestCheckJunii2Fixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		is := CheckJunii2(f.data)
		if rec := codes(is, LevelRecord); len(rec) > 0 {
			t.Errorf("%s: record errors %v", f.name, rec)
		}
		if strings.HasPrefix(f.name, "junii2tsv") != hasCode(is, "legacy-dialect", LevelWarning) {
			t.Errorf("%s: legacy-dialect %v", f.name, codes(is, ""))
		}
	}
}

// TestCheckJunii2Rules covers J2V-06..18 on edited fixtures.
func TestCheckJunii2Rules(t *testing.T) {
	base := fixtureByID(t, "0003/00000053").data
	thesis := fixtureByID(t, "handmade__jpcoar-schema-2.0-05-doctoral-thesis__junii2").data
	cases := []struct {
		name   string
		data   []byte
		reason string
		level  Level
	}{
		{"J2V-06 title", edit(t, base, `<title>[^<]*</title>`, ``), "title-missing", LevelRecord},
		{"J2V-06 URI", edit(t, base, `<URI>[^<]*</URI>`, ``), "uri-missing", LevelRecord},
		{"J2V-06 NIItype", edit(t, base, `<NIItype>[^<]*</NIItype>`, ``), "niitype-missing", LevelRecord},
		{"J2V-07", edit(t, base, `Departmental Bulletin Paper`, `Bulletin`), "niitype-unknown:Bulletin", LevelRecord},
		{"J2V-08 JaLC", edit(t, thesis, `<fullTextURL>[^<]*</fullTextURL>`, ``), "jalc-conditions-unmet:fullTextURL", LevelRecord},
		{"J2V-09 ETD grantor", edit(t, thesis, `<grantor>[^<]*</grantor>`, ``), "etd-conditions-unmet:grantor", LevelRecord},
		{"J2V-09 ETD date", edit(t, thesis, `<dateofgranted>[^<]*<`, `<dateofgranted>2017-03<`), "etd-conditions-unmet:dateofgranted", LevelRecord},
		{"J2V-09 ETD grantid", edit(t, thesis, `<grantid>[^<]*<`, `<grantid>甲第5384号<`), "etd-conditions-unmet:grantid", LevelRecord},
		{"J2V-11", edit(t, base, `<language>eng`, `<language>xx`), "language-und:xx", LevelNormalised},
		{"J2V-12", edit(t, base, `<NDC>660`, `<NDC>660a`), "classification-invalid:660a", LevelItem},
		{"J2V-14", edit(t, base, `xmlns="http://irdb.nii.ac.jp/oai"`, `xmlns="http://example.org/x"`), "not-junii2", LevelRecord},
		{"J2V-15 issn", edit(t, base, `<issn>1346-1842`, `<issn>1346-18`), "issn-invalid:1346-18", LevelItem},
		{"J2V-15 textversion", edit(t, base, `<textversion>author`, `<textversion>draft`), "textversion-unknown:draft", LevelItem},
		{"J2V-15 URI", edit(t, base, `<URI>http://`, `<URI>`), "uri-not-absolute", LevelItem},
		{"J2V-16", edit(t, base, `<NDC>`, `<NIIsubject>水産</NIIsubject><NDC>`), "niisubject-unknown:水産", LevelItem},
		{"J2V-17", edit(t, base, `<NDC>`, `<degreename>博士</degreename><NDC>`), "degree-element-not-thesis:degreename", LevelItem},
		{"J2V-18 katakana", edit(t, base, `MATSUKURA, Ryuichi`, `マツクラ, リュウイチ`), "katakana-creator", LevelWarning},
		{"J2V-18 comma", edit(t, base, `MATSUKURA, Ryuichi`, `MATSUKURA Ryuichi`), "creator-no-comma", LevelWarning},
		{"J2V-18 format", edit(t, base, `<format>application/pdf`, `<format>PDF`), "format-not-imt:PDF", LevelWarning},
		{"J2V-18 volume", edit(t, base, `<volume>54`, `<volume>第54巻`), "number-type", LevelWarning},
		{"J2V-18 NIIspatial", edit(t, base, `<NDC>`, `<NIIspatial>火星</NIIspatial><NDC>`), "niispatial-unknown:火星", LevelWarning},
		{"J2V-18 uri form", edit(t, base, `<NDC>`, `<NAID>40000320142</NAID><NDC>`), "identifier-not-uri-form", LevelWarning},
		{"not well-formed", []byte("<junii2"), "not-well-formed", LevelRecord},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if is := CheckJunii2(c.data); !hasCode(is, c.reason, c.level) {
				t.Errorf("want %s %s, got %v", c.level, c.reason, is)
			}
		})
	}
}

// TestCheckJPCOARSamples: the official samples have no record error or
// XSD-class finding; the derived fixtures neither (beyond what junii2
// cannot express).
func TestCheckJPCOARSamples(t *testing.T) {
	for _, name := range []string{"jpcoar-schema__2.0__01_departmental_bulletin_paper_oa.xml", "jpcoar-schema__2.0__05_doctoral_thesis_oa.xml"} {
		for _, is := range CheckJPCOAR(readFile(t, filepath.Join("testdata", "jpcoar", name))) {
			if is.Level == LevelRecord || is.Level == LevelItem {
				t.Errorf("%s: %v", name, is)
			}
		}
	}
	for _, f := range loadFixtures(t) {
		r, err := Junii2ToJPCOAR2(f.data)
		if err != nil || r.Record == nil {
			t.Fatal(f.name, err, r.Quarantine)
		}
		for _, is := range CheckJPCOAR(r.Record) {
			if is.Level == LevelRecord || is.Level == LevelItem {
				t.Errorf("%s: derived record: %v", f.name, is)
			}
		}
	}
}

// TestCheckJPCOARValidatorExamples: [JCV]'s own negative examples (J2V-04/05).
func TestCheckJPCOARValidatorExamples(t *testing.T) {
	for file, want := range map[string]string{
		"jpcoar-validator__numPages_not_integer.xml":             "xsd-not-positive-integer",
		"jpcoar-validator__related_identifier_obsolete_naid.xml": "jcv-deprecated-related-identifier:NAID",
		"jpcoar-validator__title_noja_with_yomi.xml":             "title-kana-without-ja",
		"jpcoar-validator__title_xmllang_duplicated.xml":         "title-lang-duplicated:ja",
		"jpcoar-validator__volume_unnecessary_chars.xml":         "jcv-volume-chars",
	} {
		if is := CheckJPCOAR(readFile(t, filepath.Join("testdata", "jpcoar", file))); !hasCode(is, want, "") {
			t.Errorf("%s: want %s, got %v", file, want, codes(is, ""))
		}
	}
}

// TestCheckJPCOARRules covers the structural checks on edited samples.
func TestCheckJPCOARRules(t *testing.T) {
	s05 := readFile(t, filepath.Join("testdata", "jpcoar", "jpcoar-schema__2.0__05_doctoral_thesis_oa.xml"))
	for _, c := range []struct{ name, pattern, repl, want string }{
		{"no type", `<dc:type[^>]*>[^<]*</dc:type>`, ``, "type-missing"},
		{"bad type", `>doctoral thesis<`, `>phd<`, "type-unknown:phd"},
		{"no identifier", `<jpcoar:identifier [^>]*>[^<]*</jpcoar:identifier>`, ``, "identifier-missing"},
		{"no title", `<dc:title[^>]*>[^<]*</dc:title>`, ``, "title-missing"},
		{"thesis without creator", `(?s)<jpcoar:creator .*?</jpcoar:creator>`, ``, "thesis-without-creator"},
		{"sequence", `(?s)(<dc:language>eng</dc:language>)(.*?)(</jpcoar:jpcoar>)`, `$2$1$3`, "xsd-sequence"},
		{"language", `<dc:language>eng<`, `<dc:language>en<`, "xsd-language:en"},
		{"version label", `>VoR</oaire:version>`, `>AM</oaire:version>`, "jcv-version-uri-mismatch:AM"},
		{"date", `>2017-03-25</datacite:date>`, `>25/03/2017</datacite:date>`, "xsd-date"},
		{"registration", `>10.15017/64495</jpcoar:identifierRegistration>`, `>https://doi.org/10.15017/64495</jpcoar:identifierRegistration>`, "jcv-identifier-format:JaLC"},
		{"dissertation number", `>甲第5384号<`, `>12601甲第5384号<`, "jcv-dissertation-number"},
		{"creator lang", `<jpcoar:creatorName xml:lang="en">`, `<jpcoar:creatorName>`, "jcv-lang-missing:jpcoar:creatorName"},
		{"grantor kakenhi", `<jpcoar:nameIdentifier nameIdentifierScheme="kakenhi">12601</jpcoar:nameIdentifier>`, ``, "jcv-grantor-without-kakenhi"},
		{"not jpcoar", `jpcoar:jpcoar xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/"`, `jpcoar:jpcoar xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/1.0/"`, "not-jpcoar"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if is := CheckJPCOAR(edit(t, s05, c.pattern, c.repl)); !hasCode(is, c.want, "") {
				t.Errorf("want %s, got %v", c.want, codes(is, ""))
			}
		})
	}
	if is := CheckJPCOAR([]byte("<x")); !hasCode(is, "not-well-formed", LevelRecord) {
		t.Errorf("malformed: %v", is)
	}
}
