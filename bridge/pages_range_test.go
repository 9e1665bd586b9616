package bridge

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// TestIndexPagesAreKeyRanges: records created and deleted while a destination
// walks a Resource List Index move no live record off every page and put none
// on two (issue 16, finding 3: a page was "the next page_limit records after
// start", so one creation inside page 1 pushed its last record past its end
// while page 2 still started where it did).
func TestIndexPagesAreKeyRanges(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 30, SetCount: -1}, 10, time.Hour)
	s.harvest()
	hc := &http.Client{}
	index, err := getDoc(context.Background(), hc, s.srv.URL+"/demo/oai_dc/all/resourcelist.xml")
	if err != nil {
		t.Fatal(err)
	}
	if !index.Index || len(index.Entries) != 3 || !index.MD.Completed.IsZero() || index.MD.At.IsZero() {
		t.Fatalf("index: %d pages, md %+v (want 3 pages, an at and no completed)", len(index.Entries), index.MD)
	}
	if u := index.Entries[0].Loc; strings.Contains(u, "start=") || !strings.Contains(u, "end=") {
		t.Errorf("the first page has no start and an end: %s", u)
	}
	if u := index.Entries[2].Loc; !strings.Contains(u, "start=") || strings.Contains(u, "end=") {
		t.Errorf("the last page has a start and no end: %s", u)
	}
	docs := map[string][]byte{}
	if docs["index"], err = churnGet(context.Background(), hc, s.srv.URL+"/demo/oai_dc/all/resourcelist.xml"); err != nil {
		t.Fatal(err)
	}
	walk := func() map[string]int {
		seen := map[string]int{}
		for _, e := range index.Entries {
			b, err := churnGet(context.Background(), hc, e.Loc)
			if err != nil {
				t.Fatal(err)
			}
			docs[e.Loc] = b
			page, err := rsync.Parse(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if page.MD.At.IsZero() || page.MD.Completed.Before(page.MD.At) {
				t.Errorf("page %s: at %v completed %v", e.Loc, page.MD.At, page.MD.Completed)
			}
			for _, u := range page.Entries {
				seen[u.Loc]++
			}
		}
		return seen
	}
	// item-30 sorts between item-3 and item-4: inside the first page.
	s.advance(time.Minute)
	s.up.Add(s.clock.Now())
	s.harvest()
	seen := walk()
	for loc := range s.expected("oai_dc", store.AllSet) {
		if seen[loc] != 1 {
			t.Errorf("after a creation inside page 1, %s is on %d pages of the index read before", loc, seen[loc])
		}
	}
	// A deletion inside page 1 repeats nothing.
	s.advance(time.Minute)
	s.up.Delete(1, s.clock.Now())
	s.harvest()
	seen = walk()
	want := s.expected("oai_dc", store.AllSet)
	for loc, n := range seen {
		if _, live := want[loc]; !live || n != 1 {
			t.Errorf("after a deletion, %s is on %d pages (live %v)", loc, n, live)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("the pages list %d records, %d are live", len(seen), len(want))
	}
	validateDocs(t, docs)
}

// TestPagesBoundedByBytes: records whose entries are large (a long landing
// page) are cut into pages by bytes, no document passes 50 MiB, and a range
// that grew past what one sitemap holds after the index was read answers 409
// with the way out (issue 16, finding 4: only the entry count was checked).
func TestPagesBoundedByBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 150 MiB of Resource List pages")
	}
	db := openStore(t, store.Options{InMemory: true})
	cfg := demoConfig(t, "base_url: http://rs.test\nrepositories:\n  - name: demo\n    base_url: http://oai.test/oai\n    metadata_prefixes: [oai_dc]\n")
	landing := "http://landing.test/" + strings.Repeat("a", 700<<10) // about 700 KiB per entry (Badger holds values up to 1 MiB)
	put := func(ids ...string) {
		t.Helper()
		b, err := db.NewBatch("demo", "oai_dc")
		if err != nil {
			t.Fatal(err)
		}
		defer b.Discard()
		for _, id := range ids {
			rec := &store.Record{Identifier: id, Landing: landing, Length: 4, MD5: strings.Repeat("0", 32), SHA256: strings.Repeat("0", 64)}
			if err := b.Apply(rec, []byte("<x/>"), &store.Event{Identifier: id, Change: store.Created}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i := range 100 {
		ids = append(ids, fmt.Sprintf("id-%03d", 2*i))
	}
	put(ids...)
	srv := httptest.NewServer(mustServer(t, cfg, db, ServerOptions{}).Handler())
	defer srv.Close()
	hc := &http.Client{}
	rl := srv.URL + "/demo/oai_dc/all/resourcelist.xml"
	index, err := getDoc(context.Background(), hc, rl)
	if err != nil {
		t.Fatal(err)
	}
	if !index.Index || len(index.Entries) != 2 {
		t.Fatalf("100 entries of 700 KiB: want an index of 2 pages, got index=%v with %d entries", index.Index, len(index.Entries))
	}
	total := 0
	for _, e := range index.Entries {
		b, err := churnGet(context.Background(), hc, strings.Replace(e.Loc, "http://rs.test", srv.URL, 1))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > rsync.MaxBytes*9/10+source.DocRoom {
			t.Errorf("%s: %d bytes, more than the cut (45 MiB)", e.Loc, len(b))
		}
		total += strings.Count(string(b), "<url>")
	}
	if total != 100 {
		t.Errorf("the pages list %d records, want 100", total)
	}
	// Fill the first page's range past 50 MiB: it answers 409, and the
	// index read again cuts it anew.
	var more []string
	for i := range 10 {
		more = append(more, fmt.Sprintf("id-%03d", 2*i+1))
	}
	put(more...)
	first := strings.Replace(index.Entries[0].Loc, "http://rs.test", srv.URL, 1)
	resp, err := hc.Get(first)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a page range holding over 50 MiB: %d, want 409", resp.StatusCode)
	}
	if index, err = getDoc(context.Background(), hc, rl); err != nil || len(index.Entries) != 2 {
		t.Fatalf("index read again: %v, %d pages", err, len(index.Entries))
	}
	total = 0
	for _, e := range index.Entries {
		page, err := getDoc(context.Background(), hc, strings.Replace(e.Loc, "http://rs.test", srv.URL, 1))
		if err != nil {
			t.Fatal(err)
		}
		total += len(page.Entries)
	}
	if total != 110 {
		t.Errorf("after re-indexing the pages list %d records, want 110", total)
	}
}
