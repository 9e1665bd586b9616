package crosswalk

import (
	"strings"
	"testing"
)

// T-J2J-12 and the §E normalisers, table-driven.

func TestNormDOI(t *testing.T) { // J2N-02
	for _, c := range []struct{ in, want string }{
		{"info:doi/10.1038/sj.onc.1209578", "10.1038/sj.onc.1209578"},
		{"doi:10.1/x", "10.1/x"},
		{"info:doi/10.1000.10/abc", "10.1000.10/abc"},
		{"info:doi/10.ab/x", ""},
		{"doi:10.1234/x", "10.1234/x"},
		{"http://dx.doi.org/10.1234/x", "10.1234/x"},
		{"HTTPS://DOI.ORG/10.1234/x", "10.1234/x"},
		{"https://doi.org/10.1234/a%2Fb", "10.1234/a/b"},
		{"10.15017/64495", "10.15017/64495"},
		{"info:doi/10.1234/has space", ""},
		{"info:doi/11.1234/x", ""},
		{"info:doi/10.1234/", ""},
		{"", ""},
	} {
		got, ok := normDOI(c.in)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("normDOI(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	if doiURL("10.1/x") != "https://doi.org/10.1/x" {
		t.Error("doiURL")
	}
}

// TestTJ2J12DOIForms: the digest's three forms give the same bare DOI.
func TestTJ2J12DOIForms(t *testing.T) {
	for _, in := range []string{"info:doi/10.1/x", "doi:10.1/x", "http://dx.doi.org/10.1/x"} {
		if got, ok := normDOI(in); !ok || got != "10.1/x" {
			t.Errorf("%q → %q %v", in, got, ok)
		}
	}
}

func TestNormISSN(t *testing.T) { // J2N-04
	for _, c := range []struct {
		in, want string
		sum      bool
	}{
		{"02870983", "0287-0983", true}, // digest example
		{"0287-0984", "0287-0984", false},
		{"0950-923x", "0950-923X", false},
		{"0950-9232", "0950-9232", true},
		{"1880-697X", "1880-697X", true},
		{"1343-229X", "1343-229X", true},
		{"0950-923", "", false},
		{"ABCD-EFGH", "", false},
	} {
		got, ok, sum := normISSN(c.in)
		if ok != (c.want != "") || got != c.want || (ok && sum != c.sum) {
			t.Errorf("normISSN(%q) = %q %v %v; want %q %v", c.in, got, ok, sum, c.want, c.sum)
		}
	}
}

func TestNormNCIDAndIDs(t *testing.T) { // J2N-03, J2N-05, J2N-06
	for in, want := range map[string]string{
		"AA11547977": "AA11547977", "aa12203623": "AA12203623", "BN1234567X": "BN1234567X",
		"BB123456789": "BB123456789", "AB1234567": "", "AA123456": "", "AN00149657": "AN00149657",
	} {
		if got, ok := normNCID(in); ok != (want != "") || got != want {
			t.Errorf("normNCID(%q) = %q %v", in, got, ok)
		}
	}
	for in, want := range map[string]string{"http://ci.nii.ac.jp/naid/40000320142": "40000320142", "40000320142": "40000320142", "naid:x": ""} {
		if got, ok := stripDigits(in, "http://ci.nii.ac.jp/naid/"); ok != (want != "") || (ok && got != want) {
			t.Errorf("NAID %q = %q %v", in, got, ok)
		}
	}
	if got, ok := stripDigits("info:pmid/16636663", "info:pmid/"); !ok || got != "16636663" {
		t.Errorf("PMID %q", got)
	}
	if got, ok := normIchushi("http://search.jamas.or.jp/link/ui/2010123456"); !ok || got != "2010123456" {
		t.Errorf("ichushi %q", got)
	}
	for in, ok := range map[string]bool{"978-4-00-000000-X": true, "4000000001": true, "97840-": false, "ISBN 123": false} {
		if _, got := normISBN(in); got != ok {
			t.Errorf("normISBN(%q) = %v", in, got)
		}
	}
}

func TestNormLanguage(t *testing.T) { // J2N-07
	for in, want := range map[string]string{
		"fre": "fra", "ger": "deu", "ja": "jpn", "JPN": "jpn", "xx": "und", "日本語": "und",
		"english": "eng", "en-US": "eng", "chi": "zho", "may": "msa", "eng": "eng", "zxx": "zxx",
		"qqq": "und", " kor ": "kor", "jp": "und",
	} {
		if got, _ := normLanguage(in); got != want {
			t.Errorf("normLanguage(%q) = %q, want %q", in, got, want)
		}
	}
	if !isISO6393("aaa") || !isISO6393("zza") || isISO6393("zzz") || isISO6393("ja") {
		t.Error("isISO6393")
	}
}

func TestLangAttr(t *testing.T) { // J2N-11
	for in, want := range map[string]string{
		"ja": "ja", "jpn": "ja", "Japanese": "ja", "EN": "en", "ja-Kana": "ja-Kana", "JA-KANA": "ja-Kana",
		"ja-latn": "ja-Latn", "zh-CN": "zh-cn", "zh-Hant": "zh-tw", "zh-TW": "zh-tw", "de-DE": "de",
		"fre": "fr", "deu": "de", "xx": "", "": "",
	} {
		if got, _ := langAttr(in); got != want {
			t.Errorf("langAttr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDetectLang(t *testing.T) { // J2N-14, GW-J2J-06
	for _, c := range []struct{ in, want string }{
		{"情報爆発時代の研究基盤構想", "ja"},
		{"ジョウホウ バクハツ ジダイ ノ ケンキュウ キバン コウソウ", "ja-Kana"},
		{"アダチ, ジュン", "ja-Kana"},
		{"テラダ，トラヒコ", "ja-Kana"},
		{"ｱﾀﾞﾁ ｼﾞｭﾝ", "ja-Kana"},
		{"二ホン ノ チクセイ", "ja"}, // Han 二: detection says ja; explicit @lang must win
		{"ETYP:教育関連論文", "ja"},
		{"Oncogene", "en"},
		{"Ünïcødé Latin", "en"},
		{"한국어", "ko"},
		{"Русский", ""},
		{"12345", ""},
		{"データ mining", "ja"},
	} {
		if got := detectLang(c.in, false); got != c.want {
			t.Errorf("detectLang(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := detectLang("Oncogene", true); got != "" {
		t.Errorf("lang_guess_latin off: %q", got)
	}
}

func TestNormDate(t *testing.T) { // J2N-08
	for in, want := range map[string]string{
		"2007/3/8": "2007-03-08", "20070308": "2007-03-08", "2007-00-00": "2007", "2007-03-00": "2007-03",
		"1999-1-1": "1999-01-01", "2007.03.08": "2007-03-08", "2003-12": "2003-12", "1998": "1998",
		"2006-09-21T10:00:00Z": "2006-09-21", "2008-02-29": "2008-02-29",
		"平成19年": "", "2007-02-29": "", "2007-13": "", "2007-00-05": "", "07-03-08": "", "1998-1999": "", "": "",
	} {
		got, ok := normDate(in)
		if ok != (want != "") || got != want {
			t.Errorf("normDate(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

// TestTJ2J12UnparsableDate: 平成19年 goes to dcterms:date (xml:lang ja).
func TestTJ2J12UnparsableDate(t *testing.T) {
	r, root := derive(t, junii2Doc(`<title>t</title><NIItype>Others</NIItype><URI>http://x.example/1</URI><date>平成19年</date>`), Options{})
	wantShows(t, "dcterms:date", root.children("dcterms:date"), "平成19年 @lang=ja")
	if !hasReason(r.Warnings, "date-unparsable:平成19年") || !hasReason(r.Warnings, "no-issued-date") {
		t.Errorf("warnings %v", r.Warnings)
	}
}

func TestNormGrantID(t *testing.T) { // J2N-13, T-J2J-12
	for _, c := range []struct {
		in, num, code string
		ok            bool
	}{
		{"12601甲第5384号", "甲第5384号", "12601", true},
		{"25301A92", "甲第92号", "25301", true},
		{"25301B7", "乙第7号", "25301", true},
		{"10100Z123456", "第123456号", "10100", true},
		{"10100甲第3456号", "甲第3456号", "10100", true},
		{"甲第5384号", "甲第5384号", "", false},
		{"weird", "weird", "", false},
	} {
		num, code, ok := normGrantID(c.in)
		if num != c.num || code != c.code || ok != c.ok {
			t.Errorf("normGrantID(%q) = %q %q %v", c.in, num, code, ok)
		}
	}
}

func TestNormNRID(t *testing.T) { // J2N-10, T-J2J-12
	for in, want := range map[string]string{
		"http://rns.nii.ac.jp/nr/1000030261340":     "1000030261340",
		"https://nrid.nii.ac.jp/nrid/1000030261340": "1000030261340",
		"http://rns.nii.ac.jp/nr/123":               "",
		"https://orcid.org/0000-0001-0002-0003":     "",
	} {
		if got, ok := normNRID(in); ok != (want != "") || (ok && got != want) {
			t.Errorf("normNRID(%q) = %q %v", in, got, ok)
		}
	}
}

// TestTJ2J12RA: ra="CrossRef" → identifierRegistration Crossref (J2M-023).
func TestTJ2J12RA(t *testing.T) {
	for ra, want := range map[string]string{"CrossRef": "Crossref", "JaLC": "JaLC", "datacite": "DataCite"} {
		_, root := derive(t, junii2Doc(`<title>t</title><NIItype>Others</NIItype><selfDOI ra="`+ra+`">info:doi/10.1234/x</selfDOI>`), Options{})
		wantShows(t, ra, root.children("jpcoar:identifierRegistration"), "10.1234/x @identifierType="+want)
	}
	for ra, code := range map[string]string{"": "selfdoi-ra-missing", "NDL": "selfdoi-ra-unknown:NDL"} {
		attr := ""
		if ra != "" {
			attr = ` ra="` + ra + `"`
		}
		r, root := derive(t, junii2Doc(`<title>t</title><NIItype>Others</NIItype><selfDOI`+attr+`>info:doi/10.1234/x</selfDOI>`), Options{})
		wantShows(t, "no registration", root.children("jpcoar:identifierRegistration"))
		wantShows(t, "doi identifier", root.children("jpcoar:identifier"), "https://doi.org/10.1234/x @identifierType=DOI")
		if !hasReason(r.Warnings, code) {
			t.Errorf("%q: warnings %v", ra, r.Warnings)
		}
	}
}

func TestURITypeAndFormats(t *testing.T) { // J2N-09, J2N-15, J2N-16
	for in, want := range map[string]string{
		"http://hdl.handle.net/2115/1": "HDL", "https://doi.org/10.1/x": "DOI", "http://dx.doi.org/10.1/x": "DOI",
		"http://jairo.nii.ac.jp/0003/1": "URI", "info:x/y": "URI", "urn:nbn:1": "URI", "ftp://x": "", "/relative": "",
		"http://has space": "",
	} {
		if got, _ := uriType(in); got != want {
			t.Errorf("uriType(%q) = %q", in, got)
		}
	}
	for in, want := range map[string]bool{"application/pdf": true, "text/html": true, "PDF": false, "application/": false, "image/svg+xml": true} {
		if isIMT(in) != want {
			t.Errorf("isIMT(%q)", in)
		}
	}
	for _, c := range []struct {
		scheme, v string
		ok        bool
	}{{"NDC", "431.67", true}, {"NDC", "00A", false}, {"UDC", "621.3:681", false}, {"LCC", "QA76.9", true}, {"LCSH", "Any text", true}} {
		if validClass(c.scheme, c.v) != c.ok {
			t.Errorf("validClass(%s, %q)", c.scheme, c.v)
		}
	}
}

func TestClipArg(t *testing.T) {
	long := strings.Repeat("あ", 300)
	if got := clipArg(long); len([]rune(got)) != maxArg+1 {
		t.Errorf("clipArg kept %d runes", len([]rune(got)))
	}
}
