package zipstream

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"time"
)

type file struct {
	name string
	data []byte
}

// build writes files with archive/zip: how selects, per file, a streamed
// deflated entry (sizes in a data descriptor), a stored entry with sizes
// in the header, or a deflated one with sizes in the header.
func build(t testing.TB, files []file, how func(i int) string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	mod := time.Date(2026, 11, 24, 10, 30, 20, 0, time.UTC)
	for i, f := range files {
		var err error
		switch how(i) {
		case "stream":
			var w io.Writer
			if w, err = zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mod}); err == nil {
				_, err = w.Write(f.data)
			}
		case "stored":
			var w io.Writer
			h := &zip.FileHeader{Name: f.name, Method: zip.Store, Modified: mod, CRC32: crc32.ChecksumIEEE(f.data),
				CompressedSize64: uint64(len(f.data)), UncompressedSize64: uint64(len(f.data))}
			if w, err = zw.CreateRaw(h); err == nil {
				_, err = w.Write(f.data)
			}
		case "deflated":
			var c bytes.Buffer
			fw, _ := flate.NewWriter(&c, flate.BestSpeed)
			fw.Write(f.data)
			fw.Close()
			var w io.Writer
			h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mod, CRC32: crc32.ChecksumIEEE(f.data),
				CompressedSize64: uint64(c.Len()), UncompressedSize64: uint64(len(f.data))}
			if w, err = zw.CreateRaw(h); err == nil {
				_, err = w.Write(c.Bytes())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readAll reads every entry, as much of each as skip allows (skip(i):
// leave entry i unread, Next skips it).
func readAll(r io.Reader, skip func(int) bool) ([]file, error) {
	z := NewReader(r)
	var out []file
	for i := 0; ; i++ {
		e, err := z.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		f := file{name: e.Name}
		if !skip(i) {
			if f.data, err = io.ReadAll(z); err != nil {
				return out, err
			}
		}
		out = append(out, f)
	}
}

func testFiles() []file {
	files := []file{{"manifest.xml", []byte(`<?xml version="1.0"?><urlset/>`)}, {"resources/empty.xml", nil}}
	for i := range 40 {
		files = append(files, file{fmt.Sprintf("resources/r%02d.xml", i), bytes.Repeat([]byte(fmt.Sprintf("<x>%d 論文</x>\n", i)), i*97)})
	}
	return append(files, file{"resources/big.xml", bytes.Repeat([]byte("0123456789abcdef"), 100_000)})
}

func TestRoundTrip(t *testing.T) {
	files := testFiles()
	for _, mode := range []string{"stream", "stored", "deflated", "mixed"} {
		how := func(i int) string { return mode }
		if mode == "mixed" {
			how = func(i int) string { return []string{"stream", "stored", "deflated"}[i%3] }
		}
		raw := build(t, files, how)
		for _, skipOdd := range []bool{false, true} {
			// One byte at a time as well: nothing may depend on how reads fall.
			for _, src := range []io.Reader{bytes.NewReader(raw), &oneByte{raw}} {
				got, err := readAll(src, func(i int) bool { return skipOdd && i%2 == 1 })
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if len(got) != len(files) {
					t.Fatalf("%s: %d entries, want %d", mode, len(got), len(files))
				}
				for i, f := range files {
					if got[i].name != f.name || !(skipOdd && i%2 == 1) && !bytes.Equal(got[i].data, f.data) {
						t.Fatalf("%s: entry %d: %q with %d bytes, want %q with %d", mode, i, got[i].name, len(got[i].data), f.name, len(f.data))
					}
				}
				src = nil
			}
		}
	}
}

type oneByte struct{ b []byte }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0], o.b = o.b[0], o.b[1:]
	return 1, nil
}

