// Package zipstream reads the entries of a ZIP file in order as it streams
// past, from the local headers, without the central directory at its end:
// a destination unpacks a Resource Dump package while it downloads, holding
// neither the package in memory nor a copy of it on disk (resourcesync.md
// RS-092..RS-100).
//
// It reads what ZIP writers put in dump packages: entries stored or
// deflated, with their sizes in the local header or, for deflated entries,
// in a data descriptor after the data (Go's archive/zip, Java, Python),
// ZIP64 sizes included. A stored entry whose size only a data descriptor
// gives cannot be found in a stream, and encrypted entries are not read:
// both are ErrUnsupported, which a caller answers by fetching the package's
// resources another way. Every entry's CRC-32 and sizes are checked when
// its data has been read to the end.
package zipstream

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"
)

const (
	localSig      = 0x04034b50
	descriptorSig = 0x08074b50
	centralSig    = 0x02014b50
	endSig        = 0x06054b50
	end64Sig      = 0x06064b50
	zip64ExtraID  = 0x0001
	extTimeID     = 0x5455
	flagEncrypted = 0x1
	flagDeferred  = 0x8 // sizes and CRC in a data descriptor after the data
	methodStore   = 0
	methodDeflate = 8
	maxUint32     = 1<<32 - 1
)

// ErrUnsupported is an entry this reader cannot read from a stream.
var ErrUnsupported = errors.New("zipstream: entry cannot be read from a stream")

// ErrFormat is a stream that is not a ZIP file as this reader reads them.
var ErrFormat = errors.New("zipstream: not a valid ZIP stream")

// ErrChecksum is an entry whose data does not match its CRC-32 or sizes.
var ErrChecksum = errors.New("zipstream: checksum or size mismatch")

// Entry is one file of the ZIP as its local header describes it.
type Entry struct {
	Name     string
	Method   uint16
	Modified time.Time
	// Size is the uncompressed size the local header gives, or -1 when a
	// data descriptor after the data gives it.
	Size int64
}

// Reader reads a ZIP stream entry by entry.
type Reader struct {
	br  *bufio.Reader
	err error // sticky: the stream cannot go on

	cur     *entryReader // the current entry's data, nil before the first
	scratch [30]byte
	inflate io.ReadCloser // one decompressor for every entry (each costs ~40 KB)
}

// inflater returns the reader's decompressor, reset to read src.
func (z *Reader) inflater(src io.Reader) io.Reader {
	if z.inflate == nil {
		z.inflate = flate.NewReader(src)
	} else {
		z.inflate.(flate.Resetter).Reset(src, nil)
	}
	return z.inflate
}

// NewReader reads the ZIP stream r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next skips what is left of the current entry and returns the next one.
// It returns io.EOF at the central directory (or a clean end of the
// stream), after which nothing more is read.
func (z *Reader) Next() (*Entry, error) {
	if z.err != nil {
		return nil, z.err
	}
	if z.cur != nil {
		if _, err := io.Copy(io.Discard, z.cur); err != nil {
			return nil, z.fail(err)
		}
		z.cur = nil
	}
	sig, err := z.br.Peek(4)
	switch {
	case err == io.EOF && len(sig) == 0:
		return nil, z.fail(io.EOF)
	case err != nil:
		return nil, z.fail(fmt.Errorf("%w: %v", ErrFormat, err))
	}
	switch binary.LittleEndian.Uint32(sig) {
	case localSig:
	case centralSig, endSig, end64Sig:
		return nil, z.fail(io.EOF)
	default:
		return nil, z.fail(fmt.Errorf("%w: no local file header where one must start", ErrFormat))
	}
	return z.header()
}

// Read reads the current entry's data; at its end it checks the CRC-32
// and sizes and returns io.EOF, or ErrChecksum.
func (z *Reader) Read(p []byte) (int, error) {
	if z.cur == nil {
		if z.err != nil {
			return 0, z.err
		}
		return 0, io.EOF
	}
	n, err := z.cur.Read(p)
	if err != nil && err != io.EOF {
		z.fail(err)
	}
	return n, err
}

