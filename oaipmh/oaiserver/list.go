package oaiserver

import (
	"encoding/base64"
	"hash/crc32"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	noFrom  = math.MinInt64
	noUntil = math.MaxInt64
)

// query holds the original arguments of a list request.
type query struct {
	verb      byte // 'I' ListIdentifiers, 'R' ListRecords, 'S' ListSets
	prefix    int  // index into s.formats
	from      int64
	untilExcl int64 // exclusive upper bound, unix seconds
	hasSet    bool
	set       string
}

// position is where a list resumes.
type position struct {
	phase  int   // 0: base items by index; 1: overlay by (ds, idx)
	pos    int64 // phase 0: next index; phase 1: ds of last emitted; ListSets: offset
	posIdx int64 // phase 1: index of last emitted, -1 = from the start
}

// entry is a snapshot of one item for output.
type entry struct {
	idx int
	st  state
}

// baseSet maps a set argument to the arithmetic progression of base items
// in it (i%m == r), or ok=false if no base item is in it.
func (s *Synthetic) baseSet(set string) (m, r int, ok bool) {
	n := s.setCount
	if n <= 0 {
		return 0, 0, false
	}
	if set == "s0:sub" {
		return 2 * n, 0, true
	}
	num, ok := strings.CutPrefix(set, "s")
	if !ok {
		return 0, 0, false
	}
	k, err := strconv.Atoi(num)
	if err != nil || k < 0 || k >= n || strconv.Itoa(k) != num {
		return 0, 0, false
	}
	return n, k, true
}

// ceilSteps returns ceil(d/step) clamped to [0, max].
func ceilSteps(d, step time.Duration, max int) int {
	if d <= 0 {
		return 0
	}
	q := d / step
	if d%step != 0 {
		q++
	}
	if q > time.Duration(max) {
		return max
	}
	return int(q)
}

// baseRange returns the index range [lo, hi) and the progression of base
// items matching q; ok=false when no base item can match.
func (s *Synthetic) baseRange(q *query) (lo, hi, m, r int, ok bool) {
	lo, hi, m, r = 0, s.records, 1, 0
	if q.from != noFrom {
		lo = ceilSteps(time.Unix(q.from, 0).Sub(s.start), s.step, s.records)
	}
	if q.untilExcl != noUntil {
		hi = ceilSteps(time.Unix(q.untilExcl, 0).Sub(s.start), s.step, s.records)
	}
	if q.hasSet {
		if m, r, ok = s.baseSet(q.set); !ok {
			return 0, 0, 1, 0, false
		}
	}
	if k := s.vanishK; k > 0 && m%k == 0 && r%k == k-1 {
		return 0, 0, 1, 0, false // every candidate is a vanished tombstone
	}
	return lo, hi, m, r, lo < hi
}

// matchOverlay reports whether overlay item idx with state st matches q
// (ignoring the date window).
func (s *Synthetic) matchOverlay(q *query, idx int, st *state) bool {
	if s.vanished(st) {
		return false
	}
	if !q.hasSet {
		return true
	}
	if !st.customSets {
		if m, r, ok := s.baseSet(q.set); ok && idx%m == r {
			return true
		}
		return false
	}
	for _, spec := range st.sets {
		if inSet(spec, q.set) {
			return true
		}
	}
	return false
}

// iter walks the list for q from a position. Callers hold s.mu (read).
type iter struct {
	s            *Synthetic
	q            *query
	lo, hi, m, r int
	baseOK       bool
	position
	oj int // next overlay slot in phase 1, -1 = not yet located
}

func (s *Synthetic) newIter(q *query, p position) *iter {
	it := &iter{s: s, q: q, position: p, oj: -1}
	it.lo, it.hi, it.m, it.r, it.baseOK = s.baseRange(q)
	return it
}

