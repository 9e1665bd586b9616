// Package objstore is where `rsbridge export` writes a static ResourceSync
// tree: a local directory served by a static web server (Dir) or an
// S3-compatible bucket (S3).
//
// Keys are '/'-separated relative paths, already percent-decoded: exactly
// what a static server maps a URL path to. To link to a key, escape each
// segment with url.PathEscape and join them with '/'. nginx (serving a Dir)
// and versitygw (serving a bucket path-style, http://host/bucket/key) both
// percent-decode the URL path once and map it to the key: '+' stays '+' (it
// is not a space), %2F is '/' like a raw '/', raw UTF-8 and raw sub-delims
// (: ; = & , @ $ ! ' ( ) *) work as well as their escapes; '?', '#', '%' and
// ' ' must be escaped. The tests (http_test.go) check all of this.
//
// Both targets accept the same keys (ValidKey), so a tree exported to a
// directory can be moved to a bucket, and a bucket kept on a directory-backed
// S3 server (versitygw posix) works.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Meta is what a static server sends with an object.
type Meta struct {
	ContentType  string
	CacheControl string
}

// Object is one listed object.
type Object struct {
	Key  string
	Size int64
}

var (
	// ErrNotFound is returned (wrapped, with the target and key) by Get of
	// a missing key.
	ErrNotFound = errors.New("object not found")
	// ErrInvalidKey is wrapped by every *KeyError: the exporter counts such
	// objects as unexportable instead of failing the export.
	ErrInvalidKey = errors.New("invalid object key")
	// ErrCollision is returned (wrapped) when a Dir Put would need a file
	// where a directory is, or the other way round ("a" and "a/b").
	ErrCollision = errors.New("object key collides with a directory")
)

// Store is an export target.
type Store interface {
	// Put writes an object whole: readers see the previous object or this
	// one, never part of it. size is the exact length of r.
	// For Dir the object becomes visible only at the next Flush; for S3 at
	// once.
	Put(ctx context.Context, key string, r io.Reader, size int64, m Meta) error
	// Delete removes an object; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// Get reads an object (ErrNotFound when missing).
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List calls fn for every object whose key starts with prefix, in key
	// (byte) order. An error from fn stops the listing and is returned.
	List(ctx context.Context, prefix string, fn func(Object) error) error
	// Flush makes every Put and Delete so far visible (in the order they
	// were made) and durable. The exporter calls it between stages, so an
	// object is published before anything linking to it.
	Flush(ctx context.Context) error
	// String names the target for logs and errors, never with a secret.
	String() string
	Close() error
}

// Limits on keys. They are the usual filesystem limits (NAME_MAX, and a
// PATH_MAX with room for the export root) and S3's 1024-byte key limit.
const (
	MaxKeyLen     = 1024
	MaxSegmentLen = 255
)

// StagingDir is Dir's staging directory under the root; no key may start
// with it. A static server should not serve it (nginx:
// location ^~ /.rsbridge-tmp/ { return 404; }): it holds objects not yet
// published.
const StagingDir = ".rsbridge-tmp"

// KeyError says why a key cannot be stored. It wraps ErrInvalidKey.
type KeyError struct {
	Key    string
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("invalid object key %q: %s", e.Key, e.Reason)
}

// Unwrap lets errors.Is(err, ErrInvalidKey) match.
func (e *KeyError) Unwrap() error { return ErrInvalidKey }

// ValidKey reports why key cannot be stored in a Dir or an S3 bucket, or nil.
// A valid key is non-empty valid UTF-8 of at most MaxKeyLen bytes with no
// NUL, does not start with '/' or ".rsbridge-tmp", and has no empty, "." or
// ".." segment and no segment longer than MaxSegmentLen bytes.
func ValidKey(key string) error {
	bad := func(reason string) error { return &KeyError{Key: key, Reason: reason} }
	switch {
	case key == "":
		return bad("empty")
	case len(key) > MaxKeyLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxKeyLen))
	case !utf8.ValidString(key):
		return bad("not valid UTF-8")
	case strings.IndexByte(key, 0) >= 0:
		return bad("contains NUL")
	case key[0] == '/':
		return bad("starts with '/'")
	case strings.HasPrefix(key, StagingDir):
		return bad("starts with " + StagingDir + ", the staging directory of a directory target")
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return bad("has an empty segment (\"//\" or a trailing '/')")
		case seg == "." || seg == "..":
			return bad("has a \"" + seg + "\" segment")
		case len(seg) > MaxSegmentLen:
			return bad(fmt.Sprintf("has a segment longer than %d bytes", MaxSegmentLen))
		}
	}
	return nil
}

// ctxReader fails a copy as soon as ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
