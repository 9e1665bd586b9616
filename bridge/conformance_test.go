package bridge

import (
	"bytes"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rsbridge/rsbridge/config"
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
	cfg, err := config.Parse(strings.NewReader("base_url: http://rs.test\nrepositories:\n  - name: demo\n    base_url: http://oai.test/oai\n    metadata_prefixes: [oai_dc]\n"))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
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
	if doc.MD.Capability != changeNotification || doc.MD.From.IsZero() || !doc.MD.Until.Equal(doc.MD.From) || len(doc.Entries) != 0 {
		t.Errorf("empty notification: %+v, %d entries (CN-008: from and until)", doc.MD, len(doc.Entries))
	}
	validateXSD(t, "channel", b)
	home := httptestGet(t, mustServer(t, cfg, db, ServerOptions{}).Handler(), "/")
	if strings.Contains(home, `rel="resourcesync"`) {
		t.Errorf("the home page links rel=resourcesync")
	}
}
