package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRecordCodec(t *testing.T) {
	now := time.Date(2026, 11, 22, 1, 2, 3, 456789000, time.UTC)
	for _, r := range []Record{
		{},
		{Datestamp: now, Sets: []string{"a", "a:b", "論文"}, Namespace: "urn:x", Landing: "https://x/1", Length: 12345,
			MD5: "0123456789abcdef0123456789abcdef", SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			Modified: now, FirstSeen: now.Add(-time.Hour), Seq: 1 << 40},
		{Deleted: true, DatestampRaw: "aaaa-bb-cc", Seq: 3},
		// Every valid OAI datestamp round-trips, not only 1678–2262.
		{Datestamp: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), Modified: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
		{Datestamp: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), FirstSeen: time.Date(1500, 6, 1, 0, 0, 0, 0, time.UTC)},
		{Datestamp: time.Unix(0, 0).UTC()},
		// Well-known namespaces are stored by number; one close to one is not.
		{Namespace: "https://github.com/JPCOAR/schema/blob/master/2.0/", Landing: "https://x/2"},
		{Namespace: "http://www.openarchives.org/OAI/2.0/oai_dc/"},
		{Namespace: "http://www.w3.org/2005/Atom"},
		{Namespace: "https://github.com/JPCOAR/schema/blob/master/2.0"},
	} {
		// Without stems, and with a landing stem the record's landing page
		// may or may not begin with.
		for _, st := range []stems{{}, {Landing: "https://x/"}, {Landing: "https://x/1"}, {Landing: "https://y/"}} {
			var got Record
			if err := decodeRecord(encodeRecord(&r, st), &got, st); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Errorf("round trip with %+v\n got %+v\nwant %+v", st, got, r)
			}
		}
	}
}

// TestRecordCodecLandingStem: a landing page that begins with the landing
// stem is stored without it, and such a state is refused, not misread,
// without the stem or by a reader of version 4.
func TestRecordCodecLandingStem(t *testing.T) {
	const landing = "https://repo.example.ac.jp/records/12345"
	r := Record{Landing: landing, Modified: time.Unix(1e9, 0).UTC(), FirstSeen: time.Unix(1e9, 0).UTC()}
	st := stems{Landing: landingStem(landing)}
	if st.Landing != "https://repo.example.ac.jp/records/" {
		t.Fatalf("landing stem %q", st.Landing)
	}
	rel, whole := encodeRecord(&r, st), encodeRecord(&r, stems{})
	if len(whole)-len(rel) != len(st.Landing) {
		t.Errorf("relative: %d bytes, whole: %d; want %d fewer", len(rel), len(whole), len(st.Landing))
	}
	if rel[0] != recordV5 || rel[1]&flagLandingRel == 0 || whole[1]&flagLandingRel != 0 {
		t.Errorf("version and flags: %x, %x", rel[:2], whole[:2])
	}
	var got Record
	if err := decodeRecord(rel, &got, stems{}); !errors.Is(err, errCorrupt) {
		t.Errorf("relative state without its stem: %v, %+v", err, got)
	}
	// Version 4 never set the flag: a stray bit there is not read as one.
	v4 := slices.Clone(whole)
	v4[0], v4[1] = recordV4, v4[1]|flagLandingRel
	if err := decodeRecord(v4, &got, st); err != nil || got.Landing != landing {
		t.Errorf("version 4: %v, landing %q", err, got.Landing)
	}
}

