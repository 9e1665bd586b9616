package bridge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// TestEmptyChannelIsADocument: a change-notification channel with nothing
// sent yet answers an empty notification document, which XML clients read,
// instead of an empty body, on which xmllint, ElementTree, resync and
// go-resourcesync all fail (issue 16, finding 5). The home page carries no
// rel="resourcesync" link: no Capability List covers it (RS-044, RS-046).
func TestEmptyChannelIsADocument(t *testing.T) {
	db := openStore(t, store.Options{InMemory: true})
	cfg := demoConfig(t, "base_url: http://rs.test\nrepositories:\n  - name: demo\n    base_url: http://oai.test/oai\n    metadata_prefixes: [oai_dc]\n")
	if !cfg.Notification.On() {
		t.Fatal("notification is on by default")
	}
	srv := httptest.NewServer(mustServer(t, cfg, db, ServerOptions{}).Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/demo/oai_dc/all/changenotification.xml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml" || !strings.Contains(resp.Header.Get("Link"), `rel="self"`) {
		t.Fatalf("channel: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Link"))
	}
	doc, err := rsync.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the empty channel is not a document: %v\n%s", err, b)
	}
	if doc.MD.Capability != source.ChangeNotification || doc.MD.From.IsZero() || !doc.MD.Until.Equal(doc.MD.From) || len(doc.Entries) != 0 {
		t.Errorf("empty notification: %+v, %d entries (CN-008: from and until)", doc.MD, len(doc.Entries))
	}
	validateXSD(t, "channel", b)
	home := httptestGet(t, mustServer(t, cfg, db, ServerOptions{}).Handler(), "/")
	if strings.Contains(home, `rel="resourcesync"`) {
		t.Errorf("the home page links rel=resourcesync")
	}
}

// demoConfig parses and validates a configuration.
func demoConfig(t *testing.T, y string) *config.Config {
	t.Helper()
	cfg, err := config.ParseAndValidate(strings.NewReader(y))
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return cfg
}

// TestEmptyOpenListKeepsItsURL: an open Change List with no entries answers
// at the URL the index gave for as long as it stays open, and gets its until
// when it closes (issue 16, finding 2: at the end of every quiet period its
// URL answered 404 and the index named another list with the same from).
func TestEmptyOpenListKeepsItsURL(t *testing.T) {
	s := newFixture(t, oaiserver.Options{Records: 5, SetCount: -1}, 100, time.Hour)
	s.harvest()
	cli := s.srv.URL + "/demo/oai_dc/all/changelist.xml"
	openList := func() (string, *rsync.MD) {
		t.Helper()
		idx, err := getDoc(context.Background(), http.DefaultClient, cli)
		if err != nil {
			t.Fatal(err)
		}
		last := idx.Entries[len(idx.Entries)-1]
		return last.Loc, last.MD
	}
	s.advance(2 * time.Hour) // the harvest's list closes; the next one is open and empty
	loc, md := openList()
	if !md.Until.IsZero() {
		t.Fatalf("the last list is closed: %+v", md)
	}
	for range 3 { // quiet periods
		s.advance(time.Hour)
		if _, err := getDoc(context.Background(), http.DefaultClient, loc); err != nil {
			t.Fatalf("the empty open list after a quiet period: %v", err)
		}
		if l, m := openList(); l != loc || !m.From.Equal(md.From) {
			t.Fatalf("the index names %s from %s, it named %s from %s", l, m.From, loc, md.From)
		}
	}
	// A change goes to that list; it closes at the end of the change's period.
	s.up.Update(1, s.clock.Now())
	s.harvest()
	s.advance(time.Hour)
	l, err := getDoc(context.Background(), http.DefaultClient, loc)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 1 || l.MD.Until.IsZero() || !l.MD.From.Equal(md.From) {
		t.Fatalf("the list after its change: %d entries, %+v", len(l.Entries), l.MD)
	}
}