func TestEntryHeader(t *testing.T) {
	raw := build(t, []file{{"a/b.xml", []byte("hello")}}, func(int) string { return "stored" })
	z := NewReader(bytes.NewReader(raw))
	e, err := z.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "a/b.xml" || e.Size != 5 || e.Method != 0 {
		t.Errorf("entry %+v", e)
	}
	raw = build(t, []file{{"a/b.xml", []byte("hello")}}, func(int) string { return "stream" })
	if e, err = NewReader(bytes.NewReader(raw)).Next(); err != nil || e.Size != -1 || e.Method != 8 ||
		!e.Modified.Equal(time.Date(2026, 11, 24, 10, 30, 20, 0, time.UTC)) {
		t.Errorf("streamed entry: %+v, %v: its size is not known before the data; its time is the header's", e, err)
	}
}

func TestBadStreams(t *testing.T) {
	data := []byte(strings.Repeat("resource bytes ", 200))
	flip := func(raw []byte, at int) []byte { b := bytes.Clone(raw); b[at] ^= 0xff; return b }
	stored := build(t, []file{{"r.xml", data}}, func(int) string { return "stored" })
	streamed := build(t, []file{{"r.xml", data}}, func(int) string { return "stream" })
	deflated := build(t, []file{{"r.xml", data}, {"s.xml", data}}, func(int) string { return "deflated" })
	storedDeferred := bytes.Clone(stored)
	storedDeferred[6] |= flagDeferred
	encrypted := bytes.Clone(stored)
	encrypted[6] |= flagEncrypted
	for _, c := range []struct {
		name string
		raw  []byte
		want error
	}{
		{"stored data changed", flip(stored, 30+len("r.xml")+10), ErrChecksum},
		{"stored CRC changed", flip(stored, 14), ErrChecksum},
		{"streamed CRC in the descriptor changed", flip(streamed, bytes.Index(streamed, []byte{0x50, 0x4b, 0x07, 0x08})+4), ErrChecksum},
		{"deflated size in the header too small", func() []byte { b := bytes.Clone(deflated); b[22]--; return b }(), ErrChecksum},
		{"cut in the data", streamed[:len(streamed)/3], ErrFormat},
		{"cut in the header", stored[:20], ErrFormat},
		{"garbage", []byte("this is not a zip file at all"), ErrFormat},
		{"stored with a data descriptor", storedDeferred, ErrUnsupported},
		{"encrypted", encrypted, ErrUnsupported},
	} {
		_, err := readAll(bytes.NewReader(c.raw), func(int) bool { return false })
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if got, err := readAll(bytes.NewReader(nil), func(int) bool { return false }); err != nil || len(got) != 0 {
		t.Errorf("empty stream: %v %v", got, err)
	}
}

// FuzzReader: whatever the bytes, the reader ends with an error or io.EOF
// and never panics or loops; archives archive/zip wrote read back whole.
func FuzzReader(f *testing.F) {
	f.Add(build(f, testFiles()[:5], func(i int) string { return []string{"stream", "stored", "deflated"}[i%3] }), false)
	f.Add([]byte("PK\x03\x04"), false)
	f.Add([]byte("name one\x00data one"), true)
	f.Fuzz(func(t *testing.T, b []byte, asFiles bool) {
		if asFiles {
			// Cut the input into files and check they come back.
			parts := bytes.Split(b, []byte{0})
			var files []file
			for i := 0; i+1 < len(parts) && len(files) < 20; i += 2 {
				files = append(files, file{fmt.Sprintf("f%d-%x", i, parts[i]), parts[i+1]})
			}
			raw := build(t, files, func(i int) string { return []string{"stream", "stored", "deflated"}[(i+len(b))%3] })
			got, err := readAll(bytes.NewReader(raw), func(int) bool { return false })
			if err != nil || len(got) != len(files) {
				t.Fatalf("%d files: %d read, %v", len(files), len(got), err)
			}
			for i := range files {
				if got[i].name != files[i].name || !bytes.Equal(got[i].data, files[i].data) {
					t.Fatalf("file %d differs", i)
				}
			}
			return
		}
		z := NewReader(bytes.NewReader(b))
		for range 1000 {
			if _, err := z.Next(); err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, io.LimitReader(z, 1<<20)); err != nil {
				return
			}
		}
	})
}
