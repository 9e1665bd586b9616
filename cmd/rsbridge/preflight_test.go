package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreflight: check-config finds what serve would fail on here (a
// missing admin token file, a data directory that cannot be written, a
// listen address in use), naming the key; serve fails on them before it
// writes anything (issue 21, item 7: check-config said OK, serve exited 1
// without naming a key and left a fresh Badger store behind).
func TestPreflight(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		name, extra string
		data        string
		want        string
		serveCode   int
	}{
		{"token file missing", "admin:\n  token_file: " + filepath.Join(dir, "no-token") + "\n", filepath.Join(dir, "d1"), "admin.token_file", 2},
		{"data_dir is a file", "", file, "is a file, not a directory", 2},
		{"data_dir under a file", "", filepath.Join(file, "data"), "cannot be created: " + file + " is a file", 2},
		{"listen in use", "", filepath.Join(dir, "d2"), "listen " + busy.Addr().String(), 1},
		{"admin.listen in use", "admin:\n  token: 0123456789abcdef0123\n  listen: " + busy.Addr().String() + "\n", filepath.Join(dir, "d3"), "admin.listen " + busy.Addr().String(), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			listen := "127.0.0.1:0"
			if c.name == "listen in use" {
				listen = busy.Addr().String()
			}
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			os.WriteFile(p, []byte("listen: "+listen+"\ndata_dir: "+c.data+"\n"+c.extra+"repositories:\n  - name: r\n    base_url: http://127.0.0.1:1/oai\n"), 0o644)
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{"check-config", "-config", p}, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("check-config: %d\n%s%s", code, out.String(), errb.String())
			}
			errb.Reset()
			if code := run(context.Background(), []string{"serve", "-config", p}, &out, &errb); code != c.serveCode || !strings.Contains(errb.String(), c.want) {
				t.Errorf("serve: %d, want %d naming %q\n%s", code, c.serveCode, c.want, errb.String())
			}
			if _, err := os.Stat(filepath.Join(c.data, "MANIFEST")); err == nil {
				t.Errorf("serve left a store in %s", c.data)
			}
		})
	}
}
