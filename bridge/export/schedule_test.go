package export

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestSchedule: a run at once and every heartbeat; a wake after a quiet
// spell runs after settle; a wake right after a run waits for the
// interval; a stream of wakes does not starve the run.
func TestSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var runs []time.Duration
		wake := make(chan struct{}, 1)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			schedule(ctx, time.Minute, wake, func() {
				mu.Lock()
				runs = append(runs, time.Since(start))
				mu.Unlock()
				time.Sleep(2 * time.Second) // a run takes time
			})
		}()
		time.Sleep(90 * time.Second) // a quiet spell: a wake at 90 s runs at 91 s
		wake <- struct{}{}
		time.Sleep(10 * time.Second)
		wake <- struct{}{} // 100 s: the last run began at 91 s, so 151 s
		time.Sleep(100 * time.Second)
		// 200 s: wakes every 0.5 s for 50 s; the first runs at 211 s (the
		// interval after 151 s), the next at 271 s.
		for range 100 {
			wake <- struct{}{}
			time.Sleep(500 * time.Millisecond)
		}
		time.Sleep(400 * time.Second) // no wakes: the heartbeat, 5 minutes after 271 s
		cancel()
		<-done
		want := []time.Duration{0, 91 * time.Second, 151 * time.Second, 211 * time.Second, 271 * time.Second, 571 * time.Second}
		mu.Lock()
		defer mu.Unlock()
		if len(runs) != len(want) {
			t.Fatalf("runs at %v, want %v", runs, want)
		}
		for i, w := range want {
			if runs[i] != w {
				t.Errorf("run %d at %v, want %v (all: %v)", i, runs[i], w, runs)
			}
		}
	})
}
