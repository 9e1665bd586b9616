package store

import "golang.org/x/sys/unix"

// pageOut asks the kernel to reclaim the resident pages of the store files
// named *suffix the process maps; it returns how many mappings it advised.
func pageOut(dir, suffix string) (int, error) {
	ms, err := storeMappings(dir, suffix)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range ms {
		// Addresses from /proc/self/maps, passed as integers: no Go pointer is
		// made from them. EINVAL/ENOMEM (the mapping went away) are harmless.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m[0], m[1], unix.MADV_PAGEOUT); errno == 0 {
			n++
		}
	}
	return n, nil
}
