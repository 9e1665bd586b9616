package source

import (
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// mustConfig parses and validates a configuration.
func mustConfig(t *testing.T, y string) *config.Config {
	t.Helper()
	cfg, err := config.ParseAndValidate(strings.NewReader(y))
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return cfg
}

// TestEntryBoundsHold: the size bounds that cut Resource List pages and
// Change Lists are upper bounds of what the entries really take, for
// identifiers and landing pages full of characters that escaping expands.
func TestEntryBoundsHold(t *testing.T) {
	cfg := mustConfig(t, "base_url: http://rs.test/x\nrepositories:\n  - name: demo\n    base_url: http://oai.test/oai?a=b&c=d\n    metadata_prefixes: [oai_dc, jpcoar_2.0, junii2]\n")
	src := New(cfg, nil) // entries need no store
	changeBound := ChangeEntryBound(cfg)
	now := time.Date(2026, 11, 24, 5, 29, 59, 853945000, time.UTC)
	for _, id := range []string{"a", "oai:x:1", "a&b<c>\"d'e", "論文 28/v1?x=y#z", strings.Repeat("&", 300), "%41%", ". .."} {
		for _, prefix := range cfg.Repositories[0].MetadataPrefixes {
			rs := src.All(cfg.Repositories[0], prefix)
			rec := &store.Record{Identifier: id, Modified: now, Datestamp: now, Length: 123456, MD5: strings.Repeat("a", 32), SHA256: strings.Repeat("b", 64),
				Landing: "http://landing.test/?a=1&b=<2>&c=\"3\""}
			e := resourceEntry(rs, GetRecordURL(rs.Repo.BaseURL, prefix), nil, rec)
			for _, p := range cfg.Repositories[0].MetadataPrefixes {
				if p != prefix {
					e.Links = append(e.Links, rsync.Link{Rel: "alternate", Href: rs.ResourceIn(p, id), Type: XMLType})
				}
			}
			if got, bound := rsync.EntrySize(e), src.entryBound(rs)(rec); got > bound {
				t.Errorf("resource entry of %q in %s: %d bytes, bound %d", id, prefix, got, bound)
			}
			for _, c := range []store.Change{store.Created, store.Deleted} {
				ev := &store.SetEvent{Identifier: id, Change: c, Time: now, Datestamp: now, Length: 123456, MD5: rec.MD5, SHA256: rec.SHA256}
				if got, bound := rsync.EntrySize(ChangeEntry(rs, GetRecordURL(rs.Repo.BaseURL, prefix), ev)), changeBound("demo", prefix, id); got > bound {
					t.Errorf("change entry of %q in %s: %d bytes, bound %d", id, prefix, got, bound)
				}
			}
		}
	}
}
