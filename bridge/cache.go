package bridge

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
)

// Documents computed once (issue 11): a Resource List page of 50,000 entries
// is 30 MB of XML and takes a third of a second of CPU; closed Change Lists
// never change; Resource List Indexes count every record. So large documents
// are rendered once per state of the store into files under
// data_dir/cache (plain and gzip), and served from there with sendfile,
// Range and ETag, until the data they show changes: their keys hold the
// (repository, prefix) Version, which every record write moves, and, for
// Change Lists, the period slot (an open list closes when its period ends).
// Files rather than memory: the operating system's page cache holds the hot
// ones and the Go heap stays small; the directory is bounded
// (server.cache_bytes), least recently used first out, and emptied at start.

// docCache is the cache; nil disables it.
type docCache struct {
	dir   string
	max   int64
	log   *slog.Logger
	space func() error // refuses new files on a (nearly) full disk

	mu      sync.Mutex
	entries map[string]*cached
	size    int64
	flight  map[string]*render
}

// cached is one document on disk.
type cached struct {
	plain, gz string // file paths
	size      int64  // both files
	etag      string
	modified  time.Time
	control   string // Cache-Control
	used      time.Time
}

// render is a build in progress, which later requests for the key wait for.
type render struct {
	done chan struct{}
	e    *cached
	err  error
}

func newDocCache(dir string, max int64, log *slog.Logger, space func() error) (*docCache, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("document cache %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("document cache %s: %w", dir, err)
	}
	return &docCache{dir: dir, max: max, log: log, space: space, entries: map[string]*cached{}, flight: map[string]*render{}}, nil
}

// get returns the document of key, rendering it with write when it is not
// cached (write gets the file to fill; concurrent requests for one key render
// it once). ok is false when the document cannot be cached (the disk is
// nearly full, the cache is off): the caller then streams it as before.
func (c *docCache) get(key, control string, modified time.Time, write func(io.Writer) error) (e *cached, ok bool, err error) {
	if c == nil {
		return nil, false, nil
	}
	c.mu.Lock()
	if e := c.entries[key]; e != nil {
		e.used = time.Now()
		c.mu.Unlock()
		return e, true, nil
	}
	if f := c.flight[key]; f != nil {
		c.mu.Unlock()
		<-f.done
		return f.e, f.err == nil && f.e != nil, f.err
	}
	if c.space() != nil {
		c.mu.Unlock()
		return nil, false, nil
	}
	f := &render{done: make(chan struct{})}
	c.flight[key] = f
	c.mu.Unlock()

	f.e, f.err = c.build(key, control, modified, write)
	c.mu.Lock()
	delete(c.flight, key)
	if f.err == nil {
		c.entries[key] = f.e
		c.size += f.e.size
		c.evict()
	}
	c.mu.Unlock()
	close(f.done)
	return f.e, f.err == nil, f.err
}

// build renders a document into its two files.
func (c *docCache) build(key, control string, modified time.Time, write func(io.Writer) error) (*cached, error) {
	sum := sha256.Sum256([]byte(key))
	name := hex.EncodeToString(sum[:12])
	e := &cached{plain: filepath.Join(c.dir, name+".xml"), gz: filepath.Join(c.dir, name+".xml.gz"),
		etag: `"` + hex.EncodeToString(sum[12:24]) + `"`, modified: modified, control: control, used: time.Now()}
	plain, err := os.Create(e.plain)
	if err != nil {
		return nil, err
	}
	gzf, err := os.Create(e.gz)
	if err != nil {
		plain.Close()
		os.Remove(e.plain)
		return nil, err
	}
	// The gzip copy compresses on another core while the document renders:
	// compression was 40 % of the time to first byte of a 50,000-entry
	// Resource List.
	zw, _ := gzip.NewWriterLevel(gzf, gzip.BestSpeed)
	aw := newAsyncWriter(zw, 256<<10)
	err = write(io.MultiWriter(plain, aw))
	if cerr := aw.Close(); err == nil {
		err = cerr
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	for _, f := range []*os.File{plain, gzf} {
		if st, serr := f.Stat(); serr == nil {
			e.size += st.Size()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		os.Remove(e.plain)
		os.Remove(e.gz)
		return nil, err
	}
	return e, nil
}

// asyncWriter passes what is written to w from a goroutine of its own, in
// blocks (three, reused), so that writing to w overlaps the writer's work.
// Close must be called: it writes the rest, stops the goroutine and returns
// w's first error (after one, the rest is dropped).
type asyncWriter struct {
	buf        []byte
	full, free chan []byte
	done       chan error
}

func newAsyncWriter(w io.Writer, block int) *asyncWriter {
	a := &asyncWriter{buf: make([]byte, 0, block), full: make(chan []byte, 2), free: make(chan []byte, 3), done: make(chan error, 1)}
	for range 2 {
		a.free <- make([]byte, 0, block)
	}
	go func() {
		var err error
		for b := range a.full {
			if err == nil {
				_, err = w.Write(b)
			}
			a.free <- b[:0]
		}
		a.done <- err
	}()
	return a
}

func (a *asyncWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(a.buf) == cap(a.buf) {
			a.full <- a.buf
			a.buf = <-a.free
		}
		k := copy(a.buf[len(a.buf):cap(a.buf)], p)
		a.buf, p = a.buf[:len(a.buf)+k], p[k:]
	}
	return n, nil
}

func (a *asyncWriter) Close() error {
	if len(a.buf) > 0 {
		a.full <- a.buf
	}
	close(a.full)
	return <-a.done
}

// evict removes the least recently used documents beyond the budget; c.mu is
// held. A file being sent is still readable after its name is removed.
func (c *docCache) evict() {
	for c.size > c.max && len(c.entries) > 0 {
		var oldKey string
		var old *cached
		for k, e := range c.entries {
			if old == nil || e.used.Before(old.used) {
				oldKey, old = k, e
			}
		}
		delete(c.entries, oldKey)
		c.size -= old.size
		os.Remove(old.plain)
		os.Remove(old.gz)
	}
}

// serve sends a cached document: its gzip file to clients that ask for gzip
// (the compression middleware then passes it through), the plain file to the
// others, with ETag, Last-Modified, Range and HEAD by http.ServeContent.
func (e *cached) serve(w http.ResponseWriter, r *http.Request) error {
	path, etag := e.plain, e.etag
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		path, etag = e.gz, e.etag[:len(e.etag)-1]+`-gzip"`
		w.Header().Set("Content-Encoding", "gzip")
	}
	f, err := os.Open(path)
	if err != nil {
		w.Header().Del("Content-Encoding")
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", source.XMLType)
	w.Header().Set("Cache-Control", e.control)
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, "", e.modified, f)
	return nil
}
