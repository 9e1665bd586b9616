package store

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Record states are read for every entry of every list, so they use a compact
// binary form instead of JSON: a version byte, then fields as varints and
// length-prefixed strings, with the digests as raw bytes. Version 2 stores
// times as seconds and nanoseconds, so every valid OAI datestamp (years 0001
// to 9999) round-trips; version 1 stored UnixNano, which wraps outside
// 1678–2262, and is still read. Version 3 writes a well-known metadata
// namespace as its number in wellKnownNS (the namespace was a third of a
// state, stored twice per set membership and rewritten by every compaction).
// Version 4 gives the flags byte (1: deleted) two more: 2, FirstSeen is
// Modified (and is not written twice); 4, the event at Seq is stored short
// (Record.eventShort). Version 5 gives it one more: 8, the landing page is
// stored without the namespace's landing stem (stems.go). Each is a version
// an older rsbridge does not know, so that it refuses the state rather than
// misreads it.
const (
	recordV1 = 1
	recordV2 = 2
	recordV3 = 3
	recordV4 = 4
	recordV5 = 5

	flagDeleted    = 1
	flagFirstIsMod = 2
	flagEventShort = 4
	flagLandingRel = 8
)

// wellKnownNS are the metadata namespaces a version 3 state names by number
// (position + 1; 0 means the namespace follows as a string). Append only:
// stored states refer to these positions.
var wellKnownNS = [...]string{
	"http://www.openarchives.org/OAI/2.0/oai_dc/",
	"https://github.com/JPCOAR/schema/blob/master/1.0/",
	"https://github.com/JPCOAR/schema/blob/master/2.0/",
	"http://irdb.nii.ac.jp/oai",
	"http://ju.nii.ac.jp/junii2",
	"https://irdb.nii.ac.jp/schema/jpcoar/1.0/",
	"http://irdb.nii.ac.jp/dspace-oai",
	"http://purl.org/dc/elements/1.1/",
	"http://www.loc.gov/mods/v3",
	"http://www.loc.gov/MARC21/slim",
	"http://datacite.org/schema/kernel-4",
	"http://namespace.openaire.eu/schema/oaire/",
	"http://www.lyncode.com/xoai",
	"http://www.w3.org/1999/02/22-rdf-syntax-ns#",
	"http://www.w3.org/2005/Atom",
}

func appendNamespace(b []byte, ns string) []byte {
	for i, w := range wellKnownNS {
		if ns == w {
			return binary.AppendUvarint(b, uint64(i+1))
		}
	}
	return appendString(binary.AppendUvarint(b, 0), ns)
}

func (d *reader) namespace() string {
	i := d.uvarint()
	switch {
	case i == 0:
		return d.str()
	case i <= uint64(len(wellKnownNS)):
		return wellKnownNS[i-1]
	}
	d.err = errCorrupt
	return ""
}

// errCorrupt marks stored data that cannot be read as written: a state,
// event or entry that does not decode, or an entry whose event is gone.
var errCorrupt = errors.New("corrupt store data")

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTime writes nanoseconds+1 (0 marks the zero time), then, for a
// non-zero time, Unix seconds.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(t.Nanosecond())+1)
	return binary.AppendVarint(b, t.Unix())
}

func appendHex(b []byte, h string, n int) []byte {
	raw, err := hex.DecodeString(h)
	if err != nil || len(raw) != n {
		return append(b, 0)
	}
	return append(append(b, 1), raw...)
}

// encodeRecord serialises the state part of a record (not its key fields),
// its landing page relative to st.Landing when it begins with it.
func encodeRecord(r *Record, st stems) []byte {
	b := make([]byte, 0, 160+len(r.Landing)+len(r.Namespace))
	b = append(b, recordV5)
	var flags byte
	if r.Deleted {
		flags |= flagDeleted
	}
	firstIsMod := r.FirstSeen.Equal(r.Modified)
	if firstIsMod {
		flags |= flagFirstIsMod
	}
	if r.eventShort {
		flags |= flagEventShort
	}
	landing := r.Landing
	if rest, ok := strings.CutPrefix(landing, st.Landing); ok && st.Landing != "" {
		landing = rest
		flags |= flagLandingRel
	}
	b = append(b, flags)
	b = appendTime(b, r.Datestamp)
	b = appendString(b, r.DatestampRaw)
	b = binary.AppendUvarint(b, uint64(len(r.Sets)))
	for _, s := range r.Sets {
		b = appendString(b, s)
	}
	b = appendNamespace(b, r.Namespace)
	b = appendString(b, landing)
	b = binary.AppendVarint(b, r.Length)
	b = appendHex(b, r.MD5, 16)
	b = appendHex(b, r.SHA256, 32)
	b = appendTime(b, r.Modified)
	if !firstIsMod {
		b = appendTime(b, r.FirstSeen)
	}
	b = binary.AppendUvarint(b, r.Seq)
	return b
}

