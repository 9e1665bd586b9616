package mirror

import (
	"bufio"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rsbridge/rsbridge/rsync"
)

// The copy: one file per resource below the directory, at a path made from
// its URI (host, then each path segment) by rsync.SafeName, so no URI can
// name a file outside the directory, and distinct URIs name distinct files.
// Files are written to a temporary file, synced and renamed into place; the
// state commits after them.

// maxSegment bounds one path element (file systems allow 255 bytes).
const maxSegment = 200

// Path is where the copy keeps a resource, relative to its directory: the
// host and each path segment of the URI, decoded and made safe, and the
// query, if any, added to the last one. It fails for URIs that are not
// absolute http(s) URLs.
func Path(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("not an absolute http(s) URI: %q", uri)
	}
	parts := []string{seg(strings.ToLower(u.Host))}
	raw := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	for i, r := range raw {
		s, err := url.PathUnescape(r)
		if err != nil {
			s = r
		}
		if i == len(raw)-1 && (u.RawQuery != "" || u.ForceQuery) {
			s += "?" + u.RawQuery
		}
		parts = append(parts, seg(s))
	}
	return filepath.Join(parts...), nil
}

// seg is one safe path element; the empty one is "%", which escaping never
// produces alone.
func seg(s string) string {
	if s == "" {
		return "%"
	}
	return rsync.SafeName(s, maxSegment)
}

// sink writes the copy's files and its change log.
type sink struct {
	dir     string
	logPath string
	log     *os.File
	logBuf  *bufio.Writer
	logLen  int64    // bytes written, committed or not
	ahead   *ahead   // paths changed ahead of the state
	hooked  bool     // a hook wants each batch's lines
	batch   []byte   // the lines noted since the last batch, for the hook
	dirs    sync.Map // directories known to exist: one stat fewer per file
}

// openSink opens the copy at dir, its change log, cut back to the length
// the state committed (a crash may have left lines of a batch that did
// not commit; the batch is redone), and the journal of files ahead of the
// state (aheadPath; see ahead.go).
func openSink(dir, logPath string, committed int64, aheadPath string) (*sink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Files a crash left half written are of no use.
	if err := os.RemoveAll(filepath.Join(dir, tmpDir)); err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, tmpDir), 0o755); err != nil {
		return nil, err
	}
	a, err := openAhead(aheadPath)
	if err != nil {
		return nil, err
	}
	s := &sink{dir: dir, logPath: logPath, ahead: a}
	if logPath == "" {
		return s, nil
	}
	f, err := os.OpenFile(logPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		if err = f.Truncate(committed); err == nil {
			_, err = f.Seek(committed, io.SeekStart)
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		a.close()
		return nil, err
	}
	s.log, s.logBuf, s.logLen = f, bufio.NewWriter(f), committed
	return s, nil
}

// logLine is one line of the change log.
type logLine struct {
	Change string    `json:"change"` // created, updated, deleted
	URI    string    `json:"uri"`
	Path   string    `json:"path"`
	MD5    string    `json:"md5,omitempty"`
	SHA256 string    `json:"sha256,omitempty"`
	Length int64     `json:"length"`
	Time   time.Time `json:"time"`
	From   string    `json:"from"`
}

