package ore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Values shared by many JPCOAR samples.
const (
	coarJournalArticle = "http://purl.org/coar/resource_type/c_6501"
	doi64495           = "https://doi.org/10.15017/64495"
	hdl64495           = "https://hdl.handle.net/2115/64495"
	orcidAdachi        = "https://orcid.org/0000-0001-0002-0003"
	orcidTerada        = "https://orcid.org/0000-0001-0001-0001"
	utokyoFiles        = "http://repository.dl.itc.u-tokyo.ac.jp/files/64495/"
)

const titleJoho = "情報爆発時代の研究基盤構想"

func TestExtractCorpus(t *testing.T) {
	adachi := Agent{Name: "安達, 淳", URI: orcidAdachi}
	terada := Agent{Name: "寺田, 寅彦", URI: orcidTerada}
	jis := File{URI: utokyoFiles + "JIS_12_3_34-57.pdf", MediaType: "application/pdf", Length: 3 << 20, Label: "JIS_12_3_34-57.pdf", ObjectType: "fulltext"}
	cases := []struct {
		file, host string
		want       Facts
	}{
		{"jpcoar-1.0-01.xml", "", Facts{Format: FormatJPCOAR, Title: titleJoho,
			Files: []File{jis}, DOIs: []string{doi64495}, Handles: []string{hdl64495},
			Types: []string{coarJournalArticle}, Creators: []string{orcidAdachi}, Authors: []Agent{adachi}}},
		// Three files, one URI with leading white space; the relation's DOI is ignored.
		{"jpcoar-1.0-06.xml", "", Facts{Format: FormatJPCOAR, Title: "日本の竹製管楽器、尺八の音響学的研究",
			Files: []File{
				{URI: utokyoFiles + "fulltext.pdf", MediaType: "application/pdf", Length: 10 << 20, Label: "fulltext.pdf", ObjectType: "fulltext"},
				{URI: utokyoFiles + "abstract.pdf", MediaType: "application/pdf", Length: 100 << 10, Label: "abstract.pdf", ObjectType: "abstract"},
				{URI: utokyoFiles + "abstract_of_review.pdf", MediaType: "application/pdf", Length: 50 << 10, Label: "abstract_of_review.pdf", ObjectType: "other"},
			},
			DOIs: []string{doi64495}, Handles: []string{hdl64495},
			Types: []string{"http://purl.org/coar/resource_type/c_db06"}, Creators: []string{orcidTerada}, Authors: []Agent{terada}}},
		// Metadata only, English title only, relation DOI ignored.
		{"jpcoar-1.0-10.xml", "", Facts{Format: FormatJPCOAR, Title: "Research Project on Cyber Infrastructure for Information-explosion Era",
			Handles: []string{hdl64495}, Types: []string{coarJournalArticle}, Creators: []string{orcidAdachi}, Authors: []Agent{adachi}}},
		{"jpcoar-2.0-01.xml", "", Facts{Format: FormatJPCOAR, Title: titleJoho,
			Files: []File{jis}, DOIs: []string{doi64495}, Handles: []string{hdl64495},
			Types: []string{coarJournalArticle}, Creators: []string{orcidAdachi}, Authors: []Agent{adachi}}},
		// Embargoed: no file; jpcoar:relation/jpcoar:relatedIdentifier (a DOI) is not the item's.
		{"jpcoar-2.0-02.xml", "", Facts{Format: FormatJPCOAR, Title: titleJoho,
			Handles: []string{hdl64495}, Types: []string{coarJournalArticle}, Creators: []string{orcidAdachi}, Authors: []Agent{adachi}}},
		{"jpcoar-2.0-07.xml", "", Facts{Format: FormatJPCOAR, Title: "The GRENE-TEA Project dataset",
			Files: []File{{URI: utokyoFiles + "JIS_12_3_34-57.csv", Length: 1 << 30, Label: "dataset.csv", ObjectType: "dataset"}},
			DOIs:  []string{doi64495}, Types: []string{"http://purl.org/coar/resource_type/c_ddb1"}, Creators: []string{orcidTerada}, Authors: []Agent{terada}}},
		// Metadata only with an external link (in jpcoar:relation): nothing to aggregate but the record.
		{"jpcoar-2.0-10.xml", "", Facts{Format: FormatJPCOAR, Title: titleJoho,
			Handles: []string{hdl64495}, Types: []string{coarJournalArticle}, Creators: []string{orcidAdachi}, Authors: []Agent{adachi}}},
		{"jpcoar-2.0-11.xml", "nagoya.repo.nii.ac.jp", Facts{Format: FormatJPCOAR, Title: "The GRENE-TEA Project dataset",
			Landing: "https://nagoya.repo.nii.ac.jp/records/30123",
			Files:   []File{{URI: "https://example.org/externalStrage/12345/sampleFile.tar", Length: 1 << 30, Label: "sampleFile.tar", ObjectType: "dataset"}},
			Handles: []string{"https://hdl.handle.net/2237/00032309"}, Types: []string{"http://purl.org/coar/resource_type/c_ddb1"},
			Creators: []string{orcidTerada}, Authors: []Agent{terada}}},
		// Digital archive: jpcoar:catalog nests dc:title, jpcoar:identifier URI and a
		// thumbnail jpcoar:file that describe the database, not the item.
		{"jpcoar-2.0-12.xml", "kokusho.nijl.ac.jp", Facts{Format: FormatJPCOAR, Title: "和訓栞",
			Landing: "https://kokusho.nijl.ac.jp/biblio/200017323/",
			Files:   []File{{URI: "https://kokusho.nijl.ac.jp/biblio/200017323/manifest", Label: "manifest", ObjectType: "iiif"}},
			DOIs:    []string{"https://doi.org/10.20730/200017323"}, Types: []string{"http://purl.org/coar/resource_type/c_2f33"},
			Creators: []string{"https://viaf.org/viaf/18126058"}, Authors: []Agent{{Name: "谷川, 士清", URI: "https://viaf.org/viaf/18126058"}}}},
		// A jpcoar:file without jpcoar:URI; a placeholder DOI (10.xxxxx/…) is not a DOI.
		{"jpcoar-2.0-14.xml", "", Facts{Format: FormatJPCOAR, Title: "〇〇実証においてセンサより撮像したデータ及び関連データ",
			Types: []string{"http://purl.org/coar/resource_type/63NG-B465"}, Authors: []Agent{{Name: "情報, 太郎"}}}},
		{"jpcoar-2.1-01.xml", "", Facts{Format: FormatJPCOAR, Title: titleJoho,
			Files: []File{jis}, DOIs: []string{doi64495}, Handles: []string{hdl64495},
			Types: []string{coarJournalArticle}, Creators: []string{orcidAdachi}, Authors: []Agent{adachi}}},
		// WEKO3 test item: its DOIs (1111, 1234/…) are not DOIs; affiliation,
		// contributor and rightsHolder identifiers are not creators.
		{"weko-test-base.xml", "192.168.56.103", Facts{Format: FormatJPCOAR, Title: "テスト用 フルアイテム",
			Landing: "https://192.168.56.103/records/1",
			Files: []File{
				{URI: "https://weko3.example.org/record/1/files/test1.txt", MediaType: "text/plain", Length: 18432, Label: "test1.txt", ObjectType: "abstract"},
				{URI: "https://weko3.example.org/record/1/files/test2", MediaType: "application/octet-stream", Length: 19 << 20, Label: "test2", ObjectType: "dataset"},
				{URI: "https://weko3.example.org/record/1/files/test3.png", MediaType: "image/png", Label: "test3.png", ObjectType: "fulltext"},
			},
			Types:    []string{"http://purl.org/coar/resource_type/c_2fe3"},
			Creators: []string{"https://orcid.org/1234", "https://orcid.org/2345"},
			Authors:  []Agent{{Name: "テスト, 太郎", URI: "https://orcid.org/1234"}, {Name: "テスト, 次郎", URI: "https://orcid.org/2345"}}}},
		// A real WEKO3 record as rsbridge stores it (default namespace = JPCOAR, empty jpcoar:creator).
		{"tsukuba-jpcoar-2.0.xml", "tsukuba.repo.nii.ac.jp", Facts{Format: FormatJPCOAR,
			Title:   "Aggregation and Utilization of Metadata for Intangible Folk Cultural Properties Using Linked Open Data",
			Landing: "https://tsukuba.repo.nii.ac.jp/records/2000144",
			Files:   []File{{URI: "https://tsukuba.repo.nii.ac.jp/record/2000144/files/LNCS_12645_154-2.pdf", MediaType: "application/pdf", Length: 794 << 10, Label: "LNCS_12645_154-2.pdf", ObjectType: "fulltext"}},
			Handles: []string{"https://hdl.handle.net/2241/0002000144"}, Types: []string{coarJournalArticle},
			Creators: []string{"https://nrid.nii.ac.jp/ja/nrid/1000000399271", "https://orcid.org/0000-0002-2458-6988"},
			Authors:  []Agent{{Name: "Sato, Itsumi"}, {Name: "TAKAKU, Masao", URI: "https://orcid.org/0000-0002-2458-6988"}}}},
		// IRDB-hosted namespace as the default namespace; rdf bound to another
		// prefix; the URI identifier on the repository's host wins; the ORCID is the
		// author's URI; an unparseable mimeType is dropped; datacite:size gives the
		// size; a repeated file URI is kept once.
		{"jpcoar-irdb-handwritten.xml", "repo.example.ac.jp", Facts{Format: FormatJPCOAR, Title: "English title",
			Landing: "https://repo.example.ac.jp/records/77",
			Files: []File{
				{URI: "https://repo.example.ac.jp/records/77/files/slides.pptx", Length: 2621440, Label: "slides", ObjectType: "other"},
				{URI: "https://repo.example.ac.jp/records/77/thumb.png", MediaType: "image/png", Label: "thumb.png", ObjectType: "thumbnail"},
			},
			DOIs:     []string{"https://doi.org/10.1234/ABC"},
			Types:    []string{"http://purl.org/coar/resource_type/c_5794"},
			Creators: []string{"https://nrid.nii.ac.jp/nrid/1000012345678", "https://orcid.org/0000-0002-1825-0097"},
			Authors:  []Agent{{Name: "Carberry, Josiah", URI: "https://orcid.org/0000-0002-1825-0097"}}}},
		// junii2: the first URI wins (no host preference outside JPCOAR);
		// fullTextURL are files; selfDOI is the DOI, doi (the publisher's) is not.
		{"junii2-handwritten.xml", "repo.example.ac.jp", Facts{Format: FormatJunii2,
			Title:   "Research Project on Cyber Infrastructure for Information-explosion Era",
			Landing: "http://id.nii.ac.jp/1234/00000123/",
			Files: []File{
				{URI: "https://repo.example.ac.jp/records/123/files/JIS_12_3_34-57.pdf", Label: "JIS_12_3_34-57.pdf", ObjectType: "fulltext"},
				{URI: "https://repo.example.ac.jp/records/123/files/data%20set.zip", Label: "data set.zip", ObjectType: "fulltext"},
			},
			DOIs:    []string{doi64495},
			Authors: []Agent{{Name: "安達, 淳"}, {Name: "Adachi, Jun"}}}},
		{"oai_dc-handwritten.xml", "", Facts{Format: FormatDC, Title: "A study of things",
			Landing: "http://hdl.handle.net/1765/1154",
			Files: []File{
				{URI: "https://repub.example.nl/bitstream/handle/1765/1154/thesis.PDF?sequence=1", Label: "thesis.PDF"},
				{URI: "https://repub.example.nl/bitstream/handle/1765/1154/data.csv", Label: "data.csv"},
			},
			DOIs:    []string{"https://doi.org/10.1000/XYZ.123", "https://doi.org/10.5555/abc%3C1%3E"},
			Handles: []string{"https://hdl.handle.net/1765/1154"},
			Authors: []Agent{{Name: "Doe, Jane"}}}},
		{"oai_dc-arxiv.xml", "", Facts{Format: FormatDC, Title: "PAC-Bayesian Majority Vote for Late Classifier Fusion",
			Landing: "http://arxiv.org/abs/1207.1019",
			Authors: []Agent{{Name: "Morvant, Emilie"}, {Name: "Habrard, Amaury"}, {Name: "Ayache, Stéphane"}}}},
		{"oai_dc-bhl.xml", "", Facts{Format: FormatDC, Title: "Examen classis dioeciae.",
			Landing: "http://www.biodiversitylibrary.org/item/7",
			Authors: []Agent{{Name: "Thunberg, Carl Peter, 1743-1828"}, {Name: "Kjellenberg, Fredrik Ulrik, 1795-1862"}, {Name: "So\u0308derberg, Christopher, 1804-1833"}}}}, // decomposed ö, as in the record
		{"oai_dc-dspace-eur.xml", "", Facts{Format: FormatDC,
			Title:   "De vrouwenbeweging online. Een onderzoek naar het gebruik van Internet door vrouwenorganisaties in Nederland .",
			Landing: "http://hdl.handle.net/1765/315", Handles: []string{"https://hdl.handle.net/1765/315"}}},
		// Zenodo: the first http identifier is the DOI URL, so it is the landing page too.
		{"oai_dc-zenodo.xml", "", Facts{Format: FormatDC, Title: "PocketCoffea: a configuration layer for CMS analyses with Coffea",
			Landing: "https://doi.org/10.5281/zenodo.8435696", DOIs: []string{"https://doi.org/10.5281/zenodo.8435696"},
			Authors: []Agent{{Name: "Matteo Marchegiani"}}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			doc := readTestdata(t, c.file)
			got, err := Extract(doc, c.host)
			if err != nil {
				t.Fatal(err)
			}
			checkFacts(t, got, c.want)
		})
	}
}