func TestStemsOf(t *testing.T) {
	for _, c := range []struct{ in, landing, id string }{
		{"https://repo.example.ac.jp/records/12345", "https://repo.example.ac.jp/records/", "https://repo.example.ac.jp/records/"},
		{"oai:repo.example.ac.jp:00012345", "", "oai:repo.example.ac.jp:"},
		{"oai:demo.rsbridge.example:dept/論文 17:v2", "oai:demo.rsbridge.example:dept/", "oai:demo.rsbridge.example:"},
		{"http://hdl.handle.net/2115/1234", "http://hdl.handle.net/2115/", "http://hdl.handle.net/2115/"},
		{"https://host", "", ""},
		{"https://host/", "https://host/", "https://host/"},
		{"oai::x", "", ""},
		{"urn:nbn:jp:1", "", ""},
		{"", "", ""},
	} {
		if got := landingStem(c.in); got != c.landing {
			t.Errorf("landingStem(%q) = %q, want %q", c.in, got, c.landing)
		}
		if got := idStem(c.in); got != c.id {
			t.Errorf("idStem(%q) = %q, want %q", c.in, got, c.id)
		}
	}
	for _, c := range [][3]string{{"", "x", ""}, {"abc", "abd", "ab"}, {"ab", "abc", "ab"}, {"論文", "論理", "論"}, {"same", "same", "same"}} {
		if got := commonPrefix(c[0], c[1]); got != c[2] {
			t.Errorf("commonPrefix(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestRecordCodecNamespace: a well-known namespace takes one byte, and states
// written before version 3 (namespace always as a string) still decode.
func TestRecordCodecNamespace(t *testing.T) {
	const ns = "https://github.com/JPCOAR/schema/blob/master/2.0/"
	with, without := encodeRecord(&Record{Namespace: ns}, stems{}), encodeRecord(&Record{}, stems{})
	if len(with) != len(without)-1 { // its number, against 0 and an empty string
		t.Errorf("a well-known namespace: %d bytes, none: %d", len(with), len(without))
	}
	if other := encodeRecord(&Record{Namespace: "urn:x"}, stems{}); len(other) != len(without)+len("urn:x") {
		t.Errorf("another namespace: %d bytes, want %d", len(other), len(without)+len("urn:x"))
	}
	v2 := []byte{recordV2, 0}
	v2 = binary.AppendUvarint(v2, 0) // datestamp: zero
	v2 = binary.AppendUvarint(v2, 0) // raw datestamp
	v2 = binary.AppendUvarint(v2, 0) // sets
	v2 = binary.AppendUvarint(v2, uint64(len(ns)))
	v2 = append(v2, ns...)
	v2 = append(v2, 0)              // landing
	v2 = binary.AppendVarint(v2, 9) // length
	v2 = append(v2, 0, 0, 0, 0)     // no digests, zero times
	v2 = binary.AppendUvarint(v2, 2)
	var got Record
	if err := decodeRecord(v2, &got, stems{}); err != nil {
		t.Fatal(err)
	}
	if want := (Record{Namespace: ns, Length: 9, Seq: 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("version 2: got %+v\nwant %+v", got, want)
	}
	// A number beyond the list (a newer version's) is an error, not a guess.
	bad := encodeRecord(&Record{Namespace: ns}, stems{})
	if bad[5] != 3 { // version, flags, datestamp, raw datestamp, sets, namespace
		t.Fatalf("namespace number %d, want 3", bad[5])
	}
	bad[5] = byte(len(wellKnownNS) + 1)
	if err := decodeRecord(bad, &got, stems{}); err == nil {
		t.Error("an unknown namespace number decodes")
	}
}

// TestRecordCodecReadsV1: states written before version 2 still decode.
func TestRecordCodecReadsV1(t *testing.T) {
	now := time.Date(2026, 11, 22, 1, 2, 3, 456789000, time.UTC)
	v1 := []byte{recordV1, 1}
	v1 = binary.AppendVarint(v1, now.UnixNano()) // datestamp
	v1 = binary.AppendUvarint(v1, 0)             // raw datestamp
	v1 = binary.AppendUvarint(v1, 1)
	v1 = binary.AppendUvarint(v1, 1)
	v1 = append(v1, 'a')
	v1 = append(v1, 0, 0)                        // namespace, landing
	v1 = binary.AppendVarint(v1, 7)              // length
	v1 = append(v1, 0, 0)                        // no md5, no sha256
	v1 = binary.AppendVarint(v1, 0)              // modified: zero
	v1 = binary.AppendVarint(v1, now.UnixNano()) // first seen
	v1 = binary.AppendUvarint(v1, 5)
	var got Record
	if err := decodeRecord(v1, &got, stems{}); err != nil {
		t.Fatal(err)
	}
	want := Record{Datestamp: now, Sets: []string{"a"}, Length: 7, FirstSeen: now, Seq: 5, Deleted: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	st := stems{Landing: "https://x/"}
	f.Add(encodeRecord(&Record{Sets: []string{"a"}, Landing: "x", MD5: "0123456789abcdef0123456789abcdef"}, st))
	f.Add(encodeRecord(&Record{Landing: "https://x/1"}, st))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Record
		if decodeRecord(b, &r, st) == nil {
			var again Record
			if err := decodeRecord(encodeRecord(&r, st), &again, st); err != nil {
				t.Fatalf("re-encoding a decoded record fails: %v", err)
			}
			if again.Landing != r.Landing {
				t.Fatalf("landing %q re-read as %q", r.Landing, again.Landing)
			}
		}
	})
}

// TestShortEventStem: a short event leaves the identifier stem out when the
// identifier begins with it, and is refused without the stem.
func TestShortEventStem(t *testing.T) {
	st := stems{ID: "oai:repo.example.ac.jp:"}
	for _, c := range []struct {
		id   string
		st   stems
		size int
	}{
		{"oai:repo.example.ac.jp:00012345", st, 1 + len("00012345")},
		{"oai:other.example:1", st, 1 + len("oai:other.example:1")},
		{"oai:repo.example.ac.jp:1", stems{}, 1 + len("oai:repo.example.ac.jp:1")},
		{"oai:repo.example.ac.jp:", st, 1},
	} {
		b := shortEvent(c.id, c.st)
		if len(b) != c.size {
			t.Errorf("short event of %q with %+v: %d bytes, want %d", c.id, c.st, len(b), c.size)
		}
		var ev Event
		if short, err := decodeEvent(b, &ev, c.st); err != nil || !short || ev.Identifier != c.id {
			t.Errorf("short event of %q: %q, %v, %v", c.id, ev.Identifier, short, err)
		}
	}
	if _, err := decodeEvent(shortEvent("oai:repo.example.ac.jp:1", st), &Event{}, stems{}); !errors.Is(err, errCorrupt) {
		t.Errorf("relative short event without its stem: %v", err)
	}
}

// TestEventCodec: events and change entries round-trip through the binary
// form, and those stored as JSON by earlier versions are still read.
func TestEventCodec(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 123456000, time.UTC)
	evs := []Event{
		{Time: at, Identifier: "oai:x:1", Change: Created, SetsAfter: []string{"a", "a:b"}, SHA256: strings.Repeat("ab", 32), MD5: strings.Repeat("cd", 16), Length: 2048, Datestamp: at.Truncate(time.Second)},
		{Time: at.Add(time.Microsecond), Identifier: "dept/論文 7:v1", Change: Deleted, SetsBefore: []string{"a"}, Datestamp: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Time: at, Identifier: "", Change: Updated},
	}
	for _, want := range evs {
		var got Event
		if short, err := decodeEvent(encodeEvent(&want), &got, stems{}); err != nil || short || !reflect.DeepEqual(got, want) {
			t.Errorf("event %+v: got %+v, %v", want, got, err)
		}
		legacy, _ := json.Marshal(want)
		got = Event{}
		if short, err := decodeEvent(legacy, &got, stems{}); err != nil || short || !reflect.DeepEqual(got, want) {
			t.Errorf("JSON event %+v: got %+v, %v", want, got, err)
		}
		se := SetEvent{Time: want.Time, Identifier: want.Identifier, Change: want.Change, SHA256: want.SHA256, MD5: want.MD5, Length: want.Length, Datestamp: want.Datestamp}
		var gotSE SetEvent
		if err := decodeSetEvent(encodeSetEvent(&se), &gotSE); err != nil || gotSE != se {
			t.Errorf("change entry %+v: got %+v, %v", se, gotSE, err)
		}
		legacy, _ = json.Marshal(se)
		gotSE = SetEvent{}
		if err := decodeSetEvent(legacy, &gotSE); err != nil || gotSE != se {
			t.Errorf("JSON change entry %+v: got %+v, %v", se, gotSE, err)
		}
	}
	for _, bad := range [][]byte{nil, {9}, {eventV1}, encodeEvent(&evs[0])[:20]} {
		if _, err := decodeEvent(bad, &Event{}, stems{}); err == nil {
			t.Errorf("decodeEvent(%x) accepted", bad)
		}
		if err := decodeSetEvent(bad, &SetEvent{}); err == nil && len(bad) < 20 {
			t.Errorf("decodeSetEvent(%x) accepted", bad)
		}
	}
}
