package dumps

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Dump packages (issue 8): ZIP files with manifest.xml first, written to a
// temporary file, synced and renamed into place, so a package a client can
// see is always complete.

// pkgWriter writes one ZIP package to a temporary file beside its final
// name, hashing and counting every byte.
type pkgWriter struct {
	final   string
	f       *os.File
	bw      *bufio.Writer
	zw      *zip.Writer
	sha     hash.Hash
	md5     hash.Hash
	n       int64
	entries int
}

func newPackage(final string) (*pkgWriter, error) {
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(final), ".tmp-*")
	if err != nil {
		return nil, err
	}
	p := &pkgWriter{final: final, f: f, sha: sha256.New(), md5: md5.New()}
	p.bw = bufio.NewWriterSize(io.MultiWriter(f, p.sha, p.md5, countWriter{&p.n}), 256<<10)
	p.zw = zip.NewWriter(p.bw)
	// One compressor for the whole package (entries are written one after the
	// other): a new flate.Writer per entry allocates about 1 MB.
	fw, err := flate.NewWriter(io.Discard, flate.BestSpeed)
	if err != nil {
		p.abandon()
		return nil, err
	}
	p.zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		fw.Reset(w)
		return fw, nil
	})
	return p, nil
}

type countWriter struct{ n *int64 }

func (c countWriter) Write(b []byte) (int, error) { *c.n += int64(len(b)); return len(b), nil }

// create starts an entry; path has no leading "/".
func (p *pkgWriter) create(path string, modified time.Time) (io.Writer, error) {
	p.entries++
	return p.zw.CreateHeader(&zip.FileHeader{Name: path, Method: zip.Deflate, Modified: modified.UTC()})
}

// add writes a whole entry.
func (p *pkgWriter) add(path string, modified time.Time, b []byte) error {
	w, err := p.create(path, modified)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// finish completes the ZIP, syncs it and renames it into place.
func (p *pkgWriter) finish() (length int64, sha, md string, err error) {
	defer func() {
		if err != nil {
			p.abandon()
		}
	}()
	if err = p.zw.Close(); err != nil {
		return
	}
	if err = p.bw.Flush(); err != nil {
		return
	}
	if err = p.f.Sync(); err != nil {
		return
	}
	if err = p.f.Close(); err != nil {
		return
	}
	if err = os.Rename(p.f.Name(), p.final); err != nil {
		return
	}
	return p.n, hex.EncodeToString(p.sha.Sum(nil)), hex.EncodeToString(p.md5.Sum(nil)), syncDir(filepath.Dir(p.final))
}

// abandon removes the temporary file.
func (p *pkgWriter) abandon() {
	p.f.Close()
	os.Remove(p.f.Name())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