type reader struct {
	b   []byte
	err error
	v1  bool // times as UnixNano
}

func (d *reader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *reader) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *reader) bytes(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errCorrupt
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *reader) str() string { return string(d.bytes(int(d.uvarint()))) }

func (d *reader) time() time.Time {
	if d.v1 {
		if n := d.varint(); n != 0 {
			return time.Unix(0, n).UTC()
		}
		return time.Time{}
	}
	ns := d.uvarint()
	if ns == 0 {
		return time.Time{}
	}
	if ns > 1e9 {
		d.err = errCorrupt
		return time.Time{}
	}
	return time.Unix(d.varint(), int64(ns-1)).UTC()
}

func (d *reader) hex(n int) string {
	if flag := d.bytes(1); d.err != nil || flag[0] == 0 {
		return ""
	}
	return hex.EncodeToString(d.bytes(n))
}

// decodeRecord fills the state part of r; st are the stems of r's
// repository and format (DB.stems).
func decodeRecord(b []byte, r *Record, st stems) error {
	if len(b) < 2 || b[0] < recordV1 || b[0] > recordV5 {
		return fmt.Errorf("%w: unknown version", errCorrupt)
	}
	flags := b[1]
	switch {
	case b[0] < recordV4:
		flags &= flagDeleted
	case b[0] < recordV5:
		flags &^= flagLandingRel
	}
	r.Deleted = flags&flagDeleted != 0
	r.eventShort = flags&flagEventShort != 0
	d := &reader{b: b[2:], v1: b[0] == recordV1}
	r.Datestamp = d.time()
	r.DatestampRaw = d.str()
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return errCorrupt
	}
	r.Sets = nil
	for i := uint64(0); i < n && d.err == nil; i++ {
		r.Sets = append(r.Sets, d.str())
	}
	if b[0] >= recordV3 {
		r.Namespace = d.namespace()
	} else {
		r.Namespace = d.str()
	}
	if flags&flagLandingRel != 0 {
		if st.Landing == "" {
			return fmt.Errorf("%w: landing page relative to a stem the store does not hold", errCorrupt)
		}
		// One allocation: the conversion inside the concatenation is not one.
		r.Landing = st.Landing + string(d.bytes(int(d.uvarint())))
	} else {
		r.Landing = d.str()
	}
	r.Length = d.varint()
	r.MD5 = d.hex(16)
	r.SHA256 = d.hex(32)
	r.Modified = d.time()
	if flags&flagFirstIsMod != 0 {
		r.FirstSeen = r.Modified
	} else {
		r.FirstSeen = d.time()
	}
	r.Seq = d.uvarint()
	return d.err
}

// getRecord reads a record state from a transaction.
func getRecord(txn *badger.Txn, k []byte, r *Record, st stems) (bool, error) {
	it, err := txn.Get(k)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, it.Value(func(v []byte) error { return decodeRecord(v, r, st) })
}

// Change events and their per-set entries are written once per record and
// resource set, so they too are binary: they make up most of the LSM tree
// (the metadata bytes live in the value log), and every byte there is
// rewritten by each compaction as the store grows. A version byte, then the
// fields; digests raw. Events stored as JSON by earlier versions start with
// '{' and are still read.
//
// Most events are a record's first: created, in no set before, saying what
// the record's state then says. Such an event is stored short, the version
// eventShort and the identifier, for as long as the state says it
// (Record.eventShort); the batch that changes the state first writes the
// event in full (Batch.put). It is read through the state (eventReader). A
// harvest writes fewer bytes into the tree (an event was 113 of a record's
// ~390 bytes there) and compactions rewrite fewer. eventShortRel is a short
// event whose identifier begins with the namespace's identifier stem
// (stems.go), which it leaves out.
const (
	eventV1       = 1
	eventShort    = 2
	eventShortRel = 3
)

