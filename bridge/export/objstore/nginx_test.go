package objstore_test

import (
	"net/http"
	"testing"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/export/objstore/objstoretest"
)

// TestNginxServesDir fetches a Dir's objects through nginx with the URL
// escapings the exporter might write (see escapeCases for the facts).
func TestNginxServesDir(t *testing.T) {
	root := t.TempDir()
	d, err := objstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	putAll(t, d, append(escapeKeys, "page.html", "dump.zip", ".well-known/resourcesync"), objstore.Meta{})
	base := objstoretest.Nginx(t, root, "")

	checkEscaping(t, base, "/", nil)
	for _, tc := range []struct{ path, ctype string }{
		{"/r/oai:x:1/2", "application/xml"},
		{"/page.html", "text/html"},
		{"/dump.zip", "application/zip"},
		{"/.well-known/resourcesync", "application/xml"},
	} {
		status, h, _ := rawGet(t, base, tc.path)
		if status != http.StatusOK || h.Get("Content-Type") != tc.ctype {
			t.Errorf("GET %s: %d %q, want 200 %q", tc.path, status, h.Get("Content-Type"), tc.ctype)
		}
	}
	if key := "ü/é 名"; base+"/"+objstoretest.EscapeKey(key) != base+"/%C3%BC/%C3%A9%20%E5%90%8D" {
		t.Errorf("EscapeKey(%q) = %q", key, objstoretest.EscapeKey(key))
	}
}

// TestNginxHidesStaging: nginx serves dot directories (it must serve
// .well-known), so the staging directory needs its own location.
func TestNginxHidesStaging(t *testing.T) {
	root := t.TempDir()
	d, err := objstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	lock := "/" + objstore.StagingDir + "/.lock"
	if status, _, _ := rawGet(t, objstoretest.Nginx(t, root, ""), lock); status != http.StatusOK {
		t.Errorf("GET %s without the location: %d, want 200 (nginx serves it)", lock, status)
	}
	hide := "location ^~ /" + objstore.StagingDir + "/ { return 404; }"
	if status, _, _ := rawGet(t, objstoretest.Nginx(t, root, hide), lock); status != http.StatusNotFound {
		t.Errorf("GET %s with %q: %d, want 404", lock, hide, status)
	}
}