// note adds a line to the change log (written out by flush).
func (s *sink) note(l logLine) error {
	if s.log == nil && !s.hooked {
		return nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if s.hooked {
		s.batch = append(s.batch, b...)
	}
	if s.log == nil {
		return nil
	}
	n, err := s.logBuf.Write(b)
	s.logLen += int64(n)
	return err
}

// takeBatch returns the lines noted since the last call (for the hook).
func (s *sink) takeBatch() []byte {
	b := s.batch
	s.batch = nil
	return b
}

// flush makes the files written so far and the log lines durable, before
// the state says they are there: one syncfs(2) of the copy's file system
// (and the log's, when it is elsewhere). It returns the log's length, which
// the state then commits.
func (s *sink) flush() (int64, error) {
	if s.log != nil {
		if err := s.logBuf.Flush(); err != nil {
			return 0, err
		}
		if err := s.log.Sync(); err != nil {
			return 0, err
		}
	}
	return s.logLen, syncFS(s.dir)
}

// syncFS flushes the file system that holds dir.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}

func (s *sink) close() error {
	err := s.ahead.close()
	if s.log == nil {
		return err
	}
	return errors.Join(err, s.logBuf.Flush(), s.log.Close())
}

// file is a resource being written: a temporary file beside its place,
// hashed as it is written.
type file struct {
	sink   *sink
	uri    string
	rel    string
	tmp    *os.File
	md5    hash.Hash
	sha    hash.Hash
	n      int64
	maxLen int64
}

// tmpDir holds files being written, below the copy's directory (so a
// rename puts them in place) but apart from it: creating a file in a
// directory of many thousands is slow on common file systems, and a
// name starting with "." is one rsync.SafeName never gives a resource.
const tmpDir = ".rsbridge-tmp"

// create starts the file of a resource (uri's, at rel); maxLen bounds
// what it may hold.
func (s *sink) create(uri, rel string, maxLen int64) (*file, error) {
	final := filepath.Join(s.dir, rel)
	if parent := filepath.Dir(final); !s.known(parent) {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w (a file and a directory of the copy may share a name)", rel, err)
		}
		s.dirs.Store(parent, true)
	}
	tmp, err := os.CreateTemp(filepath.Join(s.dir, tmpDir), "*")
	if err != nil {
		return nil, err
	}
	return &file{sink: s, uri: uri, rel: rel, tmp: tmp, md5: md5.New(), sha: sha256.New(), maxLen: maxLen}, nil
}

func (s *sink) known(dir string) bool { _, ok := s.dirs.Load(dir); return ok }

var errTooLong = errors.New("longer than the source says")

func (f *file) Write(b []byte) (int, error) {
	if f.n+int64(len(b)) > f.maxLen {
		return 0, fmt.Errorf("%s: %w (%d bytes)", f.rel, errTooLong, f.maxLen)
	}
	f.n += int64(len(b))
	f.md5.Write(b)
	f.sha.Write(b)
	return f.tmp.Write(b)
}

// sums are the file's digests in hex.
func (f *file) sums() (md5hex, sha256hex string) {
	return hex.EncodeToString(f.md5.Sum(nil)), hex.EncodeToString(f.sha.Sum(nil))
}

// abandon removes the temporary file.
func (f *file) abandon() {
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}

// commit renames the file into place, noted first in the journal of files
// ahead of the state, and gives it its time. It is not synced here: the
// batch syncs the copy's file system once before the state commits
// (sink.flush), one call instead of one per file.
func (f *file) commit(modified time.Time) error {
	err := f.tmp.Close()
	final := filepath.Join(f.sink.dir, f.rel)
	if err == nil {
		err = f.sink.ahead.touch(f.uri, f.rel)
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), final)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		return fmt.Errorf("%s: %w", f.rel, err)
	}
	if !modified.IsZero() {
		os.Chtimes(final, modified, modified)
	}
	return nil
}

// remove deletes a file; one already gone is not an error. A resource's
// file is noted in the journal first (removeFor).
func (s *sink) remove(rel string) error {
	err := os.Remove(filepath.Join(s.dir, rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// removeFor deletes the file of a resource (uri's, at rel), noted first in
// the journal of files ahead of the state.
func (s *sink) removeFor(uri, rel string) error {
	if err := s.ahead.touch(uri, rel); err != nil {
		return err
	}
	return s.remove(rel)
}

// sumFile reads a file of the copy whole: its length and its md5 and
// sha-256 in hex. A missing file is an error that is os.ErrNotExist.
func sumFile(path string) (n int64, md5hex, sha256hex string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", "", err
	}
	defer f.Close()
	md, sh := md5.New(), sha256.New()
	if n, err = io.Copy(io.MultiWriter(md, sh), f); err != nil {
		return 0, "", "", fmt.Errorf("%s: %w", path, err)
	}
	return n, hex.EncodeToString(md.Sum(nil)), hex.EncodeToString(sh.Sum(nil)), nil
}
