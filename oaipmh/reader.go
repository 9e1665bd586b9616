package oaipmh

import (
	"errors"
	"io"
)

// rawReader feeds encoding/xml one byte at a time (it implements io.ByteReader, so
// the decoder uses it without a bufio of its own, and the decoder's InputOffset is
// exactly the number of bytes handed out here). It strips C0 control characters
// that XML 1.0 forbids (they are never part of a multi-byte UTF-8 sequence, so this
// is safe), drops a leading UTF-8 byte-order mark, keeps the first bytes of the body
// for error messages, and can capture the bytes of one record so the metadata element
// can be sliced out verbatim.
type rawReader struct {
	r        io.Reader
	buf      []byte
	pos, n   int
	off      int64 // bytes handed out so far (== decoder offset space)
	err      error
	started  bool
	stripped int

	head    []byte // first headMax bytes, for error messages
	capOn   bool
	capBase int64 // offset of capBuf[0]
	capBuf  []byte
	capMax  int
	capOver bool
}

const headMax = 256

var errCaptureTooLarge = errors.New("record too large")

func newRawReader(r io.Reader, maxCapture int) *rawReader {
	return &rawReader{r: r, buf: make([]byte, 64<<10), capMax: maxCapture}
}

func (rr *rawReader) fill() error {
	for rr.pos == rr.n {
		if rr.err != nil {
			return rr.err
		}
		n, err := rr.r.Read(rr.buf)
		rr.err = err
		if n == 0 {
			continue
		}
		b := rr.buf[:n]
		if !rr.started {
			rr.started = true
			if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
				b = b[3:]
			}
		}
		// Compact away forbidden control characters in place.
		w := 0
		for _, c := range b {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				rr.stripped++
				continue
			}
			rr.buf[w] = c
			w++
		}
		rr.pos, rr.n = 0, w
	}
	return nil
}

// ReadByte implements io.ByteReader.
func (rr *rawReader) ReadByte() (byte, error) {
	if rr.pos == rr.n {
		if err := rr.fill(); err != nil {
			return 0, err
		}
	}
	c := rr.buf[rr.pos]
	rr.pos++
	rr.off++
	if len(rr.head) < headMax {
		rr.head = append(rr.head, c)
	}
	if rr.capOn {
		if len(rr.capBuf) >= rr.capMax {
			rr.capOver = true
		} else {
			rr.capBuf = append(rr.capBuf, c)
		}
	}
	return c, nil
}

// startCapture begins keeping every byte handed out from now on.
func (rr *rawReader) startCapture() {
	rr.capOn = true
	rr.capOver = false
	rr.capBase = rr.off
	rr.capBuf = rr.capBuf[:0]
}

func (rr *rawReader) stopCapture() { rr.capOn = false }

// slice returns a copy of the captured bytes between two decoder offsets.
func (rr *rawReader) slice(from, to int64) ([]byte, error) {
	if rr.capOver {
		return nil, errCaptureTooLarge
	}
	if from < rr.capBase || to > rr.capBase+int64(len(rr.capBuf)) || from > to {
		return nil, errors.New("internal: capture window does not cover the element")
	}
	out := make([]byte, to-from)
	copy(out, rr.capBuf[from-rr.capBase:to-rr.capBase])
	return out, nil
}

// limitedBody caps a response body; reading past the cap is an error, not a silent EOF.
type limitedBody struct {
	r   io.Reader
	n   int64
	max int64
}

// ErrBodyTooLarge reports a response body larger than the configured cap.
var ErrBodyTooLarge = errors.New("response body exceeds max_body_bytes")

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// Probe whether anything is left beyond the cap.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, ErrBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Read implements io.Reader for completeness; encoding/xml uses ReadByte.
func (rr *rawReader) Read(p []byte) (int, error) {
	for i := range p {
		c, err := rr.ReadByte()
		if err != nil {
			if i > 0 {
				return i, nil
			}
			return 0, err
		}
		p[i] = c
	}
	return len(p), nil
}
