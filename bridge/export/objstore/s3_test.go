package objstore_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
	"github.com/rsbridge/rsbridge/bridge/export/objstore/objstoretest"
)

func openS3(t *testing.T, cfg objstore.S3Config) *objstore.S3 {
	t.Helper()
	s, err := objstore.OpenS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestS3(t *testing.T) {
	vgw := objstoretest.Versity(t)
	vgw.MakeBucket(t, "export")
	s := openS3(t, vgw.Config("export", "site/"))
	ctx := context.Background()
	if got, want := s.String(), "s3://export/site at "+vgw.Endpoint; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	meta := objstore.Meta{ContentType: "application/xml", CacheControl: "max-age=3600"}
	putAll(t, s, append(escapeKeys, "a-c", "a/b", ".well-known/resourcesync"), meta)

	for _, key := range escapeKeys {
		st, err := vgw.Client().StatObject(ctx, "export", "site/"+key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatalf("stat %q: %v", key, err)
		}
		if st.ContentType != meta.ContentType || st.Metadata.Get("Cache-Control") != meta.CacheControl {
			t.Errorf("%q: Content-Type %q, Cache-Control %q; want %+v", key, st.ContentType, st.Metadata.Get("Cache-Control"), meta)
		}
		if ce := st.Metadata.Get("Content-Encoding"); ce != "" {
			t.Errorf("%q: stored Content-Encoding %q, want none", key, ce)
		}
		if got, err := getString(ctx, s, key); err != nil || got != "body of "+key {
			t.Errorf("Get(%q) = %q, %v", key, got, err)
		}
		// The posix backend keeps the object as the file bucket/prefix/key.
		if _, err := os.Stat(filepath.Join(vgw.BucketDir("export"), "site", key)); err != nil {
			t.Errorf("%q not stored as a plain file: %v", key, err)
		}
	}
	// Anonymous path-style reads, with the headers set at Put.
	status, h, body := rawGet(t, vgw.Endpoint, "/export/site/"+objstoretest.EscapeKey("ü/é 名"))
	if status != http.StatusOK || body != "body of ü/é 名" || h.Get("Content-Type") != meta.ContentType ||
		h.Get("Cache-Control") != meta.CacheControl || h.Get("Content-Encoding") != "" {
		t.Errorf("anonymous GET: %d %q %v", status, body, h)
	}
	checkEscaping(t, vgw.Endpoint, "/export/site/", nil)

	if got, want := listKeys(t, s, "a"), []string{"a+b c%d", "a-c", "a/b"}; !slices.Equal(got, want) {
		t.Errorf("List(a) = %q, want %q (key order)", got, want)
	}
	if got, want := listKeys(t, s, "r/oai:x:1/"), []string{"r/oai:x:1/2"}; !slices.Equal(got, want) {
		t.Errorf("List(r/oai:x:1/) = %q, want %q", got, want)
	}
	if n := len(listKeys(t, s, "")); n != len(escapeKeys)+3 {
		t.Errorf("List() = %d keys, want %d", n, len(escapeKeys)+3)
	}

	for _, key := range []string{"a+b c%d", "never-there"} {
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q): %v", key, err)
		}
	}
	if _, err := getString(ctx, s, "a+b c%d"); !isNotFound(err) || !strings.Contains(err.Error(), "a+b c%d") {
		t.Errorf("Get after Delete: %v, want ErrNotFound naming the key", err)
	}
	if err := s.Put(ctx, "../x", strings.NewReader(""), 0, meta); !strings.Contains(fmt.Sprint(err), "invalid object key") {
		t.Errorf("Put(../x) = %v", err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Error(err)
	}
}

// TestS3Large uploads more than one part (16 MiB) from a reader that is
// neither an io.ReaderAt nor an io.Seeker.
func TestS3Large(t *testing.T) {
	vgw := objstoretest.Versity(t)
	vgw.MakeBucket(t, "big")
	s := openS3(t, vgw.Config("big", ""))
	data := bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16)
	ctx := context.Background()
	if err := s.Put(ctx, "dump/part1.zip", io.MultiReader(bytes.NewReader(data)), int64(len(data)), objstore.Meta{ContentType: "application/zip"}); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Get(ctx, "dump/part1.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v; want %d", len(got), err, len(data))
	}
	// A body shorter than size fails at once, not after minio-go's retries.
	for _, r := range []io.Reader{strings.NewReader("abc"), io.MultiReader(strings.NewReader("abc"))} {
		start := time.Now()
		err := s.Put(ctx, "short", r, 4, objstore.Meta{})
		if err == nil || !strings.Contains(err.Error(), "body is 3 bytes") || time.Since(start) > time.Second {
			t.Errorf("Put of 3 bytes with size 4 = %v after %v, want a prompt size error", err, time.Since(start))
		}
	}
}

// TestS3ConcurrentPuts runs the exporter's pool size of writers through the
// counting proxy.
func TestS3ConcurrentPuts(t *testing.T) {
	vgw := objstoretest.Versity(t)
	vgw.MakeBucket(t, "conc")
	proxy := vgw.Proxy(t)
	cfg := vgw.Config("conc", "")
	cfg.Endpoint = proxy.URL
	s := openS3(t, cfg)
	proxy.Reset()
	const workers, each = 16, 40
	body := bytes.Repeat([]byte("<x/>"), 1024)
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("w%02d/o%03d", w, i)
				if err := s.Put(ctx, key, bytes.NewReader(body), int64(len(body)), objstore.Meta{ContentType: "application/xml"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d PUTs of %d bytes with %d workers in %v: %.0f PUT/s", workers*each, len(body), workers, elapsed, float64(workers*each)/elapsed.Seconds())
	if got := proxy.Count(http.MethodPut); got != workers*each {
		t.Errorf("proxy counted %d PUTs, want %d (counts %v)", got, workers*each, proxy.Counts())
	}
	if n := len(listKeys(t, s, "")); n != workers*each {
		t.Errorf("listed %d objects, want %d", n, workers*each)
	}
}

func TestOpenS3Errors(t *testing.T) {
	vgw := objstoretest.Versity(t)
	vgw.MakeBucket(t, "exists")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wrongSecret := vgw.Config("exists", "")
	wrongSecret.Keys.SecretKey = "not-the-secret"
	badPrefix := vgw.Config("exists", "a/../b")
	userinfo := vgw.Config("exists", "")
	userinfo.Endpoint = strings.Replace(vgw.Endpoint, "http://", "http://user:hunter2@", 1)
	withPath := vgw.Config("exists", "")
	withPath.Endpoint += "/exists"
	for _, tc := range []struct {
		name string
		cfg  objstore.S3Config
		want string
	}{
		{"missing bucket", vgw.Config("nope", ""), `bucket "nope" does not exist: create it`},
		{"wrong secret", wrongSecret, "check that the endpoint is reachable and the credentials"},
		{"bad prefix", badPrefix, `has a ".." segment`},
		{"userinfo", userinfo, "must not carry credentials"},
		{"path", withPath, "scheme and host only"},
	} {
		_, err := objstore.OpenS3(ctx, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: OpenS3 = %v, want an error containing %q", tc.name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "not-the-secret") || strings.Contains(err.Error(), "hunter2") ||
			strings.Contains(err.Error(), vgw.SecretKey) {
			t.Errorf("%s: error shows a secret: %v", tc.name, err)
		}
	}
	cfg := vgw.Config("exists", "p")
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%+v", *cfg.Keys), fmt.Sprintf("%#v", *cfg.Keys)} {
		if strings.Contains(s, vgw.SecretKey) {
			t.Errorf("formatted config shows the secret: %s", s)
		}
	}
}
