package harvest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"
)

// TestQueueLimits: no more than the limit run at once, no more than perHost
// against one host; a run whose host is full does not hold up a later run
// for another host; a freed slot goes to the oldest waiting run that may
// take it; a cancelled waiting run leaves the line.
func TestQueueLimits(t *testing.T) {
	q := newQueue(3, 2, time.Now)
	type run struct {
		repo, host string
		w          *waiter
	}
	runs := []*run{{repo: "a1", host: "a"}, {repo: "a2", host: "a"}, {repo: "a3", host: "a"}, {repo: "b1", host: "b"}, {repo: "b2", host: "b"}}
	for _, r := range runs {
		r.w = q.enqueue(r.repo, r.host, KindHarvest)
	}
	granted := func() (names []string) {
		for _, r := range runs {
			if r.w.granted {
				names = append(names, r.repo)
			}
		}
		return names
	}
	if got := granted(); !slices.Equal(got, []string{"a1", "a2", "b1"}) {
		t.Fatalf("granted %v, want a1 a2 b1 (a3 waits for host a, b2 for the limit)", got)
	}
	st := q.state()
	if len(st.Running) != 3 || len(st.Waiting) != 2 || st.Waiting[0].Repository != "a3" || q.position("b2") != 2 {
		t.Fatalf("state %+v", st)
	}
	release := func(r *run) {
		rel, err := q.wait(context.Background(), r.w)
		if err != nil {
			t.Fatal(err)
		}
		rel()
		rel() // twice is once
	}
	release(runs[3]) // b1 ends: a3 is older but host a is full, so b2 goes
	if got := granted(); !slices.Contains(got, "b2") || slices.Contains(got, "a3") {
		t.Fatalf("after b1: granted %v", got)
	}
	release(runs[0]) // a1 ends: a3 goes
	if !runs[2].w.granted {
		t.Fatal("a3 not granted after a1 ended")
	}
	// A waiting run that is cancelled leaves the line.
	w := q.enqueue("c1", "c", KindReconcile)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.wait(ctx, w); err == nil {
		t.Fatal("cancelled wait returned a slot")
	}
	if st := q.state(); len(st.Waiting) != 0 || len(st.Running) != 3 {
		t.Fatalf("after the cancel: %+v", st)
	}
}

// TestQueueSlowHostDoesNotDelayOthers: with one host's runs taking forever,
// every other host's runs go through the remaining slots (synctest: virtual
// time).
func TestQueueSlowHostDoesNotDelayOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(4, 2, time.Now)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range 2 { // two runs on the dead host hold their slots until cancelled
			w := q.enqueue(fmt.Sprintf("slow%d", i), "slow.example", KindHarvest)
			go func() {
				rel, err := q.wait(ctx, w)
				if err == nil {
					<-ctx.Done()
					rel()
				}
			}()
		}
		done := make(chan string, 100)
		start := time.Now()
		for i := range 100 {
			w := q.enqueue(fmt.Sprintf("r%d", i), fmt.Sprintf("h%d.example", i%10), KindHarvest)
			go func() {
				rel, err := q.wait(ctx, w)
				if err != nil {
					return
				}
				time.Sleep(time.Second) // each run takes a second
				rel()
				done <- w.Repository
			}()
		}
		for range 100 {
			<-done
		}
		// 100 one-second runs through the 2 slots left: 50 s.
		if d := time.Since(start); d != 50*time.Second {
			t.Errorf("100 runs took %v, want 50s (2 free slots)", d)
		}
		cancel()
		synctest.Wait()
	})
}

func TestJitteredSchedules(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	// Offsets are stable and spread: 700 names over an hour.
	seen := map[time.Duration]int{}
	for i := range 700 {
		name := fmt.Sprintf("repo%03d", i)
		off := Offset(name, time.Hour)
		if off != Offset(name, time.Hour) || off < 0 || off >= time.Hour {
			t.Fatalf("%s: offset %v", name, off)
		}
		seen[off/time.Minute]++
	}
	for m, n := range seen {
		if n > 40 { // 700/60 ≈ 12 per minute on average
			t.Errorf("%d repositories start in minute %d", n, m)
		}
	}
	if Offset("x", 0) != 0 || Offset("x", time.Second) != 0 {
		t.Error("no jitter must mean no offset")
	}
	for _, tc := range []struct {
		spec   string
		jitter time.Duration
		want   []time.Time // the next activations after at
	}{
		{"@every 1h", 0, []time.Time{at.Add(time.Hour), at.Add(2 * time.Hour)}},
		{"@every 10m", 0, []time.Time{at.Add(10 * time.Minute), at.Add(20 * time.Minute)}},
		{"0 3 * * *", 0, []time.Time{time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)}},
	} {
		s, err := jittered(tc.spec, "r", tc.jitter)
		if err != nil {
			t.Fatal(err)
		}
		next := at
		for _, want := range tc.want {
			if next = s.Next(next); !next.Equal(want) {
				t.Errorf("%s: next %v, want %v", tc.spec, next, want)
			}
		}
	}
	// With jitter, the period is kept and the phase is the offset.
	for _, tc := range []struct {
		spec   string
		period time.Duration
		span   time.Duration
	}{{"@every 1h", time.Hour, time.Hour}, {"@every 5m", 5 * time.Minute, 5 * time.Minute}, {"0 * * * *", time.Hour, 10 * time.Minute}} {
		s, _ := jittered(tc.spec, "some-repo", 10*time.Minute)
		off := Offset("some-repo", min(10*time.Minute, tc.span))
		a := s.Next(at)
		b := s.Next(a)
		if b.Sub(a) != tc.period || a.Sub(at) > tc.period || a.Sub(at) <= 0 {
			t.Errorf("%s: %v then %v", tc.spec, a, b)
		}
		if phase := a.Sub(at.Truncate(tc.period)) % tc.period; phase != off%tc.period {
			t.Errorf("%s: phase %v, want the offset %v", tc.spec, phase, off)
		}
	}
	if _, err := jittered("nonsense", "r", 0); err == nil {
		t.Error("a bad spec parsed")
	}
	var _ cron.Schedule = phased{}
}