func (it *iter) next() (entry, bool) {
	s := it.s
	if it.phase == 0 {
		if it.baseOK {
			i := it.lo
			if it.pos > int64(i) {
				i = int(min(it.pos, int64(it.hi)))
			}
			if d := i % it.m; d != it.r {
				i += (it.r - d + it.m) % it.m
			}
			k := s.vanishK
			for ; i < it.hi; i += it.m {
				if k > 0 && i%k == k-1 {
					continue
				}
				if len(s.overlay) > 0 {
					if _, ok := s.overlay[i]; ok {
						continue
					}
				}
				it.pos = int64(i) + 1
				return entry{idx: i, st: state{ds: s.trunc(s.baseTime(i)), deleted: s.baseDeleted(i)}}, true
			}
		}
		it.phase, it.pos, it.posIdx, it.oj = 1, noFrom, -1, -1
	}
	if it.oj < 0 {
		it.oj = s.overlayStart(it.q.from, okey{it.pos, int(it.posIdx)}, it.posIdx >= 0)
	}
	for it.oj < len(s.order) {
		k := s.order[it.oj]
		it.oj++
		if k.ds >= it.q.untilExcl {
			it.oj = len(s.order)
			break
		}
		st := s.overlay[k.idx]
		if !s.matchOverlay(it.q, k.idx, st) {
			continue
		}
		it.pos, it.posIdx = k.ds, int64(k.idx)
		return entry{idx: k.idx, st: *st}, true
	}
	return entry{}, false
}

// overlayStart is the first slot of s.order with ds >= from and, when
// resuming, key > after.
func (s *Synthetic) overlayStart(from int64, after okey, resuming bool) int {
	j := sort.Search(len(s.order), func(j int) bool { return s.order[j].ds >= from })
	if resuming {
		j2 := sort.Search(len(s.order), func(j int) bool { return after.less(s.order[j]) })
		j = max(j, j2)
	}
	return j
}

// countLocked returns the number of items matching q. Callers hold s.mu.
func (s *Synthetic) countLocked(q *query) int {
	n := 0
	lo, hi, m, r, ok := s.baseRange(q)
	if ok {
		k := s.vanishK
		n += countCong(lo, hi, m, r)
		if k > 0 {
			n -= countBoth(lo, hi, m, r, k, k-1)
		}
		for idx := range s.overlay {
			if idx < s.records && idx >= lo && idx < hi && idx%m == r && !(k > 0 && idx%k == k-1) {
				n--
			}
		}
	}
	for j := s.overlayStart(q.from, okey{}, false); j < len(s.order); j++ {
		k := s.order[j]
		if k.ds >= q.untilExcl {
			break
		}
		if s.matchOverlay(q, k.idx, s.overlay[k.idx]) {
			n++
		}
	}
	return n
}

// collect returns up to limit entries from p, the position after them, and
// whether more entries follow. Callers hold s.mu (read).
func (s *Synthetic) collect(q *query, p position, limit int) (out []entry, next position, more bool) {
	it := s.newIter(q, p)
	out = make([]entry, 0, limit)
	for len(out) < limit {
		e, ok := it.next()
		if !ok {
			return out, it.position, false
		}
		out = append(out, e)
	}
	next = it.position
	_, more = it.next()
	return out, next, more
}

// countCong counts i in [lo, hi) with i%m == r.
func countCong(lo, hi, m, r int) int {
	if lo >= hi {
		return 0
	}
	f := func(x int) int {
		if x <= r {
			return 0
		}
		return (x - r + m - 1) / m
	}
	return f(hi) - f(lo)
}

// countBoth counts i in [lo, hi) with i%m == r and i%k == c.
func countBoth(lo, hi, m, r, k, c int) int {
	g, _, _ := egcd(m, k)
	if (c-r)%g != 0 {
		return 0
	}
	kp := k / g
	t := 0
	if kp > 1 {
		_, inv, _ := egcd((m/g)%kp, kp)
		t = (((c-r)/g)%kp + kp) % kp
		t = (t * ((inv%kp + kp) % kp)) % kp
	}
	l := m * kp
	x := (r + m*t) % l
	return countCong(lo, hi, l, x)
}

// egcd returns g = gcd(a, b) and x, y with a*x + b*y = g.
func egcd(a, b int) (g, x, y int) {
	if b == 0 {
		return a, 1, 0
	}
	g, x1, y1 := egcd(b, a%b)
	return g, y1, x1 - (a/b)*y1
}

