package harvest

import (
	"os"
	"testing"
)

func TestLandingPage(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name, doc, host, want string
	}{
		{"jpcoar 2.0 digital archive sample (nested catalog identifier ignored)", string(read("jpcoar-2.0-12.xml")), "kokusho.nijl.ac.jp", "https://kokusho.nijl.ac.jp/biblio/200017323/"},
		{"oai_dc first http identifier", `<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier>urn:isbn:1</dc:identifier><dc:identifier> https://repo.example/handle/1 </dc:identifier><dc:identifier>https://other/x</dc:identifier></oai_dc:dc>`, "", "https://repo.example/handle/1"},
		{"junii2", `<junii2 xmlns="http://irdb.nii.ac.jp/oai" version="3.1"><title>t</title><URI>http://id.nii.ac.jp/1234/00000123/</URI></junii2>`, "", "http://id.nii.ac.jp/1234/00000123/"},
		{"jpcoar nested identifier ignored", `<jpcoar:jpcoar xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/"><jpcoar:catalog><jpcoar:identifier identifierType="URI">https://catalog/x</jpcoar:identifier></jpcoar:catalog><jpcoar:identifier identifierType="DOI">https://doi.org/10.1/x</jpcoar:identifier></jpcoar:jpcoar>`, "", ""},
		{"jpcoar prefers the repository host", `<jpcoar:jpcoar xmlns:jpcoar="https://irdb.nii.ac.jp/schema/jpcoar/1.0/"><jpcoar:identifier identifierType="URI">https://elsewhere/r/1</jpcoar:identifier><jpcoar:identifier identifierType="URI">https://repo.example.ac.jp/records/1</jpcoar:identifier></jpcoar:jpcoar>`, "repo.example.ac.jp", "https://repo.example.ac.jp/records/1"},
		{"not well-formed", `<x>`, "", ""},
	}
	for _, c := range cases {
		if got := landingPage([]byte(c.doc), c.host); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
