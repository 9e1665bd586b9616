package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// TestCheckRecords: after a harvest of a junii2-only repository with
// jpcoar_2.0 derived, check-records prints each format's findings from
// the store: the summary by level and code, then every record with
// findings.
func TestCheckRecords(t *testing.T) {
	up := httptest.NewServer(oaiserver.New(oaiserver.Options{Records: 100, PageSize: 50, Prefixes: []string{"junii2"}}))
	defer up.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "rsbridge.yaml")
	os.WriteFile(conf, []byte(fmt.Sprintf("data_dir: %s\ndefaults:\n  delay: 0s\nrepositories:\n  - name: demo\n    base_url: %s/oai\n"+
		"    metadata_prefixes: [junii2]\n    derive: {jpcoar_2.0: junii2}\n", filepath.Join(dir, "data"), up.URL)), 0o644)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"harvest", "-config", conf}, &out, &errb); code != 0 {
		t.Fatalf("harvest: exit %d\n%s", code, errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"check-records", "-config", conf, "-repo", "demo"}, &out, &errb); code != 0 {
		t.Fatalf("check-records: exit %d\n%s", code, errb.String())
	}
	got := out.String()
	// Items 29 and 79: no title; 7 and 57: NIItype in the wrong case.
	for _, want := range []string{
		"demo junii2: 100 records checked; 4 with record errors",
		"title-missing                            2",
		"niitype-unknown                          2",
		"oai:demo.rsbridge.example:item-29\trecord-error title-missing",
		"demo jpcoar_2.0: 98 records checked; 0 with record errors",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("check-records output lacks %q:\n%s", want, got)
		}
	}
	if code := run(context.Background(), []string{"check-records", "-config", conf, "-repo", "demo", "-format", "oai_dc"}, &out, &errb); code != 2 {
		t.Errorf("a format the repository does not have: exit %d", code)
	}
}
