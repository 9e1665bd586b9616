package oaiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestFarm: repositories answer at /{name}/oai, each its own; other paths
// are 404; a slow repository's list pages wait its delay (GET and POST),
// other verbs do not.
func TestFarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFarm()
		f.Add("a", New(Options{Records: 3, RepositoryName: "A"}), 0)
		f.Add("b", New(Options{Records: 5, RepositoryName: "B"}), time.Minute)
		if f.Len() != 2 || f.Repository("a").Len() != 3 || f.Repository("zz") != nil {
			t.Fatal("farm contents")
		}
		get := func(method, path, args string) (int, string, time.Duration) {
			start := time.Now()
			var r *http.Request
			if method == http.MethodPost {
				r = httptest.NewRequestWithContext(context.Background(), method, path, strings.NewReader(args))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			} else {
				r = httptest.NewRequestWithContext(context.Background(), method, path+"?"+args, nil)
			}
			w := httptest.NewRecorder()
			f.ServeHTTP(w, r)
			b, _ := io.ReadAll(w.Result().Body)
			return w.Code, string(b), time.Since(start)
		}
		list := url.Values{"verb": {"ListIdentifiers"}, "metadataPrefix": {"oai_dc"}}.Encode()
		for _, tc := range []struct {
			method, path, args string
			code               int
			has                string
			took               time.Duration
		}{
			{"GET", "/a/oai", "verb=Identify", 200, "<repositoryName>A</repositoryName>", 0},
			{"GET", "/b/oai", "verb=Identify", 200, "<repositoryName>B</repositoryName>", 0},
			{"GET", "/a/oai", list, 200, "<header>", 0},
			{"GET", "/b/oai", list, 200, "<header>", time.Minute},
			{"POST", "/b/oai", list, 200, "<header>", time.Minute},
			{"GET", "/c/oai", "verb=Identify", 404, "no repository", 0},
			{"GET", "/a", "verb=Identify", 404, "use /{name}/oai", 0},
			{"GET", "/a/oai/x", "verb=Identify", 404, "", 0},
		} {
			code, body, took := get(tc.method, tc.path, tc.args)
			if code != tc.code || !strings.Contains(body, tc.has) || took != tc.took {
				t.Errorf("%s %s?%s: %d in %v, want %d in %v with %q; body %.200s", tc.method, tc.path, tc.args, code, took, tc.code, tc.took, tc.has, body)
			}
		}
	})
}
