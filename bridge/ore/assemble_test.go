package ore

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"
)

// kokushoDC is an oai_dc record for the same item as jpcoar-2.0-12.xml: the same
// landing page, the DOI again in another case and form, and a scan the JPCOAR
// record does not name.
const kokushoDC = dcOpen + `<dc:title>Wakun no shiori</dc:title>
<dc:identifier>https://kokusho.nijl.ac.jp/biblio/200017323/</dc:identifier>
<dc:identifier>info:doi/10.20730/200017323</dc:identifier>
<dc:identifier>https://hdl.handle.net/20.500.12345/323</dc:identifier>
<dc:identifier>https://kokusho.nijl.ac.jp/biblio/200017323/scan.pdf</dc:identifier>
<dc:identifier>https://kokusho.nijl.ac.jp/biblio/200017323/manifest</dc:identifier>
</oai_dc:dc>`

const kokusho = "https://kokusho.nijl.ac.jp/biblio/200017323/"

func kokushoRecords(t *testing.T) ([]MetadataRecord, []Facts) {
	jp, jf := recordOf(t, "jpcoar-2.0-12.xml", "kokusho.nijl.ac.jp")
	df, err := Extract([]byte(kokushoDC), "kokusho.nijl.ac.jp")
	if err != nil {
		t.Fatal(err)
	}
	dc := MetadataRecord{URL: gw + "oai_dc.xml", Prefix: "oai_dc", Namespace: nsOAIDC,
		FirstSeen: t0().Add(-time.Hour), Modified: t1().Add(time.Hour), Length: int64(len(kokushoDC))}
	// The oai_dc record comes first, as a gateway might list formats; JPCOAR
	// still describes the shared resources.
	return []MetadataRecord{dc, jp}, []Facts{df, jf}
}

func TestAssembleMerges(t *testing.T) {
	records, facts := kokushoRecords(t)
	base := baseMap()
	base.Related = []string{"https://example.org/other-id", base.URI + "#aggregation"}
	m := Assemble(base, records, facts, AssembleOptions{})

	type ar struct {
		URI, Type, Title, ObjectType string
		Kind                         Kind
		Published, Updated           time.Time
	}
	var got []ar
	for _, r := range m.Resources {
		got = append(got, ar{r.URI, r.Type, r.Title, r.ObjectType, r.Kind, r.Published, r.Updated})
		if r.ID != EntryID(oaiID, r.URI) {
			t.Errorf("%s: id %s", r.URI, r.ID)
		}
	}
	early, late := t0().Add(-time.Hour), t1().Add(time.Hour)
	want := []ar{
		{gw + "oai_dc.xml", "application/xml", "oai_dc metadata record", "", KindMetadata, early, late},
		{gw + "jpcoar_2.0.xml", "application/xml", "JPCOAR 2.0 metadata record", "", KindMetadata, t0(), t1()},
		// Named by both records: first seen with the earlier, changed with the later.
		{kokusho, "text/html", "Landing page", "", KindLanding, early, late},
		// JPCOAR first: its objectType; the oai_dc identifier is the same URI, once.
		// Media types guessed: IIIF manifest, .pdf.
		{kokusho + "manifest", "application/ld+json", "manifest", "iiif", KindFile, t0(), t1()},
		{kokusho + "scan.pdf", "application/pdf", "scan.pdf", "", KindFile, early, late},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resources:\n got %+v\nwant %+v", got, want)
	}
	if m.Title != "和訓栞" {
		t.Errorf("title %q: JPCOAR's should win", m.Title)
	}
	if m.Aggregation != base.URI+"#aggregation" || !m.Created.Equal(early) || !m.Updated.Equal(late) {
		t.Errorf("aggregation %q created %v updated %v", m.Aggregation, m.Created, m.Updated)
	}
	wantRelated := []string{"https://example.org/other-id", base.URI + "#aggregation", "https://doi.org/10.20730/200017323", "https://hdl.handle.net/20.500.12345/323"}
	if !reflect.DeepEqual(m.Related, wantRelated) {
		t.Errorf("Related %q", m.Related)
	}
	if !reflect.DeepEqual(m.Types, []string{"http://purl.org/coar/resource_type/c_2f33"}) ||
		!reflect.DeepEqual(m.Creators, []string{"https://viaf.org/viaf/18126058"}) ||
		!reflect.DeepEqual(m.ItemAuthors, []Agent{{Name: "谷川, 士清", URI: "https://viaf.org/viaf/18126058"}}) {
		t.Errorf("types %q creators %q authors %v", m.Types, m.Creators, m.ItemAuthors)
	}
	if len(base.Related) != 2 || base.Resources != nil {
		t.Error("Assemble changed base")
	}
	// A document's own URI-A never becomes one of its related links, whatever
	// Related holds; the 0.2 feed names the 1.0 URI-A, once (ORE-016).
	m.Related = append(m.Related, base.AltURI+"#aggregation")
	agg10, agg02 := []byte(`rel="related" href="`+base.URI+`#aggregation"`), []byte(`rel="related" href="`+base.AltURI+`#aggregation"`)
	doc := write(t, m, false)
	check02(t, m, doc)
	if bytes.Contains(doc, agg02) || bytes.Count(doc, agg10) != 1 {
		t.Errorf("ORE-016: 0.2 related links:\n%s", doc)
	}
	doc = write(t, m, true)
	check10(t, m, doc)
	if bytes.Contains(doc, agg10) || bytes.Contains(doc, agg02) {
		t.Errorf("a URI-A written as related in 1.0:\n%s", doc)
	}
}

