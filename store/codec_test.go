package store

import (
	"reflect"
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
	} {
		var got Record
		if err := decodeRecord(encodeRecord(&r), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip\n got %+v\nwant %+v", got, r)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(&Record{Sets: []string{"a"}, Landing: "x", MD5: "0123456789abcdef0123456789abcdef"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Record
		if decodeRecord(b, &r) == nil {
			var again Record
			if err := decodeRecord(encodeRecord(&r), &again); err != nil {
				t.Fatalf("re-encoding a decoded record fails: %v", err)
			}
		}
	})
}
