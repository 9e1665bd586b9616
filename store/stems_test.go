package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// TestStems: a namespace's stems are learnt from its first records, stored
// before anything relative to them and never changed; states and short
// events that begin with them leave them out, others are stored whole; what
// reads them back (records, lists, events) gets what was harvested, from a
// reopened store too, next to states and events written before stems
// existed.
func TestStems(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	clock := t0
	now := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	open := func() *DB {
		t.Helper()
		db, err := Open(policy(Options{Dir: dir, Now: now}))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	defer func() { db.Close() }()

	const stem, landStem = "oai:repo.example.ac.jp:", "https://repo.example.ac.jp/records/"
	type rec struct{ id, landing string }
	harvest := func(repo string, recs []rec, discard bool) {
		t.Helper()
		b, err := db.NewBatch(repo, "p")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			change := Created
			if old, err := b.Get(r.id); err != nil {
				t.Fatal(err)
			} else if old != nil {
				change = Updated
			}
			ev := &Event{Identifier: r.id, Change: change, SetsAfter: []string{"s"}}
			if err := b.Apply(&Record{Identifier: r.id, Landing: r.landing, Sets: []string{"s"}}, []byte("<x/>"), ev); err != nil {
				t.Fatal(err)
			}
		}
		if discard {
			b.Discard()
			return
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// Written before stems existed: a version 4 state with its short event.
	err := db.bdb.Update(func(txn *badger.Txn) error {
		r := &Record{Identifier: stem + "0", Landing: landStem + "0", Sets: []string{"s"}, Modified: t0, FirstSeen: t0, Seq: 1, eventShort: true}
		v := encodeRecord(r, stems{})
		v[0] = recordV4
		for k, v := range map[string][]byte{
			string(key('r', "old", "p", r.Identifier)):      v,
			string(key('m', "old", "p", "s", r.Identifier)): nil,
			string(seqKey('e', 1, "old", "p")):              append([]byte{eventShort}, r.Identifier...),
			string(key('n', "old", "p")):                    []byte(`{"seq":1,"last":"2026-11-25T01:00:00Z","live":1,"version":1,"began":"2026-11-25T01:00:00Z"}`),
		} {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A stem comes from two records in a row that share it. The first
	// record has no landing page: the identifier stem is learnt with the
	// second; the landing pages of the second and third, then of the third
	// and fourth, share nothing but the scheme, so the landing stem is learnt
	// with the fifth, whose landing page is the stem itself.
	first := []rec{{stem + "1", ""}, {stem + "2", landStem + "2"}, {"oai:elsewhere.example:3", "https://other.example/3"}, {stem + "4", landStem + "4"}, {stem + "10", landStem}}
	harvest("r", first, false)
	harvest("old", []rec{{stem + "5", landStem + "5"}, {stem + "5b", landStem + "5b"}}, false)
	// A batch that learns stems and is discarded leaves them stored: the
	// next batch, whose records would suggest others, keeps them.
	harvest("d", []rec{{stem + "6", landStem + "6"}, {stem + "6b", landStem + "6b"}}, true)
	harvest("d", []rec{{"oai:x.example:7", "https://x.example/a/7"}, {stem + "8", landStem + "8"}}, false)
	// A later batch: an update and a new record.
	harvest("r", []rec{{stem + "2", landStem + "2b"}, {stem + "9", landStem + "9"}}, false)

	storedStems := func(repo string) stems {
		t.Helper()
		var s stems
		err := db.bdb.View(func(txn *badger.Txn) error {
			_, err := getJSON(txn, stemsKey(repo, "p"), &s)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := stems{Landing: landStem, ID: stem}
	for _, repo := range []string{"r", "old", "d"} {
		if got := storedStems(repo); got != want {
			t.Errorf("stems of %s: %+v, want %+v", repo, got, want)
		}
	}
	// How each state and event is stored: 'r' relative, 'w' whole.
	forms := func(repo string) (states, events string) {
		t.Helper()
		err := db.bdb.View(func(txn *badger.Txn) error {
			if err := scan(txn, prefixKey('r', repo, "p"), true, func(k, v []byte) error {
				states += map[bool]string{true: "r", false: "w"}[v[1]&flagLandingRel != 0]
				return nil
			}); err != nil {
				return err
			}
			return scan(txn, prefixKey('e', repo, "p"), true, func(k, v []byte) error {
				events += map[byte]string{eventShortRel: "r", eventShort: "w", eventV1: "f"}[v[0]]
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return states, events
	}
	for _, c := range []struct{ repo, states, events string }{
		// States by identifier: oai:elsewhere, 1 (no landing), 10 (the
		// stem alone), 2 (updated after the landing stem was learnt), 4
		// (before), 9. Events by sequence: 1 before the identifier stem,
		// 2 written in full when its record was updated, 3 elsewhere, 4,
		// 10, the update, 9.
		{"r", "wwrrwr", "wfwrrfr"},
		{"old", "wwr", "wwr"},
		{"d", "rw", "wr"},
	} {
		if states, events := forms(c.repo); states != c.states || events != c.events {
			t.Errorf("%s: states %s, events %s; want %s, %s", c.repo, states, events, c.states, c.events)
		}
	}

	// Everything reads back as harvested, before and after a reopening.
	read := func() []string {
		t.Helper()
		var out []string
		err := db.View(context.Background(), func(s *Snap) error {
			for _, repo := range []string{"r", "old", "d"} {
				for _, set := range []string{AllSet, "s"} {
					if err := s.Resources(repo, "p", set, "", "", 100, func(r *Record) error {
						one, err := s.Record(repo, "p", r.Identifier)
						if err != nil || one == nil || one.Landing != r.Landing {
							return fmt.Errorf("record %s: %+v, %v; listed with %q", r.Identifier, one, err, r.Landing)
						}
						out = append(out, fmt.Sprintf("%s %s %s %s", repo, cmp.Or(set, "all"), r.Identifier, r.Landing))
						return nil
					}); err != nil {
						return err
					}
				}
				if err := s.Events(repo, "p", 0, func(e *Event) error {
					out = append(out, fmt.Sprintf("%s event %d %s %s", repo, e.Seq, e.Change, e.Identifier))
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := read()
	wantLines := []string{
		"r all oai:elsewhere.example:3 https://other.example/3",
		"r all oai:repo.example.ac.jp:1 ",
		"r all oai:repo.example.ac.jp:10 https://repo.example.ac.jp/records/",
		"r all oai:repo.example.ac.jp:2 https://repo.example.ac.jp/records/2b",
		"r all oai:repo.example.ac.jp:4 https://repo.example.ac.jp/records/4",
		"r all oai:repo.example.ac.jp:9 https://repo.example.ac.jp/records/9",
		"r event 1 created oai:repo.example.ac.jp:1",
		"r event 2 created oai:repo.example.ac.jp:2",
		"r event 3 created oai:elsewhere.example:3",
		"r event 4 created oai:repo.example.ac.jp:4",
		"r event 5 created oai:repo.example.ac.jp:10",
		"r event 6 updated oai:repo.example.ac.jp:2",
		"r event 7 created oai:repo.example.ac.jp:9",
		"old all oai:repo.example.ac.jp:0 https://repo.example.ac.jp/records/0",
		"old all oai:repo.example.ac.jp:5 https://repo.example.ac.jp/records/5",
		"old all oai:repo.example.ac.jp:5b https://repo.example.ac.jp/records/5b",
		"old event 1 created oai:repo.example.ac.jp:0",
		"old event 2 created oai:repo.example.ac.jp:5",
		"old event 3 created oai:repo.example.ac.jp:5b",
		"d all oai:repo.example.ac.jp:8 https://repo.example.ac.jp/records/8",
		"d all oai:x.example:7 https://x.example/a/7",
		"d event 1 created oai:x.example:7",
		"d event 2 created oai:repo.example.ac.jp:8",
	}
	// The set's lines are the same records (read checks each against its
	// state); the expected list leaves them out.
	var gotAll []string
	for _, l := range before {
		if !strings.Contains(l, " s ") {
			gotAll = append(gotAll, l)
		}
	}
	if !slices.Equal(gotAll, wantLines) {
		t.Errorf("read back:\n%q\nwant\n%q", gotAll, wantLines)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	if after := read(); !slices.Equal(after, before) {
		t.Errorf("after reopening:\n%q\nbefore\n%q", after, before)
	}
}

// TestStemsLearntOnce: concurrent learners of one namespace agree on the
// stems the first of them stored.
func TestStemsLearntOnce(t *testing.T) {
	db := openMem(t, time.Now)
	got := make(chan stems, 8)
	for i := range 8 {
		go func() {
			db.mu.RLock()
			defer db.mu.RUnlock()
			s, err := db.learnStems("r", "p", fmt.Sprintf("https://h%d/", i), fmt.Sprintf("oai:h%d:", i))
			if err != nil {
				t.Error(err)
			}
			got <- s
		}()
	}
	var first stems
	for i := range 8 {
		s := <-got
		if i == 0 {
			first = s
		}
		if s != first || !s.complete() {
			t.Errorf("learner %d got %+v, another %+v", i, s, first)
		}
	}
	v, _ := json.Marshal(first)
	var stored stems
	err := db.bdb.View(func(txn *badger.Txn) error {
		_, err := getJSON(txn, stemsKey("r", "p"), &stored)
		return err
	})
	if err != nil || stored != first {
		t.Errorf("stored %+v (%v), learners got %s", stored, err, v)
	}
}
