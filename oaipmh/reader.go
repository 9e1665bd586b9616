package oaipmh

import (
	"errors"
	"io"
)

// rawReader hands out the (decompressed) body in chunks of up to 64 KiB. It drops
// a leading UTF-8 byte-order mark, counts body offsets for error messages, and
// keeps the first bytes of the body for FormatError snippets. It changes no other
// byte: control characters are removed further on (scanitems.go for the envelope,
// repair.go for each record), where it is known which record they belong to.
type rawReader struct {
	r       io.Reader
	buf     []byte
	pos, n  int
	off     int64 // body offset of buf[pos]
	err     error
	started bool
	head    []byte // first headMax bytes, for error messages
}

const (
	headMax = 256
	// The chunk buffer starts small (most documents are small) and doubles while
	// reads fill it, up to maxChunk.
	minChunk = 4 << 10
	maxChunk = 64 << 10
)

func newRawReader(r io.Reader) *rawReader {
	return &rawReader{r: r, buf: make([]byte, minChunk)}
}

// peek returns the unconsumed bytes of the current chunk, reading the next chunk
// when it is used up. It returns no bytes only with an error (io.EOF at the end).
func (rr *rawReader) peek() ([]byte, error) {
	for rr.pos == rr.n {
		if rr.err != nil {
			return nil, rr.err
		}
		if rr.n == len(rr.buf) && len(rr.buf) < maxChunk {
			rr.buf = make([]byte, 2*len(rr.buf))
		}
		n, err := rr.r.Read(rr.buf)
		rr.err = err
		rr.pos, rr.n = 0, n
		if n == 0 {
			continue
		}
		if !rr.started {
			rr.started = true
			if n >= 3 && rr.buf[0] == 0xEF && rr.buf[1] == 0xBB && rr.buf[2] == 0xBF {
				rr.pos = 3
				rr.off = 3
			}
		}
		if len(rr.head) < headMax {
			rr.head = append(rr.head, rr.buf[rr.pos:min(rr.n, rr.pos+headMax-len(rr.head))]...)
		}
	}
	return rr.buf[rr.pos:rr.n], nil
}

// snippet returns the first bytes of the body for an error message, reading a
// little further if fewer than headMax bytes were read before the error.
func (rr *rawReader) snippet() string {
	for len(rr.head) < headMax && rr.err == nil {
		rr.consume(rr.n - rr.pos)
		if _, err := rr.peek(); err != nil {
			break
		}
	}
	return snippet(rr.head)
}

// consume marks k bytes of the chunk returned by peek as used.
func (rr *rawReader) consume(k int) {
	rr.pos += k
	rr.off += int64(k)
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