// shortEvent is the stored form of an event the state it created says.
func shortEvent(id string, st stems) []byte {
	if rest, ok := strings.CutPrefix(id, st.ID); ok && st.ID != "" {
		return append([]byte{eventShortRel}, rest...)
	}
	return append([]byte{eventShort}, id...)
}

func encodeEvent(ev *Event) []byte {
	b := appendHead(make([]byte, 0, 96+len(ev.Identifier)), ev.Time, ev.Identifier, ev.Change)
	for _, sets := range [][]string{ev.SetsBefore, ev.SetsAfter} {
		b = binary.AppendUvarint(b, uint64(len(sets)))
		for _, s := range sets {
			b = appendString(b, s)
		}
	}
	return appendContent(b, ev.SHA256, ev.MD5, ev.Length, ev.Datestamp)
}

// appendHead writes the version and what events and change entries begin
// with.
func appendHead(b []byte, t time.Time, id string, c Change) []byte {
	b = append(b, eventV1)
	b = appendTime(b, t)
	b = appendString(b, id)
	return append(b, byte(c))
}

// appendContent writes what an event and a change entry say of the
// content: digests, length, upstream datestamp.
func appendContent(b []byte, sha256, md5 string, length int64, datestamp time.Time) []byte {
	b = appendHex(b, sha256, 32)
	b = appendHex(b, md5, 16)
	b = binary.AppendVarint(b, length)
	return appendTime(b, datestamp)
}

// content reads what appendContent wrote.
func (d *reader) content() (sha256, md5 string, length int64, datestamp time.Time) {
	sha256 = d.hex(32)
	md5 = d.hex(16)
	length = d.varint()
	return sha256, md5, length, d.time()
}

// binaryReader reads an event or a change entry: one stored as JSON by an
// earlier version is decoded into legacy at once (the reader is nil), a
// binary one is checked for its version and read past it.
func binaryReader(b []byte, what string, legacy any) (*reader, error) {
	if len(b) > 0 && b[0] == '{' {
		return nil, json.Unmarshal(b, legacy)
	}
	if len(b) < 1 || b[0] != eventV1 {
		return nil, fmt.Errorf("%w: unknown %s version", errCorrupt, what)
	}
	return &reader{b: b[1:]}, nil
}

// head reads what events and change entries begin with.
func (d *reader) head() (time.Time, string, Change) {
	t := d.time()
	id := d.str()
	return t, id, Change(d.byte())
}

// decodeEvent fills ev's stored fields (not Seq, Repo, Prefix: the key's).
// A short event fills the identifier alone and reports short: the rest is
// the state's (eventReader). st are the stems of the event's repository and
// format.
func decodeEvent(b []byte, ev *Event, st stems) (short bool, err error) {
	switch {
	case len(b) > 0 && b[0] == eventShort:
		ev.Identifier = string(b[1:])
		return true, nil
	case len(b) > 0 && b[0] == eventShortRel:
		if st.ID == "" {
			return false, fmt.Errorf("%w: short event relative to a stem the store does not hold", errCorrupt)
		}
		ev.Identifier = st.ID + string(b[1:])
		return true, nil
	}
	d, err := binaryReader(b, "event", ev)
	if d == nil || err != nil {
		return false, err
	}
	ev.Time, ev.Identifier, ev.Change = d.head()
	for _, sets := range []*[]string{&ev.SetsBefore, &ev.SetsAfter} {
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			return false, errCorrupt
		}
		*sets = nil
		for i := uint64(0); i < n && d.err == nil; i++ {
			*sets = append(*sets, d.str())
		}
	}
	ev.SHA256, ev.MD5, ev.Length, ev.Datestamp = d.content()
	return false, d.err
}

func encodeSetEvent(se *SetEvent) []byte {
	b := appendHead(make([]byte, 0, 80+len(se.Identifier)), se.Time, se.Identifier, se.Change)
	return appendContent(b, se.SHA256, se.MD5, se.Length, se.Datestamp)
}

// decodeSetEvent fills se's stored fields (not Seq: the key's).
func decodeSetEvent(b []byte, se *SetEvent) error {
	d, err := binaryReader(b, "change entry", se)
	if d == nil || err != nil {
		return err
	}
	se.Time, se.Identifier, se.Change = d.head()
	se.SHA256, se.MD5, se.Length, se.Datestamp = d.content()
	return d.err
}

func (d *reader) byte() byte {
	if b := d.bytes(1); d.err == nil {
		return b[0]
	}
	return 0
}
