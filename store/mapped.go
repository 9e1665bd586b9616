package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Badger memory-maps its tables and value-log files. Pages of them it read
// or wrote stay resident (RssFile) until the kernel needs the memory: a
// 400,000-record harvest leaves over a gigabyte mapped, which is page cache
// the kernel can drop, but which a container's memory accounting and its
// operator see as the process's memory. Options.MappedLimit bounds it: when
// the process's file-backed resident memory passes the limit, the store asks
// the kernel to page its store files out (madvise MADV_PAGEOUT: the pages
// are written back if dirty and reclaimed; nothing changes for the process
// but the cost of the next read). A hint about our own mappings: it cannot
// change a byte, even if Badger unmaps or replaces a file meanwhile.

// mappedEvery is how often the file-backed resident memory is checked.
const mappedEvery = 2 * time.Second

// MappedStats is the store's file-backed resident memory and what bounding
// it did.
type MappedStats struct {
	Limit    uint64 // Options.MappedLimit (0: unbounded)
	Resident uint64 // the process's RssFile at the last check
	Pageouts uint64 // times the store files were paged out
}

type mapped struct {
	limit    uint64
	resident atomic.Uint64
	pageouts atomic.Uint64
}

// Mapped reports the file-backed resident memory and its bound.
func (db *DB) Mapped() MappedStats {
	return MappedStats{Limit: db.mapped.limit, Resident: db.mapped.resident.Load(), Pageouts: db.mapped.pageouts.Load()}
}

// boundMapped checks the file-backed resident memory and pages the store
// files out when it is above the limit.
func (db *DB) boundMapped() bool {
	rss, err := rssFile()
	if err != nil {
		db.log.Warn("cannot read the resident memory (/proc/self/status); store.mapped_limit is not applied", "dir", db.dir, "err", err)
		return true // stop checking
	}
	db.mapped.resident.Store(rss)
	if db.mapped.limit == 0 || rss <= db.mapped.limit {
		return false
	}
	// The value log first: written once by a harvest and read only to serve
	// a record, it is most of what is mapped and the least missed, except
	// for the file being written (the newest), which the record checks and
	// derivations read back right after a harvest and whose pages are dirty.
	// The tables hold the keys every harvest and list reads (their indexes
	// and Bloom filters above all): paged out only if that is not enough.
	var n int
	after := rss
	for _, suffix := range []string{".vlog", ".sst"} {
		k, err := pageOut(db.dir, suffix)
		if err != nil {
			db.log.Warn("paging out the store files failed", "dir", db.dir, "files", "*"+suffix, "err", err)
			return false
		}
		n += k
		if after, err = rssFile(); err != nil || after <= db.mapped.limit {
			break
		}
	}
	db.mapped.pageouts.Add(1)
	db.mapped.resident.Store(after)
	db.log.Debug("store files paged out", "mappings", n, "rss_file_before", rss, "rss_file_after", after, "limit", db.mapped.limit)
	return false
}

// rssFile is the process's file-backed resident memory (Linux; an error
// elsewhere).
func rssFile() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("RssFile:")); ok {
			f := strings.Fields(string(rest))
			if len(f) < 1 {
				break
			}
			kb, err := strconv.ParseUint(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no RssFile")
}

// storeMappings lists the address ranges of the files under dir whose names
// end with suffix that the process maps, from /proc/self/maps; for the value
// log, all but the newest file (the highest number).
func storeMappings(dir, suffix string) ([][2]uintptr, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][2]uintptr
	var fids []uint64 // of out's mappings
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 7f0c5a200000-7f0c6a200000 rw-s 00000000 fd:01 1234  /data/000001.vlog
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], abs+string(filepath.Separator)) || !strings.HasSuffix(fields[5], suffix) {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && end > start {
			out = append(out, [2]uintptr{uintptr(start), uintptr(end - start)})
			fid, _ := strconv.ParseUint(strings.TrimSuffix(filepath.Base(fields[5]), suffix), 10, 64)
			fids = append(fids, fid)
		}
	}
	if suffix == ".vlog" && len(fids) > 0 {
		newest := slices.Max(fids)
		kept := out[:0]
		for i, m := range out {
			if fids[i] != newest {
				kept = append(kept, m)
			}
		}
		out = kept
	}
	return out, sc.Err()
}
