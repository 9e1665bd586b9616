package rsync

import (
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
