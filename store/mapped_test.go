package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
)

// TestMappedLimit: with a limit below what the store maps, the periodic
// check pages the store files out, and every byte still reads back.
func TestMappedLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("store.mapped_limit is Linux only")
	}
	dir := t.TempDir()
	db, err := Open(policy(Options{Dir: dir, MappedLimit: 1, ValueLogFileSize: 1 << 20}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// 2.6 KB a record: in the value log. Ten commits: a value-log file
	// fills between them.
	meta := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("<m>%06d</m>", i)), 200) }
	for part := range 10 {
		b := openBatch(t, db, "r", "p")
		for i := part * 200; i < part*200+200; i++ {
			id := fmt.Sprint("id-", i)
			if err := b.Apply(&Record{Identifier: id}, meta(i), &Event{Identifier: id, Change: Created}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// Several value-log files, all but the newest paged out.
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	ms, err := storeMappings(dir, ".vlog")
	if err != nil || len(vlogs) < 3 || len(ms) != len(vlogs)-1 {
		t.Fatalf("%d value-log files, mappings to page out %v: %v", len(vlogs), ms, err)
	}
	before0, _ := rssFile()
	db.boundMapped() // what the loop does every mappedEvery
	if after := db.Mapped().Resident; after >= before0 {
		t.Errorf("RssFile %d before the pageout, %d after", before0, after)
	}
	st := db.Mapped()
	if st.Pageouts == 0 || st.Limit != 1 || st.Resident == 0 {
		t.Fatalf("nothing paged out: %+v", st)
	}
	snap := begin(t, db)
	for i := range 2000 {
		got, err := snap.Metadata("r", "p", fmt.Sprint("id-", i))
		if err != nil || !bytes.Equal(got, meta(i)) {
			t.Fatalf("record %d after the pageout: %v", i, err)
		}
	}
	// Without a limit nothing is paged out.
	db.mapped.limit = 0
	before := db.Mapped().Pageouts
	db.boundMapped()
	if db.Mapped().Pageouts != before {
		t.Fatal("paged out without a limit")
	}
}
