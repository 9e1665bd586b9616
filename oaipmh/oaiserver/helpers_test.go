package oaiserver

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

type tokenT struct {
	Value            string `xml:",chardata"`
	ExpirationDate   string `xml:"expirationDate,attr"`
	CompleteListSize string `xml:"completeListSize,attr"`
	Cursor           string `xml:"cursor,attr"`
}

type headerT struct {
	Status     string   `xml:"status,attr"`
	Identifier string   `xml:"identifier"`
	Datestamp  string   `xml:"datestamp"`
	SetSpecs   []string `xml:"setSpec"`
}

type recordT struct {
	Header   headerT `xml:"header"`
	Metadata *struct {
		Inner []byte `xml:",innerxml"`
	} `xml:"metadata"`
}

type listBody struct {
	Records []recordT `xml:"record"`
	Headers []headerT `xml:"header"`
	Token   *tokenT   `xml:"resumptionToken"`
}

type oaiResp struct {
	XMLName      xml.Name `xml:"OAI-PMH"`
	ResponseDate string   `xml:"responseDate"`
	Request      struct {
		Attrs []xml.Attr `xml:",any,attr"`
		URL   string     `xml:",chardata"`
	} `xml:"request"`
	Errors []struct {
		Code string `xml:"code,attr"`
		Msg  string `xml:",chardata"`
	} `xml:"error"`
	Identify *struct {
		RepositoryName    string `xml:"repositoryName"`
		BaseURL           string `xml:"baseURL"`
		ProtocolVersion   string `xml:"protocolVersion"`
		EarliestDatestamp string `xml:"earliestDatestamp"`
		DeletedRecord     string `xml:"deletedRecord"`
		Granularity       string `xml:"granularity"`
	} `xml:"Identify"`
	ListMetadataFormats *struct {
		Formats []struct {
			Prefix    string `xml:"metadataPrefix"`
			Schema    string `xml:"schema"`
			Namespace string `xml:"metadataNamespace"`
		} `xml:"metadataFormat"`
	} `xml:"ListMetadataFormats"`
	ListSets *struct {
		Sets []struct {
			Spec string `xml:"setSpec"`
			Name string `xml:"setName"`
		} `xml:"set"`
		Token *tokenT `xml:"resumptionToken"`
	} `xml:"ListSets"`
	ListRecords     *listBody `xml:"ListRecords"`
	ListIdentifiers *listBody `xml:"ListIdentifiers"`
	GetRecord       *listBody `xml:"GetRecord"`

	raw []byte
}

func (r *oaiResp) codes() []string {
	var c []string
	for _, e := range r.Errors {
		c = append(c, e.Code)
	}
	return c
}

func (r *oaiResp) list() *listBody {
	switch {
	case r.ListRecords != nil:
		return r.ListRecords
	case r.ListIdentifiers != nil:
		return r.ListIdentifiers
	case r.GetRecord != nil:
		return r.GetRecord
	}
	return nil
}

// get performs a GET with rawQuery used verbatim.
func get(t testing.TB, h http.Handler, rawQuery string) *oaiResp {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://demo.example/oai", nil)
	req.URL.RawQuery = rawQuery
	return serve(t, h, req)
}

func post(t testing.TB, h http.Handler, form string) *oaiResp {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://demo.example/oai", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return serve(t, h, req)
}

func serve(t testing.TB, h http.Handler, req *http.Request) *oaiResp {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: HTTP %d", req.URL, rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/xml; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	body := rec.Body.Bytes()
	var r oaiResp
	if err := xml.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: unmarshal: %v\n%s", req.URL, err, body)
	}
	r.raw = append([]byte(nil), body...)
	return &r
}

// q builds an escaped query string from alternating key, value pairs.
func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

// standaloneFromResponse independently applies the documented standalone
// rule to the served bytes: for every child element of <metadata>, it
// returns that element's bytes with the in-scope ancestor declarations
// inserted after the element name.
func standaloneFromResponse(t testing.TB, body []byte) [][]byte {
	t.Helper()
	type nsd struct{ prefix, uri string }
	type frame struct {
		local string
		decls []nsd
	}
	declsOf := func(se xml.StartElement) []nsd {
		var d []nsd
		for _, a := range se.Attr {
			switch {
			case a.Name.Space == "xmlns":
				d = append(d, nsd{a.Name.Local, a.Value})
			case a.Name.Space == "" && a.Name.Local == "xmlns":
				d = append(d, nsd{"", a.Value})
			}
		}
		return d
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	var stack []frame
	var out [][]byte
	for {
		off := dec.InputOffset()
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("raw token: %v", err)
		}
		switch tt := tok.(type) {
		case xml.StartElement:
			own := declsOf(tt)
			if len(stack) > 0 && stack[len(stack)-1].local == "metadata" {
				for depth := 1; depth > 0; {
					tok2, err := dec.RawToken()
					if err != nil {
						t.Fatalf("raw token: %v", err)
					}
					switch tok2.(type) {
					case xml.StartElement:
						depth++
					case xml.EndElement:
						depth--
					}
				}
				raw := body[off:dec.InputOffset()]
				var inscope []nsd
				for _, f := range stack {
					for _, d := range f.decls {
						for j := range inscope {
							if inscope[j].prefix == d.prefix {
								inscope = append(inscope[:j], inscope[j+1:]...)
								break
							}
						}
						inscope = append(inscope, d)
					}
				}
				var ins strings.Builder
			next:
				for _, d := range inscope {
					for _, o := range own {
						if o.prefix == d.prefix {
							continue next
						}
					}
					if d.prefix == "" && d.uri == "" {
						continue
					}
					ins.WriteString(" xmlns")
					if d.prefix != "" {
						ins.WriteString(":" + d.prefix)
					}
					ins.WriteString(`="` + d.uri + `"`)
				}
				qn := "<" + tt.Name.Local
				if tt.Name.Space != "" {
					qn = "<" + tt.Name.Space + ":" + tt.Name.Local
				}
				if !bytes.HasPrefix(raw, []byte(qn)) {
					t.Fatalf("metadata element does not start with %q", qn)
				}
				res := append([]byte(qn+ins.String()), raw[len(qn):]...)
				out = append(out, res)
				continue
			}
			stack = append(stack, frame{tt.Name.Local, own})
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return out
}
