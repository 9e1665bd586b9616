package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunCommands(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("repositories:\n  - name: Bad Name\n    base_url: ftp://x\n    colour: blue\n"), 0o644)
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("data_dir: "+filepath.Join(dir, "d")+"\nrepositories:\n  - name: r\n    base_url: http://127.0.0.1:1/oai\n    max_retries: 0\n"), 0o644)
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "", "Usage:"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"version"}, 0, "rsbridge 0.1.0", ""},
		{[]string{"check-config"}, 2, "", "-config FILE is required"},
		{[]string{"check-config", "-config", bad}, 1, "", `line 4: unknown key "colour"`},
		{[]string{"check-config", "-config", good}, 0, "OK, 1 repositories", ""},
		{[]string{"harvest", "-config", good, "-repo", "nope"}, 2, "", `no repository named "nope"`},
		// Nothing listens on port 1: a clear error naming repository and URL, exit 1.
		{[]string{"harvest", "-config", good}, 1, "", "repository r: GET http://127.0.0.1:1/oai?verb=Identify"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), c.args, &out, &errb)
			if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
				t.Fatalf("code %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
			}
		})
	}
}

func TestDemoHarvestsOffline(t *testing.T) {
	var out, errb bytes.Buffer
	data := filepath.Join(t.TempDir(), "data")
	if code := run(context.Background(), []string{"demo", "-records", "300", "-data", data}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "demo oai_dc: 3 pages, 300 records: 294 created") || !strings.Contains(errb.String(), "records/s") {
		t.Fatalf("stderr:\n%s", errb.String())
	}
}
