package objstore

// Why minio-go and not aws-sdk-go-v2: minio-go/v7 is one module (the AWS SDK
// is a dozen, versioned apart), talks to any S3-compatible server
// (versitygw, MinIO, Ceph, Garage, AWS) with path-style addressing, streams
// multipart uploads of large or unknown sizes without the caller buffering
// them, and carries the usual credentials chain (environment, shared
// credentials file, instance role).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3 target is.
type S3Config struct {
	// Endpoint is the server's URL: scheme and host only, e.g.
	// "http://127.0.0.1:7070" or "https://s3.eu-central-1.amazonaws.com".
	Endpoint string
	Bucket   string
	// Prefix is prepended to every key, joined with '/'; may be empty.
	Prefix string
	// Region; empty lets the client ask the server (GetBucketLocation).
	Region string
	// VirtualHostStyle addresses the bucket as a host name
	// (bucket.s3.example.org). The default, path style (host/bucket/key),
	// works with every S3-compatible server and is what a reader fetching
	// the tree over plain HTTP uses. (A bool whose zero value is the usual
	// choice, rather than a PathStyle bool that would default to false.)
	VirtualHostStyle bool
	// Keys, when set, are used instead of the credentials chain: the
	// environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN,
	// then MINIO_ROOT_USER/MINIO_ROOT_PASSWORD), then the shared credentials
	// file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile
	// AWS_PROFILE or "default"), then an EC2/ECS/EKS instance role.
	Keys *Keys
}

// String names the target without secrets: "s3://bucket/prefix at endpoint".
func (c S3Config) String() string {
	s := "s3://" + c.Bucket
	if p := strings.Trim(c.Prefix, "/"); p != "" {
		s += "/" + p
	}
	ep := c.Endpoint
	if u, err := url.Parse(ep); err == nil && u.User != nil {
		u.User = nil
		ep = u.String()
	}
	return s + " at " + ep
}

// GoString keeps %#v from printing the secret key.
func (c S3Config) GoString() string { return "objstore.S3Config{" + c.String() + "}" }

// Keys are static S3 credentials. They never print: String and GoString
// redact them.
type Keys struct {
	AccessKey    string
	SecretKey    string
	SessionToken string
}

func (k Keys) String() string { return "objstore.Keys{" + k.AccessKey + ", redacted}" }

// GoString redacts like String.
func (k Keys) GoString() string { return k.String() }

// S3 is a Store on an S3-compatible bucket. A Put is visible when it returns;
// Flush has nothing to do. S3 is safe for concurrent use.
//
// Meta.ContentType and Meta.CacheControl are stored with the object and sent
// back by the server on GET.
type S3 struct {
	client    *minio.Client
	transport *http.Transport
	bucket    string
	prefix    string // "" or "p/" (with the slash)
	name      string
}

// OpenS3 connects to the bucket and checks that it exists and that the
// credentials may see it.
func OpenS3(ctx context.Context, cfg S3Config) (*S3, error) {
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		if err := ValidKey(prefix); err != nil {
			return nil, fmt.Errorf("%s: prefix: %w", cfg, err)
		}
		prefix += "/"
	}
	u, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg, err)
	}
	secure := u.Scheme == "https"
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg, err)
	}
	opts := &minio.Options{
		Creds:        credentialsFor(cfg.Keys),
		Secure:       secure,
		Transport:    tr,
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupPath,
	}
	if cfg.VirtualHostStyle {
		opts.BucketLookup = minio.BucketLookupDNS
	}
	client, err := minio.New(u.Host, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg, err)
	}
	s := &S3{client: client, transport: tr, bucket: cfg.Bucket, prefix: prefix, name: cfg.String()}
	ok, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		tr.CloseIdleConnections()
		return nil, fmt.Errorf("%s: check bucket: %w (check that the endpoint is reachable and the credentials "+
			"in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE, may read the bucket)", s, err)
	}
	if !ok {
		tr.CloseIdleConnections()
		return nil, fmt.Errorf("%s: bucket %q does not exist: create it (and allow anonymous reads if the tree is served from it) or fix the bucket name", s, cfg.Bucket)
	}
	return s, nil
}

func parseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return nil, errors.New("endpoint is not a URL; want e.g. https://s3.example.org or http://127.0.0.1:7070")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("endpoint must start with http:// or https://")
	case u.User != nil:
		return nil, errors.New("endpoint must not carry credentials; set them in the environment or the shared credentials file")
	case u.Host == "":
		return nil, errors.New("endpoint has no host")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return nil, errors.New("endpoint must be scheme and host only; put the bucket in Bucket and any key prefix in Prefix")
	}
	return u, nil
}

