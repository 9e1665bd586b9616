package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEventsPerDay(t *testing.T) {
	clock := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
	db := openMem(t, func() time.Time { return clock })
	write := func(changes ...Change) {
		t.Helper()
		b := openBatch(t, db, "r", "p")
		for i, c := range changes {
			id := fmt.Sprintf("id%d", i)
			if err := b.Apply(&Record{Identifier: id, Deleted: c == Deleted}, []byte("<x/>"), &Event{Identifier: id, Change: c}); err != nil {
				t.Fatal(err)
			}
			clock = clock.Add(30 * time.Second) // the batch crosses midnight
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	write(Created, Created, Updated)  // 23:59:00, 23:59:30 on 1 March; 00:00:00 on the 2nd
	write(Deleted)                    // 2 March
	clock = clock.Add(48 * time.Hour) // 4 March
	write(Updated)
	from := time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC)
	var got []DayCount
	err := db.View(context.Background(), func(s *Snap) error {
		var err error
		got, err = s.EventsPerDay("r", "p", from, from.Add(5*24*time.Hour))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []DayCount{{Day: "2026-02-28"}, {Day: "2026-03-01", Created: 2}, {Day: "2026-03-02", Updated: 1, Deleted: 1},
		{Day: "2026-03-03"}, {Day: "2026-03-04", Updated: 1}, {Day: "2026-03-05"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	src, err := Open(policy(Options{Dir: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b := openBatch(t, src, "r", "p")
	for i := range 500 {
		id := fmt.Sprintf("oai:x:%04d", i)
		meta := bytes.Repeat([]byte("<dc>"+id+"</dc>"), 100) // beyond the value threshold: value log
		if err := b.Apply(&Record{Identifier: id, Sets: []string{"s"}}, meta, &Event{Identifier: id, Change: Created, SetsAfter: []string{"s"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := src.PutResourceDump("r", "p", AllSet, ResourceDump{At: time.Now()}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := src.Backup(ctx, &buf)
	if err != nil || st.Bytes != int64(buf.Len()) {
		t.Fatalf("backup: %v %+v", err, st)
	}

	dir := filepath.Join(t.TempDir(), "restored")
	if err := Restore(ctx, policy(Options{Dir: dir}), bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	dst, err := Open(policy(Options{Dir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	dump := func(db *DB) string {
		var out strings.Builder
		err := db.View(ctx, func(s *Snap) error {
			c, _ := s.Counter("r", "p")
			fmt.Fprintf(&out, "counter seq=%d live=%d\n", c.Seq, c.Live)
			if err := s.Resources("r", "p", "s", "", "", 1000, func(r *Record) error {
				m, err := s.Metadata("r", "p", r.Identifier)
				fmt.Fprintf(&out, "%s %d %d\n", r.Identifier, r.Seq, len(m))
				return err
			}); err != nil {
				return err
			}
			return s.Events("r", "p", 0, func(e *Event) error {
				fmt.Fprintf(&out, "event %d %s %s\n", e.Seq, e.Identifier, e.Change)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if a, b := dump(src), dump(dst); a != b || !strings.Contains(a, "counter seq=500 live=500") {
		t.Fatalf("restored store differs:\n%.300s\n---\n%.300s", a, b)
	}
	dst.View(ctx, func(s *Snap) error {
		if d, _ := s.ResourceDump("r", "p", AllSet); d != nil {
			t.Error("a dump descriptor was restored without its files")
		}
		return nil
	})
	// Writes after the restore win over restored versions.
	b = openBatch(t, dst, "r", "p")
	if err := b.Apply(&Record{Identifier: "oai:x:0000", Deleted: true}, nil, &Event{Identifier: "oai:x:0000", Change: Deleted, SetsBefore: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	dst.View(ctx, func(s *Snap) error {
		if r, _ := s.Record("r", "p", "oai:x:0000"); r == nil || !r.Deleted {
			t.Errorf("a write after restore is hidden: %+v", r)
		}
		return nil
	})

	// Refusals: a non-empty directory, a file that is not a backup.
	if err := Restore(ctx, policy(Options{Dir: dir}), bytes.NewReader(buf.Bytes())); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("restore over a store: %v", err)
	}
	if err := Restore(ctx, policy(Options{Dir: t.TempDir()}), strings.NewReader("<xml/>")); !errors.Is(err, ErrNotBackup) {
		t.Errorf("restore of a non-backup: %v", err)
	}
	ctxDone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := src.Backup(ctxDone, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled backup: %v", err)
	}
}
