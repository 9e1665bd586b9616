package objstore_test

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/export/objstore/objstoretest"
)

// rawGet sends GET with target written byte for byte as the request target
// (net/http would re-escape non-ASCII and some escapes), anonymously, and
// returns the status, headers and body.
func rawGet(t *testing.T, base, target string) (int, http.Header, string) {
	t.Helper()
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// escapeCase is a URL path tried against a static server: want is the key
// whose body it must return, or "" for 404.
type escapeCase struct {
	path string
	want string
	note string
}

// escapeKeys are objects with the characters OAI identifiers and URL paths
// make trouble with.
var escapeKeys = []string{"r/oai:x:1/2", "a+b c%d", "ü/é 名", "x?y#z", "q;p=1&z", "s/a,b@c$d!e'f(g)h*i~j=k"}

// escapeCases hold for both nginx and versitygw (paths relative to the
// tree's root): the path is percent-decoded once, '%2F' decodes to '/', '+'
// stays '+', and raw UTF-8 and raw sub-delims work as well as escaped ones.
var escapeCases = []escapeCase{
	{"r/oai:x:1/2", "r/oai:x:1/2", "raw ':' and '/'"},
	{"r/oai:x:1%2F2", "r/oai:x:1/2", "%2F is '/'"},
	{"r/oai%3Ax%3A1%2F2", "r/oai:x:1/2", "everything escaped"},
	{"a+b%20c%25d", "a+b c%d", "'+' is '+', %20 is ' '"},
	{"a%2Bb%20c%25d", "a+b c%d", "%2B is '+'"},
	{"a+b+c%25d", "", "'+' is not a space"},
	{"a%2Bb+c%25d", "", "'+' is not a space"},
	{"%C3%BC/%C3%A9%20%E5%90%8D", "ü/é 名", "escaped UTF-8"},
	{"ü/é%20名", "ü/é 名", "raw UTF-8"},
	{"x%3Fy%23z", "x?y#z", "'?' and '#' escaped"},
	{"q;p=1&z", "q;p=1&z", "raw ';' '=' '&'"},
	{"q%3Bp%3D1%26z", "q;p=1&z", "escaped ';' '=' '&'"},
	{"s/a,b@c$d!e'f(g)h*i~j=k", "s/a,b@c$d!e'f(g)h*i~j=k", "raw sub-delims"},
	{"s/a%2Cb%40c%24d%21e%27f%28g%29h%2Ai%7Ej%3Dk", "s/a,b@c$d!e'f(g)h*i~j=k", "escaped sub-delims"},
}

// checkEscaping fetches every case under base+prefix and reports what the
// server did, so the log documents the facts.
func checkEscaping(t *testing.T, base, prefix string, extra []escapeCase) {
	t.Helper()
	cases := append(slicesClone(escapeCases), extra...)
	for _, k := range escapeKeys { // the escaping the exporter uses
		cases = append(cases, escapeCase{objstoretest.EscapeKey(k), k, "EscapeKey"})
	}
	for _, c := range cases {
		status, _, body := rawGet(t, base, prefix+c.path)
		got := fmt.Sprint(status)
		if status == http.StatusOK {
			got = "200 " + strings.TrimPrefix(body, "body of ")
		}
		t.Logf("GET %s%s -> %s (%s)", base, prefix+c.path, got, c.note)
		// A missing object may be 403 where listing is not public (S3).
		missing := status == http.StatusNotFound || status == http.StatusForbidden
		if c.want == "" && !missing || c.want != "" && got != "200 "+c.want {
			t.Errorf("GET %s%s = %s, want %s (%s)", base, prefix+c.path, got, cmp.Or(c.want, "404"), c.note)
		}
	}
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

func putAll(t *testing.T, s objstore.Store, keys []string, m objstore.Meta) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		body := "body of " + k
		if err := s.Put(ctx, k, strings.NewReader(body), int64(len(body)), m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func getString(ctx context.Context, s objstore.Store, key string) (string, error) {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

func listKeys(t *testing.T, s objstore.Store, prefix string) []string {
	t.Helper()
	var keys []string
	if err := s.List(context.Background(), prefix, func(o objstore.Object) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func isNotFound(err error) bool { return errors.Is(err, objstore.ErrNotFound) }
