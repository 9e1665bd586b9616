package bridge

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// failAfter accepts n bytes, then fails.
type failAfter struct {
	n   int
	got bytes.Buffer
}

var errFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.got.Len()+len(p) > f.n {
		return 0, errFull
	}
	return f.got.Write(p)
}

// TestAsyncWriter: what goes in comes out in order, whatever the sizes of
// the writes against the block; the destination's error comes back from
// Close, and writes after it neither block nor fail.
func TestAsyncWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	for _, tc := range []struct {
		name        string
		block, most int // block size, largest write
		limit       int // the destination fails past this many bytes (0: never)
	}{
		{"small writes", 4096, 100, 0},
		{"writes larger than a block", 1000, 10000, 0},
		{"block-sized writes", 4096, 4096, 0},
		{"one byte blocks", 1, 7, 0},
		{"destination fails", 4096, 3000, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := &failAfter{n: tc.limit}
			if tc.limit == 0 {
				dst.n = len(data)
			}
			a := newAsyncWriter(dst, tc.block)
			for rest := data; len(rest) > 0; {
				k := min(len(rest), 1+rng.IntN(tc.most))
				if n, err := a.Write(rest[:k]); n != k || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
				rest = rest[k:]
			}
			err := a.Close()
			if tc.limit > 0 {
				if !errors.Is(err, errFull) {
					t.Fatalf("Close: %v, want the destination's error", err)
				}
				if !bytes.Equal(dst.got.Bytes(), data[:dst.got.Len()]) {
					t.Fatal("what reached the destination before it failed is not the start of the data")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst.got.Bytes(), data) {
				t.Fatalf("got %d bytes, not the %d written", dst.got.Len(), len(data))
			}
		})
	}
}
