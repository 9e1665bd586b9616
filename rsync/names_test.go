package rsync

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestHashes(t *testing.T) {
	for _, c := range []struct{ in, md5, sha string }{
		{"md5:ABC sha-256:def", "abc", "def"},
		{"sha-256:def md5:abc", "abc", "def"},
		{"sha-1:xyz", "", ""},
		{"  md5:1  ", "1", ""},
		{"nonsense", "", ""},
	} {
		if m, s := Hashes(c.in); m != c.md5 || s != c.sha {
			t.Errorf("Hashes(%q) = %q, %q", c.in, m, s)
		}
	}
}

func TestSafeName(t *testing.T) {
	seen := map[string]string{}
	for _, s := range []string{"a", ".", "..", "...", "a.b", ".a", "a.", "a/b", "a%2Fb", "C:\\x", "論文", "", strings.Repeat("x", 300), strings.Repeat("x", 300) + "y"} {
		n := SafeName(s, 100)
		if strings.ContainsAny(n, "/\\") || n == "." || n == ".." || strings.HasPrefix(n, ".") || len(n) > 100 {
			t.Errorf("SafeName(%q) = %q: unsafe", s, n)
		}
		if other, dup := seen[n]; dup && n != "" {
			t.Errorf("%q and %q both give %q", s, other, n)
		}
		seen[n] = s
	}
}

// TestStreamMatchesParse: Stream hands over the entries Parse returns, in
// order, with the same root, for every document in testdata; an error
// from the callback stops it.
func TestStreamMatchesParse(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.xml")
	if len(files) == 0 {
		t.Fatal("no testdata documents")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		want, perr := Parse(bytes.NewReader(b))
		var got []Entry
		doc, serr := Stream(bytes.NewReader(b), func(d *Document, e Entry) error { got = append(got, e); return nil })
		if (perr == nil) != (serr == nil) {
			t.Errorf("%s: Parse %v, Stream %v", f, perr, serr)
			continue
		}
		if perr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want.Entries) && !(len(got) == 0 && len(want.Entries) == 0) {
			t.Errorf("%s: Stream gave %d entries, Parse %d (or they differ)", f, len(got), len(want.Entries))
		}
		want.Entries = nil
		if !reflect.DeepEqual(doc, want) {
			t.Errorf("%s: root %+v, want %+v", f, doc, want)
		}
	}
	stop := errors.New("stop")
	b, _ := os.ReadFile(files[0])
	if _, err := Stream(bytes.NewReader(b), func(*Document, Entry) error { return stop }); err != stop && !errors.Is(err, stop) {
		t.Errorf("callback error: %v", err)
	}
}
