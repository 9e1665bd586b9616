package objstoretest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"golang.org/x/sys/unix"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
)

// VersityInstall is how to install the versitygw binary the tests run.
const VersityInstall = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Server is a running versitygw with the posix backend, in single-account
// mode with the root keys below, listening on 127.0.0.1.
//
// Objects live as plain files: bucket B, key K is the file Root/B/K. Their
// metadata (Content-Type, Cache-Control, ETag) is kept in user.* extended
// attributes, or, on a filesystem without them, in files under Sidecar.
type Server struct {
	Endpoint  string // "http://127.0.0.1:PORT"
	AccessKey string
	SecretKey string
	Root      string // the posix backend's directory: one subdirectory per bucket
	Sidecar   string // metadata directory (--sidecar) when Root has no xattrs, else ""
	client    *minio.Client
}

// Versity starts versitygw for the test and stops it when the test ends.
// The binary is looked up on PATH, then in $(go env GOPATH)/bin.
func Versity(t testing.TB) *Server {
	t.Helper()
	bin := goBin("versitygw")
	if bin == "" {
		missing(t, "versitygw", VersityInstall)
	}
	s := &Server{AccessKey: "rsbridge-test", SecretKey: "rsbridge-test-secret", Root: t.TempDir()}
	// versitygw refuses to start (xattr check failed) on a filesystem
	// without user xattrs, unless metadata goes to a sidecar directory.
	if err := unix.Setxattr(s.Root, "user.rsbridge-probe", []byte("1"), 0); err != nil {
		s.Sidecar = t.TempDir()
	}
	var last error
	for range 3 {
		addr := freeAddr(t)
		args := []string{"--quiet", "--port", addr, "posix"}
		if s.Sidecar != "" {
			args = append(args, "--sidecar", s.Sidecar)
		}
		cmd := exec.Command(bin, append(args, s.Root)...)
		// Keys by environment, so they do not show in ps.
		cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
		p, err := startProc(cmd)
		if err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		s.Endpoint = "http://" + addr
		if last = p.waitHTTP(s.Endpoint+"/", 15*time.Second); last == nil {
			t.Cleanup(p.stop)
			break
		}
		p.stop()
		if !p.addrInUse() {
			break
		}
	}
	if last != nil {
		t.Fatalf("versitygw: %v", last)
	}
	client, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		BucketLookup: minio.BucketLookupPath,
		Region:       "us-east-1",
	})
	if err != nil {
		t.Fatalf("versitygw client: %v", err)
	}
	s.client = client
	return s
}

// Client is a minio-go client with the root keys, for checks the Store
// interface does not offer (StatObject, policies).
func (s *Server) Client() *minio.Client { return s.client }

// MakeBucket creates a bucket and lets anyone read its objects
// (s3:GetObject for Principal "*"), as a bucket the tree is served from
// must: readers GET http://HOST/BUCKET/KEY without credentials. Listing
// stays private.
func (s *Server) MakeBucket(t testing.TB, bucket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("versitygw: make bucket %s: %v", bucket, err)
	}
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",`+
		`"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/*"]}]}`, bucket)
	if err := s.client.SetBucketPolicy(ctx, bucket, policy); err != nil {
		t.Fatalf("versitygw: allow anonymous reads of %s: %v", bucket, err)
	}
}

// Config is an S3Config for bucket and key prefix on this server, with the
// root keys.
func (s *Server) Config(bucket, prefix string) objstore.S3Config {
	return objstore.S3Config{
		Endpoint: s.Endpoint,
		Bucket:   bucket,
		Prefix:   prefix,
		Region:   "us-east-1",
		Keys:     &objstore.Keys{AccessKey: s.AccessKey, SecretKey: s.SecretKey},
	}
}

// BucketDir is the directory holding bucket's objects.
func (s *Server) BucketDir(bucket string) string { return filepath.Join(s.Root, bucket) }

// ObjectURL is the anonymous, path-style URL of key in bucket:
// Endpoint/bucket/ each key segment escaped with url.PathEscape. versitygw
// decodes the path once, so '%2F' in it would also stand for '/', and '+'
// stays '+'.
func (s *Server) ObjectURL(bucket, key string) string {
	return s.Endpoint + "/" + bucket + "/" + EscapeKey(key)
}

// EscapeKey escapes each '/'-separated segment of key with url.PathEscape:
// the URL path a static server (nginx, versitygw) maps back to key.
func EscapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