func checkFacts(t *testing.T, got, want Facts) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < g.NumField(); i++ {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			t.Errorf("%s:\n got %#v\nwant %#v", g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
}

const (
	dcOpen     = `<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/">`
	jpcoarOpen = `<jpcoar:jpcoar xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">`
)

func TestExtractEdgeCases(t *testing.T) {
	cases := []struct {
		name, doc, host string
		want            Facts
		wantErr         string // "" for no error
	}{
		{"first http identifier is a file: it is the landing page, not a file",
			dcOpen + `<dc:identifier>https://r.example/1/paper.pdf</dc:identifier><dc:identifier>https://r.example/1/data.zip</dc:identifier></oai_dc:dc>`, "",
			Facts{Format: FormatDC, Landing: "https://r.example/1/paper.pdf", Files: []File{{URI: "https://r.example/1/data.zip", Label: "data.zip"}}}, ""},
		{"nested jpcoar elements ignored",
			jpcoarOpen + `<jpcoar:catalog><dc:title xml:lang="ja">他</dc:title><jpcoar:identifier identifierType="URI">https://catalog/x</jpcoar:identifier><jpcoar:file><jpcoar:URI>https://catalog/t.jpg</jpcoar:URI></jpcoar:file></jpcoar:catalog>` +
				`<jpcoar:relation><jpcoar:relatedIdentifier identifierType="DOI">https://doi.org/10.1/x</jpcoar:relatedIdentifier><jpcoar:identifier identifierType="DOI">10.9/nested</jpcoar:identifier></jpcoar:relation>` +
				`<dc:title xml:lang="en">Own</dc:title><dc:type rdf:resource="http://purl.org/coar/resource_type/c_6501"><dc:type rdf:resource="http://nested/type"/></dc:type></jpcoar:jpcoar>`, "",
			Facts{Format: FormatJPCOAR, Title: "Own", Types: []string{coarJournalArticle}}, ""},
		{"ja title preferred over en and the first; empty ja skipped",
			dcOpen + `<dc:title xml:lang="de">Titel</dc:title><dc:title xml:lang="ja"> </dc:title><dc:title xml:lang="EN">Title</dc:title><dc:title xml:lang="ja">題名</dc:title></oai_dc:dc>`, "",
			Facts{Format: FormatDC, Title: "題名"}, ""},
		{"a title's own text only, white space collapsed, U+3000 kept",
			dcOpen + "<dc:title>\n  A <b>bold</b>\tstep　two </dc:title></oai_dc:dc>", "",
			Facts{Format: FormatDC, Title: "A step　two"}, ""},
		{"no namespace at all: Dublin Core rules find nothing",
			`<record><title>t</title><identifier>https://x/1</identifier></record>`, "",
			Facts{Format: FormatDC}, ""},
		{"BOM and XML declaration",
			"\ufeff<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + dcOpen + `<dc:title>t</dc:title></oai_dc:dc>` + "\n<!-- c -->\n", "",
			Facts{Format: FormatDC, Title: "t"}, ""},
		{"truncated: what came before is kept",
			jpcoarOpen + `<dc:title>T</dc:title><jpcoar:identifier identifierType="URI">https://r/1</jpcoar:identifier><jpcoar:file><jpcoar:URI>https://r/f.pdf</jpcoar:URI>`, "",
			Facts{Format: FormatJPCOAR, Title: "T", Landing: "https://r/1"}, "document ends inside <jpcoar:file>"},
		{"mismatched end tag",
			dcOpen + `<dc:identifier>https://r/1</dc:identifier><dc:title>T</dc:identifier></oai_dc:dc>`, "",
			Facts{Format: FormatDC, Landing: "https://r/1"}, "<dc:title> closed by </dc:identifier>"},
		{"a second root element", `<a/><b/>`, "", Facts{Format: FormatDC}, "a second root element <b>"},
		{"text after the root", `<a/>x`, "", Facts{Format: FormatDC}, "text after the root element"},
		{"text before the root", `x<a/>`, "", Facts{}, "text before the root element"},
		{"empty document", ``, "", Facts{}, "no root element"},
		{"syntax error", dcOpen + `<dc:title>a & b</dc:title></oai_dc:dc>`, "", Facts{Format: FormatDC}, "XML syntax error"},
		{"undeclared encoding", `<?xml version="1.0" encoding="Shift_JIS"?><a/>`, "", Facts{}, "Shift_JIS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Extract([]byte(c.doc), c.host)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrNotWellFormed)):
				t.Fatalf("error %v, want ErrNotWellFormed containing %q", err, c.wantErr)
			}
			checkFacts(t, got, c.want)
		})
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"3MB", 3 << 20, true}, {"1.2 MB", 1258291, true}, {"345 KB", 345 << 10, true},
		{"1024 bytes", 1024, true}, {"18432 B", 18432, true}, {"1,024 bytes", 1024, true},
		{"852.95 KB", 873421, true}, {" 1GB ", 1 << 30, true}, {"2 TiB", 2 << 40, true},
		{"10 kb", 10 << 10, true}, {"0 B", 0, true},
		{"24 pages", 0, false}, {"1024", 0, false}, {"", 0, false}, {"MB", 0, false},
		{".5 MB", 0, false}, {"1.2.3 MB", 0, false}, {"-1 MB", 0, false},
		{"99999999999999999999 TB", 0, false}, {"34冊 ; 25.1×17.7cm", 0, false},
	}
	for _, c := range cases {
		if got, ok := parseSize(c.in); got != c.want || ok != c.ok {
			t.Errorf("parseSize(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestNormalizeIdentifiers(t *testing.T) {
	dois := []struct {
		in   string
		bare bool
		want string
	}{
		{"https://doi.org/10.15017/64495", true, doi64495},
		{"10.15017/64495", true, doi64495},
		{"10.15017/64495", false, ""},
		{"  info:doi/10.15017/64495 ", false, doi64495},
		{"DOI:10.15017/64495", false, doi64495},
		{"http://dx.doi.org/10.15017/64495", false, doi64495},
		{"https://doi.org/10.1002%2F(SICI)1097-4636(199706)35%3A4%3C%3E", false, "https://doi.org/10.1002/(SICI)1097-4636(199706)35:4%3C%3E"},
		{"https://doi.org/10.1000/a#b?c", false, "https://doi.org/10.1000/a%23b%3Fc"},
		{"https://doi.org/10.1000.5/x", false, "https://doi.org/10.1000.5/x"},
		{"https://doi.org/10.xxxxx/xxxxxxxx", true, ""},
		{"https://doi.org/1234/0000000001", true, ""},
		{"10.1000/", true, ""},
		{"10.1000/a b", true, ""},
		{"11.1000/x", true, ""},
		{"10..1/x", true, ""},
		{"https://example.org/10.1000/x", true, ""},
	}
	for _, c := range dois {
		if got := normalizeDOI(c.in, c.bare); got != c.want {
			t.Errorf("normalizeDOI(%q, %v) = %q, want %q", c.in, c.bare, got, c.want)
		}
	}
	handles := []struct {
		in   string
		bare bool
		want string
	}{
		{"http://hdl.handle.net/2115/64495", true, hdl64495},
		{"https://hdl.handle.net/2115/64495?locatt=view:master", false, hdl64495},
		{"hdl:2115/64495", false, hdl64495},
		{"info:hdl/2115/64495", false, hdl64495},
		{"2115/64495", true, hdl64495},
		{"2115/64495", false, ""},
		{"20.500.12345/abc", true, "https://hdl.handle.net/20.500.12345/abc"},
		{"http://hdl.handle.net/", true, ""},
		{"abc/def", true, ""},
	}
	for _, c := range handles {
		if got := normalizeHandle(c.in, c.bare); got != c.want {
			t.Errorf("normalizeHandle(%q, %v) = %q, want %q", c.in, c.bare, got, c.want)
		}
	}
	files := map[string]bool{
		"https://x/a/paper.pdf":         true,
		"https://x/a/PAPER.PDF?seq=1":   true,
		"https://x/a/data.tar.gz":       true,
		"https://x/a/index.html":        false,
		"https://x/a/show.jsp?id=1.pdf": false,
		"https://x/a/":                  false,
		"https://x/a/.pdf":              false,
		"https://x/handle/1765/315":     false,
	}
	for u, want := range files {
		if got := looksLikeFile(u); got != want {
			t.Errorf("looksLikeFile(%q) = %v", u, got)
		}
	}
}

func ExampleExtract() {
	doc := `<jpcoar:jpcoar xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <dc:title xml:lang="en">A dataset</dc:title>
  <jpcoar:identifier identifierType="URI">https://repo.example.ac.jp/records/1</jpcoar:identifier>
  <jpcoar:identifierRegistration identifierType="JaLC">10.1234/5678</jpcoar:identifierRegistration>
  <jpcoar:file>
    <jpcoar:URI objectType="dataset" label="data.csv">https://repo.example.ac.jp/records/1/files/data.csv</jpcoar:URI>
    <jpcoar:mimeType>text/csv</jpcoar:mimeType>
    <jpcoar:extent>1.5 MB</jpcoar:extent>
  </jpcoar:file>
</jpcoar:jpcoar>`
	f, err := Extract([]byte(doc), "repo.example.ac.jp")
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Title)
	fmt.Println(f.Landing)
	fmt.Println(f.DOIs)
	fmt.Printf("%+v\n", f.Files)
	// Output:
	// A dataset
	// https://repo.example.ac.jp/records/1
	// [https://doi.org/10.1234/5678]
	// [{URI:https://repo.example.ac.jp/records/1/files/data.csv MediaType:text/csv Length:1572864 Label:data.csv ObjectType:dataset}]
}