func (z *Reader) fail(err error) error {
	z.err = err
	z.cur = nil
	return err
}

// header reads a local file header and prepares its entry's data.
func (z *Reader) header() (*Entry, error) {
	h := z.scratch[:]
	if _, err := io.ReadFull(z.br, h); err != nil {
		return nil, z.fail(fmt.Errorf("%w: local header: %v", ErrFormat, err))
	}
	le := binary.LittleEndian
	flags, method := le.Uint16(h[6:]), le.Uint16(h[8:])
	crc, csize, usize := le.Uint32(h[14:]), uint64(le.Uint32(h[18:])), uint64(le.Uint32(h[22:]))
	name := make([]byte, le.Uint16(h[26:]))
	extra := make([]byte, le.Uint16(h[28:]))
	if _, err := io.ReadFull(z.br, name); err != nil {
		return nil, z.fail(fmt.Errorf("%w: name: %v", ErrFormat, err))
	}
	if _, err := io.ReadFull(z.br, extra); err != nil {
		return nil, z.fail(fmt.Errorf("%w: extra field: %v", ErrFormat, err))
	}
	zip64 := false
	if c, u, ok := zip64Sizes(extra, csize, usize); ok {
		csize, usize, zip64 = c, u, true
	}
	e := &Entry{Name: string(name), Method: method, Modified: modified(extra, le.Uint16(h[12:]), le.Uint16(h[10:])), Size: int64(usize)}
	deferred := flags&flagDeferred != 0
	if deferred {
		e.Size = -1
	}
	switch {
	case flags&flagEncrypted != 0:
		return nil, z.fail(fmt.Errorf("%w: %q is encrypted", ErrUnsupported, e.Name))
	case method != methodStore && method != methodDeflate:
		return nil, z.fail(fmt.Errorf("%w: %q uses compression method %d", ErrUnsupported, e.Name, method))
	case method == methodStore && deferred:
		return nil, z.fail(fmt.Errorf("%w: %q is stored with its size after the data", ErrUnsupported, e.Name))
	}
	er := &entryReader{z: z, name: e.Name, crc: crc32.NewIEEE(), wantCRC: crc, csize: csize, usize: usize, deferred: deferred, zip64: zip64}
	switch {
	case deferred:
		// Deflated, sizes after the data: flate reads the stream through an
		// io.ByteReader, so it stops exactly at the end of the deflate data
		// and the descriptor stays unread.
		er.counted = &countingReader{r: z.br}
		er.data = z.inflater(er.counted)
	case method == methodDeflate:
		er.limited = &io.LimitedReader{R: z.br, N: int64(csize)}
		er.data = z.inflater(bufio.NewReader(er.limited))
	default:
		er.limited = &io.LimitedReader{R: z.br, N: int64(csize)}
		er.data = er.limited
	}
	z.cur = er
	return e, nil
}

// zip64Sizes reads the ZIP64 extra field's sizes for the header fields
// that hold 0xFFFFFFFF.
func zip64Sizes(extra []byte, csize, usize uint64) (c, u uint64, ok bool) {
	le := binary.LittleEndian
	for len(extra) >= 4 {
		id, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			return csize, usize, false
		}
		field := extra[:n]
		extra = extra[n:]
		if id != zip64ExtraID {
			continue
		}
		if usize == maxUint32 && len(field) >= 8 {
			usize, field = le.Uint64(field), field[8:]
		}
		if csize == maxUint32 && len(field) >= 8 {
			csize = le.Uint64(field)
		}
		return csize, usize, true
	}
	return csize, usize, false
}

// modified is the entry's time: the extended timestamp's modification
// time (extra field 0x5455, seconds since 1970, UTC) when there is one,
// else the MS-DOS date and time.
func modified(extra []byte, date, clock uint16) time.Time {
	le := binary.LittleEndian
	for len(extra) >= 4 {
		id, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if n > len(extra)-4 {
			break
		}
		field := extra[4 : 4+n]
		extra = extra[4+n:]
		if id == extTimeID && len(field) >= 5 && field[0]&1 != 0 {
			return time.Unix(int64(le.Uint32(field[1:])), 0).UTC()
		}
	}
	return msDosTime(date, clock)
}