func TestAssembleOptions(t *testing.T) {
	records, facts := kokushoRecords(t)
	m := Assemble(baseMap(), records, facts, AssembleOptions{SkipThumbnails: true})
	for _, r := range m.Resources {
		if r.ObjectType == "iiif" || r.URI == kokusho+"manifest" {
			t.Errorf("iiif file kept: %+v", r)
		}
	}
	if len(m.Resources) != 4 {
		t.Errorf("%d resources, want 4", len(m.Resources))
	}

	seenAt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	m = Assemble(baseMap(), records, facts, AssembleOptions{Seen: func(uri string) (time.Time, time.Time, bool) {
		return seenAt, seenAt.Add(time.Minute), uri == kokusho+"scan.pdf"
	}})
	for _, r := range m.Resources {
		if r.URI == kokusho+"scan.pdf" && (!r.Published.Equal(seenAt) || !r.Updated.Equal(seenAt.Add(time.Minute))) {
			t.Errorf("Seen not used: %+v", r)
		}
		if r.URI == kokusho && r.Published.Equal(seenAt) {
			t.Errorf("Seen used where it said no: %+v", r)
		}
	}
}

func TestAssembleMetadataOnly(t *testing.T) {
	for _, file := range []string{"jpcoar-2.0-10.xml", "jpcoar-2.0-02.xml", "jpcoar-1.0-10.xml"} {
		t.Run(file, func(t *testing.T) {
			m := itemMap(t, file, "")
			if len(m.Resources) != 1 || m.Resources[0].Kind != KindMetadata {
				t.Fatalf("resources %+v, want the metadata record alone", m.Resources)
			}
			if !reflect.DeepEqual(m.Related, []string{hdl64495}) {
				t.Errorf("Related %q", m.Related)
			}
			check02(t, m, write(t, m, false))
			check10(t, m, write(t, m, true))
		})
	}
}

func TestAssembleFileMerge(t *testing.T) {
	u := "https://r.example/f.pdf"
	records := []MetadataRecord{
		{URL: gw + "oai_dc.xml", Namespace: nsOAIDC, FirstSeen: t0(), Modified: t0()},
		{URL: gw + "jpcoar_1.0.xml", Namespace: "https://github.com/JPCOAR/schema/blob/master/1.0/", FirstSeen: t0(), Modified: t0()},
		{URL: gw + "jpcoar_2.0.xml", Namespace: nsJP20, FirstSeen: t1(), Modified: t1()},
		{URL: gw + "other.xml", Prefix: "other", FirstSeen: t0(), Modified: t0()},
	}
	facts := []Facts{
		{Format: FormatDC, Files: []File{{URI: u, Label: "f.pdf"}}, Title: "dc title"},
		{Format: FormatJPCOAR, Files: []File{{URI: u, Label: "Full text", ObjectType: "fulltext"}}},
		{Format: FormatJPCOAR, Files: []File{{URI: u, Label: "ignored", MediaType: "application/pdf", Length: 42}}, Title: "jpcoar title"},
	}
	m := Assemble(baseMap(), records, facts, AssembleOptions{})
	if len(m.Resources) != 5 {
		t.Fatalf("%d resources: %+v", len(m.Resources), m.Resources)
	}
	titles := []string{"oai_dc metadata record", "JPCOAR 1.0 metadata record", "JPCOAR 2.0 metadata record", "other metadata record"}
	for i, want := range titles {
		if m.Resources[i].Title != want {
			t.Errorf("record %d title %q, want %q", i, m.Resources[i].Title, want)
		}
	}
	f := m.Resources[4]
	if f.Title != "Full text" || f.ObjectType != "fulltext" || f.Type != "application/pdf" || f.Length != 42 ||
		!f.Published.Equal(t0()) || !f.Updated.Equal(t1()) {
		t.Errorf("merged file %+v", f)
	}
	if m.Title != "jpcoar title" {
		t.Errorf("title %q", m.Title)
	}
}

func TestAssembleNothing(t *testing.T) {
	m := Assemble(baseMap(), nil, nil, AssembleOptions{})
	if err := m.Validate(); err == nil {
		t.Error("a map with no resource validated")
	}
}

// TestManyIdentifiers guards against quadratic work: a record naming 30,000
// files (and as many DOIs) is extracted, assembled and written quickly.
func TestManyIdentifiers(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(dcOpen)
	for i := range 30000 {
		fmt.Fprintf(&b, "<dc:identifier>https://x.example/%d/f.pdf</dc:identifier><dc:identifier>doi:10.1/%d</dc:identifier>", i, i)
	}
	b.WriteString("</oai_dc:dc>")
	start := time.Now()
	f, err := Extract(b.Bytes(), "")
	if err != nil || len(f.Files) != 29999 || len(f.DOIs) != 30000 {
		t.Fatalf("%v: %d files, %d DOIs", err, len(f.Files), len(f.DOIs))
	}
	m := Assemble(baseMap(), []MetadataRecord{{URL: gw + "oai_dc.xml", FirstSeen: t0()}}, []Facts{f}, AssembleOptions{})
	if err := m.WriteORE10(io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteORE02(io.Discard); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}
