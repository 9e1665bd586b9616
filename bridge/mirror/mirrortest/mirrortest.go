// Package mirrortest compares a destination's copy with the store it was
// taken from; tests of the mirror and of the static export use it.
package mirrortest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rsbridge/rsbridge/store"
)

// Format is one (repository, metadata prefix) of the store.
type Format struct{ Repo, Prefix string }

// Differences lists how the copy in dir differs from the live records of
// the formats in db: a file missing or with other bytes, a file the source
// has no record for. url is where the source publishes a record
// (source.ResourceURL with its base), path maps a URL to its file below dir
// (mirror.Path). It fails the test when the formats hold no record at all.
func Differences(t testing.TB, db *store.DB, formats []Format, dir string, url func(repo, prefix, id string) string,
	path func(string) (string, error)) []string {
	t.Helper()
	want := map[string][]byte{}
	err := db.View(context.Background(), func(snap *store.Snap) error {
		for _, f := range formats {
			err := snap.Resources(f.Repo, f.Prefix, store.AllSet, "", "", 1<<30, func(rec *store.Record) error {
				b, err := snap.Metadata(f.Repo, f.Prefix, rec.Identifier)
				rel, perr := path(url(f.Repo, f.Prefix, rec.Identifier))
				if perr != nil {
					return perr
				}
				want[rel] = b
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the source has no records")
	}
	got := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got[rel], _ = os.ReadFile(p)
		}
		return err
	})
	var out []string
	for rel, b := range want {
		if !bytes.Equal(got[rel], b) {
			out = append(out, fmt.Sprintf("copy of %s: %d bytes, the source has %d", rel, len(got[rel]), len(b)))
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			out = append(out, fmt.Sprintf("the copy has %s, which the source does not", rel))
		}
	}
	return out
}
