package crosswalk

import (
	"strings"
	"testing"
)

// junii2Doc wraps child elements in a canonical junii2 root.
func junii2Doc(children string) []byte {
	return []byte(`<junii2 xmlns="http://irdb.nii.ac.jp/oai" version="3.1">` + children + `</junii2>`)
}

// synthetic records exercise the mappings the real fixtures lack (relations,
// coverage, degree forms, bad values), for XSD validation and fuzz seeds.
func synthetic() map[string][]byte {
	return map[string][]byte{
		"relations": junii2Doc(`<title>Relations test</title><NIItype>Book</NIItype>
<URI>https://example.org/item/1</URI><URI>http://dx.doi.org/10.1234/ABC</URI>
<isbn>978-4-00-000000-X</isbn><isbn>bad isbn</isbn><NCID>bb12345678</NCID>
<NAID>http://ci.nii.ac.jp/naid/40000320142</NAID><ichushi>http://search.jamas.or.jp/link/ui/2010123456</ichushi>
<pmid>info:pmid/123</pmid><doi>doi:10.5555/xyz</doi>
<relation>http://hdl.handle.net/2115/1</relation><relation>関連する本</relation>
<isPartOf>info:doi/10.1000/part</isPartOf><hasVersion>https://example.org/v2</hasVersion>
<references>Some text reference</references>
<coverage>江戸時代</coverage><temporal>1990s</temporal><NIItemporal>近代</NIItemporal>
<spatial>Sapporo</spatial><NIIspatial>北海道</NIIspatial>
<NIIsubject>情報学</NIIsubject><NDC>007.1</NDC><NDC>00A</NDC><LCSH lang="en">Computers</LCSH><UDC>621.3:681</UDC>
<date>平成19年</date><date>2007/3/8</date><date>2007-03-08</date><date>1999-00-00</date>
<language>ger</language><language>xx</language><language>en-US</language>
<textversion>publisher</textversion><spage>iii</spage><epage>12</epage>
<format>application/pdf</format><format>text/html</format><format>PDF</format>
<fullTextURL>https://example.org/a.pdf</fullTextURL><fullTextURL>https://example.org/b.html</fullTextURL>
<publisher id="http://rns.nii.ac.jp/nr/1000000000001">出版社</publisher>
<contributor lang="ja">編者, 太郎</contributor><contributor>ヘンシャ, タロウ</contributor>
<rights>© 2020 著者</rights><description>概要</description><identifier>40000320142</identifier>
<source>https://www.jstage.jst.go.jp/x</source><type>図書</type>`),
		"thesis30": junii2Doc(`<title lang="ja">学位論文</title><alternative lang="ja-Kana">ガクイ ロンブン</alternative>
<alternative lang="en">A thesis</alternative><alternative lang="xx-YY">Other</alternative>
<creator lang="ja-Kana">スミス, ジョン</creator><creator id="http://example.org/x">Smith, John</creator>
<NIItype>thesis or dissertation</NIItype><NIItype>Others</NIItype><URI>http://id.nii.ac.jp/1212/00000001/</URI>
<selfDOI ra="CrossRef">https://doi.org/10.15009/123</selfDOI><textversion>etd</textversion>
<grantid>25301A92</grantid><dateofgranted>2013/9/23</dateofgranted><degreename>博士(医学)</degreename>
<language>Japanese</language><jtitle lang="en">Jour</jtitle><volume>Vol.3</volume><issue>2号</issue>`),
		"metadataonly": junii2Doc(`<title>カタカナ タイトル</title><NIItype>Preprint</NIItype>
<selfDOI>info:doi/10.1000/noRA</selfDOI><textversion>none</textversion><issn>0287-0984</issn>
<issn>02870983</issn><issn>12345</issn><dateofissued>2001-02-30</dateofissued><grantid>12345Z6789</grantid>`),
		"legacy-nons": []byte(`<meta><title>No namespace</title><NIItype>Others</NIItype><URI>urn:nbn:jp:123</URI>
<foo>bar</foo><grantor>Some University</grantor><grantid>weird</grantid></meta>`),
	}
}

func TestSyntheticDerive(t *testing.T) {
	for name, data := range synthetic() {
		r, err := Junii2ToJPCOAR2(data)
		if err != nil || r.Record == nil {
			t.Fatalf("%s: err %v, quarantine %v", name, err, r.Quarantine)
		}
		for _, is := range CheckJPCOAR(r.Record) {
			if strings.HasPrefix(is.Code, "xsd-") || (is.Level == LevelRecord && is.Code != "thesis-without-creator") {
				t.Errorf("%s: derived record fails check: %v", name, is)
			}
		}
	}
}