func credentialsFor(k *Keys) *credentials.Credentials {
	if k != nil {
		return credentials.NewStaticV4(k.AccessKey, k.SecretKey, k.SessionToken)
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
}

// String names the target: "s3://bucket/prefix at endpoint".
func (s *S3) String() string { return s.name }

func (s *S3) object(key string) string { return s.prefix + key }

// Put uploads the object with its Content-Type and Cache-Control. Objects up
// to partSize go in one PUT (every document: a sitemap holds at most 50 MiB),
// larger ones (dump packages) as a multipart upload of partSize parts.
//
// The upload carries a Content-MD5 and an unsigned payload instead of
// minio-go's default over plain http, the streaming (aws-chunked) signature:
// versitygw v1.8.0 stores "Content-Encoding: aws-chunked" from such uploads
// and sends it back on every GET, which would break readers. The Content-MD5
// makes minio-go hold up to partSize of r in memory unless r is an io.ReaderAt
// and io.Seeker (a *bytes.Reader or an *os.File), which it reads twice
// instead.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, m Meta) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("%s: put: %w", s, err)
	}
	if size < 0 {
		return fmt.Errorf("%s: put %q: negative size %d", s, key, size)
	}
	r, err := exactly(r, size)
	if err != nil {
		return fmt.Errorf("%s: put %q: %w", s, key, err)
	}
	_, err = s.client.PutObject(ctx, s.bucket, s.object(key), r, size, minio.PutObjectOptions{
		ContentType:          m.ContentType,
		CacheControl:         m.CacheControl,
		SendContentMd5:       true,
		DisableContentSha256: true,
		PartSize:             partSize,
	})
	if err != nil {
		return fmt.Errorf("%s: put %q: %w", s, key, err)
	}
	return nil
}

// exactly checks that r holds size bytes: up front when r can seek (minio-go
// then reads it in place), else as it is read, where a short body fails and
// a longer one is cut at size (minio-go reads no further). A short body must
// fail at once: minio-go would retry the request ten times over seconds.
// partSize is the largest object sent in one PUT, and the part size of
// larger ones.
const partSize = 64 << 20

func exactly(r io.Reader, size int64) (io.Reader, error) {
	_, isReaderAt := r.(io.ReaderAt)
	if s, ok := r.(io.Seeker); ok && isReaderAt {
		cur, err := s.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, err
		}
		end, err := s.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, err
		}
		if _, err := s.Seek(cur, io.SeekStart); err != nil {
			return nil, err
		}
		if end-cur != size {
			return nil, fmt.Errorf("body is %d bytes, not the size %d given", end-cur, size)
		}
		return r, nil
	}
	return &exactReader{r: r, left: size, size: size}, nil
}

// exactReader fails with an error other than io.EOF (which minio-go would
// take for the end of a body it then sends and retries) if r is shorter than
// size, and reports a longer r if it is read past size.
type exactReader struct {
	r          io.Reader
	left, size int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, e.probeEnd()
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, fmt.Errorf("body is %d bytes, shorter than the size %d given", e.size-e.left, e.size)
	}
	return n, err
}

// probeEnd reads one byte past size: io.EOF if there is none.
func (e *exactReader) probeEnd() error {
	var b [1]byte
	for {
		n, err := e.r.Read(b[:])
		if n > 0 {
			return fmt.Errorf("body is longer than the size %d given", e.size)
		}
		if err != nil {
			return err
		}
	}
}

// Delete removes the object; S3 does not report a missing one.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("%s: delete: %w", s, err)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.object(key), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("%s: delete %q: %w", s, key, err)
	}
	return nil
}

// Get reads the object (ErrNotFound when missing).
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, fmt.Errorf("%s: get: %w", s, err)
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.object(key), minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat() // sends the GET, so a missing key fails here
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		if isNotFound(err) {
			err = ErrNotFound
		}
		return nil, fmt.Errorf("%s: get %q: %w", s, key, err)
	}
	return obj, nil
}

func isNotFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket
}

// List calls fn for every object whose key starts with prefix, in key order
// (S3 lists in UTF-8 byte order). Keys are returned without the configured
// Prefix; directory markers (keys ending in '/') are skipped.
func (s *S3) List(ctx context.Context, prefix string, fn func(Object) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's listing goroutine if fn fails
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.object(prefix), Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("%s: list %q: %w", s, prefix, o.Err)
		}
		key, ok := strings.CutPrefix(o.Key, s.prefix)
		if !ok || key == "" || strings.HasSuffix(key, "/") {
			continue
		}
		if err := fn(Object{Key: key, Size: o.Size}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: list %q: %w", s, prefix, err)
	}
	return nil
}

// Flush does nothing: every Put and Delete was visible when it returned.
func (s *S3) Flush(ctx context.Context) error { return ctx.Err() }

// Close drops idle connections.
func (s *S3) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}
