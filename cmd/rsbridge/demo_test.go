package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

func TestDemoUpstreamHandler(t *testing.T) {
	srv := httptest.NewServer(demoUpstreamHandler(oaiserver.New(oaiserver.Options{Records: 3}), 3))
	defer srv.Close()
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/oai?verb=Identify", 200, "<Identify>"},
		{"POST", "/oai", 200, "<Identify>"},
		{"HEAD", "/oai?verb=Identify", 200, ""},
		{"GET", "/", 200, "3 synthetic records"},
		{"GET", "/elsewhere", 404, ""},
		{"DELETE", "/oai", 405, ""},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		if c.method == "POST" {
			req, _ = http.NewRequest(c.method, srv.URL+c.path, strings.NewReader("verb=Identify"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.body) {
			t.Errorf("%s %s: %d %.100s", c.method, c.path, resp.StatusCode, b)
		}
	}
}
