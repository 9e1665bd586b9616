package oaiserver

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Synthetic repository. Zero values select defaults.
type Options struct {
	Records        int              // number of items initially; 0 = default 1000, negative = empty repository
	Prefixes       []string         // formats offered, in this order: "oai_dc", "jpcoar_2.0", "junii2"; unknown ones are ignored; default [oai_dc]
	RecordBytes    int              // approximate size of each oai_dc <metadata> child; 0 = 2048, negative = no padding
	Granularity    string           // "YYYY-MM-DDThh:mm:ssZ" (default) or "YYYY-MM-DD"
	DeletedRecord  string           // "persistent" (default), "transient" or "no"
	Start          time.Time        // datestamp of item 0; default 2020-01-01T00:00:00Z
	Step           time.Duration    // datestamp step between consecutive items; <= 0 = 1 minute
	DeletedEvery   int              // if k > 0, items with i%k == k-1 start out deleted
	SetCount       int              // 0 = default 4; negative = no sets (noSetHierarchy)
	PageSize       int              // records, headers or sets per page; default 100
	RepositoryName string           // default "rsbridge demo repository"
	Now            func() time.Time // responseDate / token expiry clock; default time.Now
	// Hostile, if set, names the fault built into item i whenever it is served
	// (lists and GetRecord), for tests of a harvester's recovery; see Hostility.
	// Item reports it and returns what a correct harvester stores.
	Hostile       func(i int) Hostility
	OversizeBytes int // size of HostileOversize metadata; default 17 MiB
}

// Item is what the provider currently serves for an item in one format.
type Item struct {
	Identifier string
	Datestamp  time.Time // UTC, truncated to the repository granularity
	Sets       []string  // minimal setSpecs as sent in the header (nil when none)
	Deleted    bool
	Metadata   []byte // standalone metadata element (see package doc); nil when deleted
	// Hostile is the fault the item is served with (Options.Hostile). For a
	// repaired kind, Metadata holds the repaired bytes a harvester stores; for a
	// quarantined kind, it holds the metadata the item would have without the
	// fault, and Identifier the identifier GetRecord accepts.
	Hostile Hostility
}

// state is the current state of a mutated or added item.
type state struct {
	ds         int64 // datestamp, unix seconds, truncated to granularity
	version    int
	deleted    bool
	customSets bool     // sets overrides the index-derived default
	sets       []string // minimal, never modified in place
}

// okey orders overlay items by (datestamp, index).
type okey struct {
	ds  int64
	idx int
}

func (a okey) less(b okey) bool { return a.ds < b.ds || (a.ds == b.ds && a.idx < b.idx) }

// Synthetic is a deterministic synthetic OAI-PMH repository and its HTTP
// endpoint. It is safe for concurrent use.
type Synthetic struct {
	records       int
	formats       []*format
	recordBytes   int
	dayGran       bool
	deletedRecord string
	start         time.Time
	step          time.Duration
	deletedEvery  int
	vanishK       int // deletedEvery when deleted base items vanish (DeletedRecord "no")
	setCount      int
	pageSize      int
	repoName      string
	now           func() time.Time
	hostile       func(int) Hostility
	oversize      int

	pad       string
	padLen    int
	padStarts []int

	requests atomic.Int64

	mu      sync.RWMutex
	n       int            // items ever created
	overlay map[int]*state // mutated and added items
	order   []okey         // overlay sorted by (ds, idx)
}

