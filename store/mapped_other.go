//go:build !linux

package store

import "errors"

func pageOut(string, string) (int, error) {
	return 0, errors.New("store.mapped_limit needs Linux (madvise MADV_PAGEOUT)")
}
