package harvest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// TestLongIdentifierQuarantined: a record whose URL would not fit a sitemap
// <loc> (2,048 characters) waits in quarantine with the reason, instead of
// making every list that holds it invalid (issue 16, finding 4).
func TestLongIdentifierQuarantined(t *testing.T) {
	db, err := store.Open(store.Options{InMemory: true, ChangeListLimit: 1000, ChangeListPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg, err := config.ParseAndValidate(strings.NewReader("base_url: http://rs.test\nrepositories:\n  - name: demo\n    base_url: http://oai.test/oai\n    metadata_prefixes: [oai_dc]\n"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg, cfg.Repositories[0], db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.NewBatch("demo", "oai_dc")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Discard()
	var counts Counts
	in := h.ingest(b, &counts, "oai_dc", "http://oai.test/oai?verb=ListRecords")
	base := len("http://rs.test/demo/oai_dc/resource/")
	fits, over := strings.Repeat("x", rsync.MaxLoc-base), strings.Repeat("x", rsync.MaxLoc-base+1)
	for _, id := range []string{fits, over} {
		rec := &oaipmh.Record{Header: oaipmh.Header{Identifier: id, Datestamp: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, Metadata: []byte("<x/>")}
		if err := in.record(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if counts.Quarantined != 1 || counts.Created != 1 {
		t.Fatalf("counts %+v: want the identifier that fits created, the other quarantined", counts)
	}
	var held []store.Quarantined
	db.View(context.Background(), func(s *store.Snap) error {
		_, err := s.Quarantine("demo", "oai_dc", 10, func(q store.Quarantined) error { held = append(held, q); return nil })
		return err
	})
	if len(held) != 1 || held[0].Identifier != over || !strings.Contains(held[0].Reason, "2048") {
		t.Fatalf("quarantine: %+v", held)
	}
}