func msDosTime(date, clock uint16) time.Time {
	return time.Date(int(date>>9)+1980, time.Month(date>>5&0xf), int(date&0x1f),
		int(clock>>11), int(clock>>5&0x3f), int(clock&0x1f)*2, 0, time.UTC)
}

// countingReader counts the bytes read through it, one at a time when the
// reader asks for bytes (flate does, on an io.ByteReader).
type countingReader struct {
	r *bufio.Reader
	n uint64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += uint64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// entryReader is one entry's data: decompressed, hashed and counted, and
// checked at its end.
type entryReader struct {
	z        *Reader
	name     string
	data     io.Reader
	limited  *io.LimitedReader // sizes known: the compressed bytes left
	counted  *countingReader   // sizes deferred: the compressed bytes read
	crc      hash.Hash32
	wantCRC  uint32
	csize    uint64
	usize    uint64
	deferred bool
	zip64    bool
	n        uint64 // uncompressed bytes read
	done     bool
}

func (e *entryReader) Read(p []byte) (int, error) {
	if e.done {
		return 0, io.EOF
	}
	n, err := e.data.Read(p)
	e.crc.Write(p[:n])
	e.n += uint64(n)
	if !e.deferred && e.n > e.usize {
		return n, fmt.Errorf("%w: %q is longer than its header says", ErrChecksum, e.name)
	}
	if err == io.EOF {
		e.done = true
		if cerr := e.check(); cerr != nil {
			return n, cerr
		}
		return n, io.EOF
	}
	var corrupt flate.CorruptInputError
	if err == io.ErrUnexpectedEOF || errors.As(err, &corrupt) {
		return n, fmt.Errorf("%w: %q: %v", ErrFormat, e.name, err)
	}
	return n, err
}

// check compares the data read with the header's or the data
// descriptor's CRC-32 and sizes.
func (e *entryReader) check() error {
	csize, usize, crc := e.csize, e.usize, e.wantCRC
	if e.limited != nil && e.limited.N != 0 {
		return fmt.Errorf("%w: %q: %d compressed bytes left after the data", ErrChecksum, e.name, e.limited.N)
	}
	if e.deferred {
		var err error
		if csize, usize, crc, err = e.descriptor(); err != nil {
			return err
		}
		if e.counted.n != csize {
			return fmt.Errorf("%w: %q: %d compressed bytes, the descriptor says %d", ErrChecksum, e.name, e.counted.n, csize)
		}
	}
	if e.n != usize || e.crc.Sum32() != crc {
		return fmt.Errorf("%w: %q: %d bytes with CRC-32 %08x, the ZIP says %d and %08x", ErrChecksum, e.name, e.n, e.crc.Sum32(), usize, crc)
	}
	return nil
}

// descriptor reads the data descriptor after deferred data: an optional
// signature, the CRC-32 and the sizes, 8 bytes each for ZIP64 (an entry
// with a ZIP64 extra field, or one too large for 4).
func (e *entryReader) descriptor() (csize, usize uint64, crc uint32, err error) {
	le := binary.LittleEndian
	var b [24]byte
	if _, err := io.ReadFull(e.z.br, b[:4]); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %q: data descriptor: %v", ErrFormat, e.name, err)
	}
	if le.Uint32(b[:4]) == descriptorSig {
		if _, err := io.ReadFull(e.z.br, b[:4]); err != nil {
			return 0, 0, 0, fmt.Errorf("%w: %q: data descriptor: %v", ErrFormat, e.name, err)
		}
	}
	crc = le.Uint32(b[:4])
	wide := e.zip64 || e.counted.n >= maxUint32 || e.n >= maxUint32
	n := 8
	if wide {
		n = 16
	}
	if _, err := io.ReadFull(e.z.br, b[4:4+n]); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %q: data descriptor: %v", ErrFormat, e.name, err)
	}
	if wide {
		return le.Uint64(b[4:]), le.Uint64(b[12:]), crc, nil
	}
	return uint64(le.Uint32(b[4:])), uint64(le.Uint32(b[8:])), crc, nil
}