// New returns a synthetic repository configured by opts.
func New(opts Options) *Synthetic {
	s := &Synthetic{
		records:       opts.Records,
		recordBytes:   opts.RecordBytes,
		dayGran:       opts.Granularity == "YYYY-MM-DD",
		deletedRecord: opts.DeletedRecord,
		start:         opts.Start,
		step:          opts.Step,
		deletedEvery:  opts.DeletedEvery,
		setCount:      opts.SetCount,
		pageSize:      opts.PageSize,
		repoName:      opts.RepositoryName,
		now:           opts.Now,
		hostile:       opts.Hostile,
		oversize:      opts.OversizeBytes,
		overlay:       make(map[int]*state),
	}
	if s.records == 0 {
		s.records = 1000
	} else if s.records < 0 {
		s.records = 0
	}
	all := builtinFormats()
	for _, p := range opts.Prefixes {
		for _, f := range all {
			if f.prefix == p && s.formatByPrefix(p) == nil {
				s.formats = append(s.formats, f)
			}
		}
	}
	if len(s.formats) == 0 {
		s.formats = all[:1]
	}
	if s.recordBytes == 0 {
		s.recordBytes = 2048
	}
	switch s.deletedRecord {
	case "transient", "no":
	default:
		s.deletedRecord = "persistent"
	}
	if s.start.IsZero() {
		s.start = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	s.start = s.start.UTC()
	if s.step <= 0 {
		s.step = time.Minute
	}
	if s.deletedEvery < 0 {
		s.deletedEvery = 0
	}
	if s.deletedRecord == "no" {
		s.vanishK = s.deletedEvery
	}
	if s.setCount == 0 {
		s.setCount = 4
	} else if s.setCount < 0 {
		s.setCount = 0
	}
	if s.pageSize <= 0 {
		s.pageSize = 100
	}
	if s.repoName == "" {
		s.repoName = "rsbridge demo repository"
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.oversize <= 0 {
		s.oversize = 17 << 20
	}
	s.n = s.records
	s.initPad()
	return s
}

func (s *Synthetic) formatByPrefix(p string) *format {
	for _, f := range s.formats {
		if f.prefix == p {
			return f
		}
	}
	return nil
}

func (s *Synthetic) formatIndex(f *format) int {
	for i, g := range s.formats {
		if g == f {
			return i
		}
	}
	return -1
}

// unit is the repository granularity.
func (s *Synthetic) unit() time.Duration {
	if s.dayGran {
		return 24 * time.Hour
	}
	return time.Second
}

func (s *Synthetic) layout() string {
	if s.dayGran {
		return "2006-01-02"
	}
	return "2006-01-02T15:04:05Z"
}

// trunc converts t to unix seconds truncated to the repository granularity.
func (s *Synthetic) trunc(t time.Time) int64 {
	return t.UTC().Truncate(s.unit()).Unix()
}

// baseTime is the untruncated initial datestamp of item i.
func (s *Synthetic) baseTime(i int) time.Time {
	return s.start.Add(time.Duration(i) * s.step)
}

func (s *Synthetic) baseDeleted(i int) bool {
	k := s.deletedEvery
	return k > 0 && i%k == k-1
}

// Identifier is the OAI identifier of item i. Every 7th identifier
// (i%7 == 0) is deliberately hostile: it contains a slash, a colon, a space
// and non-ASCII characters.
func (s *Synthetic) Identifier(i int) string {
	if i%7 == 0 {
		return idPrefix + "dept/論文 " + strconv.Itoa(i) + ":v1"
	}
	return idPrefix + "item-" + strconv.Itoa(i)
}

func writeIdentifier(x *xw, i int) {
	x.s(idPrefix)
	if i%7 == 0 {
		x.s("dept/論文 ")
		x.int(i)
		x.s(":v1")
		return
	}
	x.s("item-")
	x.int(i)
}

// parseIdentifier returns the index for an identifier of the canonical form.
// It does not check the range.
func parseIdentifier(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok {
		return 0, false
	}
	var num string
	if r, ok := strings.CutPrefix(rest, "item-"); ok {
		num = r
	} else if r, ok := strings.CutPrefix(rest, "dept/論文 "); ok {
		num, ok = strings.CutSuffix(r, ":v1")
		if !ok {
			return 0, false
		}
	} else {
		return 0, false
	}
	if num == "" || len(num) > 18 || (len(num) > 1 && num[0] == '0') {
		return 0, false
	}
	n := 0
	for j := 0; j < len(num); j++ {
		c := num[j]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if (n%7 == 0) != strings.HasPrefix(rest, "dept/") {
		return 0, false
	}
	return n, true
}

// Len is the number of items ever created, including deleted ones.
func (s *Synthetic) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.n
}

// Requests is the number of HTTP requests served so far.
func (s *Synthetic) Requests() int { return int(s.requests.Load()) }

// stateLocked returns the current state of item i. Callers hold s.mu.
func (s *Synthetic) stateLocked(i int) (state, bool) {
	if i < 0 || i >= s.n {
		return state{}, false
	}
	if st, ok := s.overlay[i]; ok {
		return *st, true
	}
	return state{ds: s.trunc(s.baseTime(i)), deleted: s.baseDeleted(i)}, true
}

// vanished reports whether a deleted item is hidden (DeletedRecord "no").
func (s *Synthetic) vanished(st *state) bool { return st.deleted && s.deletedRecord == "no" }

// defaultSets returns how item i's default sets are written: "s0:sub"
// when i%(2n)==0, else "s<i%n>".
func (s *Synthetic) defaultSets(i int) []string {
	n := s.setCount
	if n <= 0 {
		return nil
	}
	if i%(2*n) == 0 {
		return []string{"s0:sub"}
	}
	return []string{"s" + strconv.Itoa(i%n)}
}

func (s *Synthetic) setsOf(i int, st *state) []string {
	if st.customSets {
		if len(st.sets) == 0 {
			return nil
		}
		return append([]string(nil), st.sets...)
	}
	return s.defaultSets(i)
}

// Item returns what the provider currently serves for item i in format
// prefix. It returns false when i is out of range, the prefix is not offered,
// or the item is deleted and DeletedRecord is "no".
func (s *Synthetic) Item(i int, prefix string) (Item, bool) {
	f := s.formatByPrefix(prefix)
	if f == nil {
		return Item{}, false
	}
	s.mu.RLock()
	st, ok := s.stateLocked(i)
	s.mu.RUnlock()
	if !ok || s.vanished(&st) {
		return Item{}, false
	}
	it := Item{
		Identifier: s.Identifier(i),
		Datestamp:  time.Unix(st.ds, 0).UTC(),
		Sets:       s.setsOf(i, &st),
		Deleted:    st.deleted,
		Hostile:    s.hostility(i),
	}
	if !st.deleted {
		it.Metadata = s.metadataBytes(f, i, st.version)
	}
	return it, true
}

// --- mutations ---

func (s *Synthetic) insertOrder(k okey) {
	j := sort.Search(len(s.order), func(j int) bool { return k.less(s.order[j]) })
	s.order = append(s.order, okey{})
	copy(s.order[j+1:], s.order[j:])
	s.order[j] = k
}

func (s *Synthetic) removeOrder(k okey) {
	j := sort.Search(len(s.order), func(j int) bool { return !s.order[j].less(k) })
	if j < len(s.order) && s.order[j] == k {
		s.order = append(s.order[:j], s.order[j+1:]...)
	}
}

// mutate applies fn to item i's state (materialising it in the overlay).
// Out-of-range indices are ignored. fn returns false to leave the item
// untouched.
func (s *Synthetic) mutate(i int, fn func(st *state) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= s.n {
		return
	}
	cur, _ := s.stateLocked(i)
	next := cur
	if !fn(&next) {
		return
	}
	if old, ok := s.overlay[i]; ok {
		s.removeOrder(okey{old.ds, i})
	}
	st := next
	s.overlay[i] = &st
	s.insertOrder(okey{st.ds, i})
}

// Add creates a new live item with datestamp at and returns its index.
func (s *Synthetic) Add(at time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.n
	s.n++
	st := &state{ds: s.trunc(at)}
	s.overlay[i] = st
	s.insertOrder(okey{st.ds, i})
	return i
}

// Update changes item i's content (its version counter bumps) and sets its
// datestamp to at. A deleted item stays deleted.
func (s *Synthetic) Update(i int, at time.Time) {
	ds := s.trunc(at)
	s.mutate(i, func(st *state) bool {
		st.version++
		st.ds = ds
		return true
	})
}

// Touch sets item i's datestamp to at; the content stays byte-identical.
func (s *Synthetic) Touch(i int, at time.Time) {
	ds := s.trunc(at)
	s.mutate(i, func(st *state) bool {
		st.ds = ds
		return true
	})
}

// Delete marks item i deleted with datestamp at (with DeletedRecord "no"
// the item vanishes instead).
func (s *Synthetic) Delete(i int, at time.Time) {
	ds := s.trunc(at)
	s.mutate(i, func(st *state) bool {
		st.deleted = true
		st.ds = ds
		return true
	})
}

// Restore brings a deleted item back with datestamp at and the same content
// as before its deletion. It is a no-op for a live item.
func (s *Synthetic) Restore(i int, at time.Time) {
	ds := s.trunc(at)
	s.mutate(i, func(st *state) bool {
		if !st.deleted {
			return false
		}
		st.deleted = false
		st.ds = ds
		return true
	})
}

// SetSets replaces item i's set membership (reduced to minimal setSpecs:
// duplicates and ancestors of other listed sets are dropped). The datestamp
// becomes at only if bump is true.
func (s *Synthetic) SetSets(i int, sets []string, at time.Time, bump bool) {
	min := minimalSets(sets)
	ds := s.trunc(at)
	s.mutate(i, func(st *state) bool {
		st.customSets = true
		st.sets = min
		if bump {
			st.ds = ds
		}
		return true
	})
}

// minimalSets removes empty strings, duplicates and sets that are ancestors
// of another listed set, preserving order.
func minimalSets(in []string) []string {
	var out []string
	for j, a := range in {
		if a == "" {
			continue
		}
		keep := true
		for k, b := range in {
			if (k < j && b == a) || isDescendant(b, a) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}

// isDescendant reports whether spec is a strict descendant of set.
func isDescendant(spec, set string) bool {
	return len(spec) > len(set) && spec[len(set)] == ':' && spec[:len(set)] == set
}

// inSet reports whether a header setSpec spec makes the item a member of set
// (spec is set or a descendant of it).
func inSet(spec, set string) bool { return spec == set || isDescendant(spec, set) }
