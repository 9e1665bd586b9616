package ore

import (
	"path/filepath"
	"testing"
)

// TestLandingAgrees: the byte scanner gives Extract's landing page for every
// test record and host, and for the cases that trip scanners.
func TestLandingAgrees(t *testing.T) {
	docs := []string{
		`<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier>urn:isbn:1</dc:identifier><dc:identifier> https://repo.example/handle/1 </dc:identifier></oai_dc:dc>`,
		`<junii2 xmlns="http://irdb.nii.ac.jp/oai" version="3.1"><title>t</title><URI>http://id.nii.ac.jp/1234/00000123/</URI></junii2>`,
		`<jpcoar:jpcoar xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/"><jpcoar:catalog><jpcoar:identifier identifierType="URI">https://catalog/x</jpcoar:identifier></jpcoar:catalog><jpcoar:identifier identifierType="DOI">https://doi.org/10.1/x</jpcoar:identifier></jpcoar:jpcoar>`,
		`<jpcoar:jpcoar xmlns:jpcoar="https://irdb.nii.ac.jp/schema/jpcoar/1.0/"><jpcoar:identifier identifierType="URI">https://elsewhere/r/1</jpcoar:identifier><jpcoar:identifier identifierType="URI">https://repo.example.ac.jp/records/1</jpcoar:identifier></jpcoar:jpcoar>`,
		`<x:a xmlns:x="https://github.com/JPCOAR/schema/blob/master/1.0/"><y:identifier xmlns:y="https://github.com/JPCOAR/schema/blob/master/2.0/" identifierType="URI">https://r/1</y:identifier></x:a>`,
		`<?xml version="1.0"?><!-- c --><dc xmlns="http://purl.org/dc/elements/1.1/"><!-- <identifier>http://no/1</identifier> --><![CDATA[<identifier>http://no/2</identifier>]]><identifier><![CDATA[http://yes/]]>3</identifier></dc>`,
		`<dc xmlns="http://purl.org/dc/elements/1.1/"><identifier a='x>y'>http://a/&amp;b&#x3D;&#61;c</identifier></dc>`,
		`<dc xmlns="http://purl.org/dc/elements/1.1/"><identifier>http://a/<b>nested</b>x</identifier></dc>`,
		`<dc xmlns="http://purl.org/dc/elements/1.1/"><other><identifier>http://deep/1</identifier></other><identifier/><identifier>http://top/1</identifier></dc>`,
		`<r xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier xmlns:dc="urn:other">http://no/1</dc:identifier><dc:identifier>http://yes/1</dc:identifier></r>`,
		`<dc xmlns="http://purl.org/dc/elements/1.1/"/>`,
		`<!DOCTYPE x><x/>`,
		`<x>`,
	}
	files, _ := filepath.Glob("testdata/*.xml")
	for _, f := range files {
		docs = append(docs, string(readTestdata(t, filepath.Base(f))))
	}
	for i, doc := range docs {
		for _, host := range []string{"", "repo.example.ac.jp", "kokusho.nijl.ac.jp", "tsukuba.repo.nii.ac.jp", "elsewhere"} {
			f, _ := Extract([]byte(doc), host)
			if got := Landing([]byte(doc), host); got != f.Landing {
				t.Errorf("doc %d host %q: Landing %q, Extract %q", i, host, got, f.Landing)
			}
		}
	}
}

func FuzzLanding(f *testing.F) {
	for _, s := range []string{
		`<dc xmlns="http://purl.org/dc/elements/1.1/"><identifier>http://a/1</identifier></dc>`,
		`<j:jpcoar xmlns:j="https://github.com/JPCOAR/schema/blob/master/2.0/"><j:identifier identifierType="URI">http://h/1</j:identifier></j:jpcoar>`,
		`<junii2 xmlns="http://irdb.nii.ac.jp/oai"><URI>http://j/1</URI></junii2>`,
	} {
		f.Add([]byte(s), "h")
	}
	f.Fuzz(func(t *testing.T, doc []byte, host string) {
		got := Landing(doc, host)
		want, err := Extract(doc, host)
		if err == nil && got != want.Landing {
			t.Fatalf("Landing %q, Extract %q", got, want.Landing)
		}
	})
}
