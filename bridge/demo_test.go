package bridge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

func TestDemoUpstreamHandler(t *testing.T) {
	srv := httptest.NewServer(DemoUpstreamHandler(oaiserver.New(oaiserver.Options{Records: 3}), 3))
	defer srv.Close()
	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/oai?verb=Identify", 200, "<Identify>"},
		{"/", 200, "3 synthetic records"},
		{"/elsewhere", 404, ""},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.body) {
			t.Errorf("%s: %d %.100s", c.path, resp.StatusCode, b)
		}
	}
}