// --- sets ---

// setListLocked returns all setSpecs in ListSets order: the base sets, then
// the extra sets (and their ancestors) from SetSets, sorted. Callers hold
// s.mu.
func (s *Synthetic) setListLocked() []string {
	out := make([]string, 0, s.setCount+1)
	base := make(map[string]bool, s.setCount+1)
	for k := 0; k < s.setCount; k++ {
		name := "s" + strconv.Itoa(k)
		out = append(out, name)
		base[name] = true
		if k == 0 {
			out = append(out, "s0:sub")
			base["s0:sub"] = true
		}
	}
	var extra []string
	seen := map[string]bool{}
	for _, st := range s.overlay {
		if !st.customSets {
			continue
		}
		for _, spec := range st.sets {
			for a := spec; ; {
				if !base[a] && !seen[a] {
					seen[a] = true
					extra = append(extra, a)
				}
				j := strings.LastIndexByte(a, ':')
				if j < 0 {
					break
				}
				a = a[:j]
			}
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// hasSetsLocked reports whether the repository has a set hierarchy.
func (s *Synthetic) hasSetsLocked() bool {
	if s.setCount > 0 {
		return true
	}
	for _, st := range s.overlay {
		if st.customSets && len(st.sets) > 0 {
			return true
		}
	}
	return false
}

// --- resumption tokens ---

// encodeToken returns the opaque token: standard base64 (with padding) of
// 0xFB 0xFF, a '|'-separated text record, '|', CRC-32 in hex and '.'
// filler. The leading bytes make every token start with "+/" and the filler
// makes it end with "==".
func encodeToken(q *query, p position, cursor int, exp int64) string {
	b := []byte{0xFB, 0xFF}
	start := len(b)
	b = append(b, '1', '|', q.verb, '|')
	b = strconv.AppendInt(b, int64(q.prefix), 10)
	for _, v := range []int64{q.from, q.untilExcl, int64(p.phase), p.pos, p.posIdx, int64(cursor), exp} {
		b = append(b, '|')
		b = strconv.AppendInt(b, v, 10)
	}
	if q.hasSet {
		b = append(b, "|1|"...)
	} else {
		b = append(b, "|0|"...)
	}
	b = append(b, q.set...)
	sum := crc32.ChecksumIEEE(b[start:])
	b = append(b, '|')
	b = append(b, []byte(strconv.FormatUint(uint64(sum)|1<<32, 16))[1:]...)
	for len(b)%3 != 1 {
		b = append(b, '.')
	}
	return base64.StdEncoding.EncodeToString(b)
}

// decodeToken parses a token; ok=false for anything malformed.
func decodeToken(tok string) (q query, p position, cursor int, exp int64, ok bool) {
	b, err := base64.StdEncoding.DecodeString(tok)
	if err != nil || len(b) < 3 || b[0] != 0xFB || b[1] != 0xFF {
		return
	}
	rest := strings.TrimRight(string(b[2:]), ".")
	bar := strings.LastIndexByte(rest, '|')
	if bar < 0 {
		return
	}
	payload, sumHex := rest[:bar], rest[bar+1:]
	sum, err := strconv.ParseUint(sumHex, 16, 32)
	if err != nil || len(sumHex) != 8 || uint32(sum) != crc32.ChecksumIEEE([]byte(payload)) {
		return
	}
	f := strings.SplitN(payload, "|", 12)
	if len(f) != 12 || f[0] != "1" || len(f[1]) != 1 {
		return
	}
	var v [9]int64
	for j := range v {
		if v[j], err = strconv.ParseInt(f[2+j], 10, 64); err != nil {
			return
		}
	}
	q = query{verb: f[1][0], prefix: int(v[0]), from: v[1], untilExcl: v[2], hasSet: f[10] == "1", set: f[11]}
	p = position{phase: int(v[3]), pos: v[4], posIdx: v[5]}
	if v[6] < 0 || v[6] > math.MaxInt32 || (p.phase != 0 && p.phase != 1) {
		return
	}
	return q, p, int(v[6]), v[7], true
}
