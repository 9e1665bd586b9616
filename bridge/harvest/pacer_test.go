package harvest

import (
	"context"
	"testing"
	"time"
)

func TestPacer(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	p := NewPacer(25)
	p.now = func() time.Time { return now }
	if d := p.pause(40 * time.Millisecond); d != 0 {
		t.Fatalf("idle server: pause %v", d)
	}
	// A request in flight: the harvest works 25 % of the time.
	p.Begin()
	for _, c := range []struct{ worked, want time.Duration }{
		{40 * time.Millisecond, 120 * time.Millisecond},
		{0, 0},
		{time.Second, maxPause}, // capped
	} {
		if got := p.pause(c.worked); got != c.want {
			t.Errorf("worked %v: pause %v, want %v", c.worked, got, c.want)
		}
	}
	p.End()
	if p.inflight.Load() != 0 {
		t.Fatal("a request is still in flight after End")
	}
	// Just after the last request it still counts as serving; after the
	// quiet period it does not.
	if p.pause(40*time.Millisecond) == 0 {
		t.Error("no pause right after a request")
	}
	now = now.Add(quiet)
	if d := p.pause(40 * time.Millisecond); d != 0 {
		t.Errorf("pause %v after the quiet period", d)
	}
	if d := NewPacer(100).pause(time.Second); d != 0 {
		t.Errorf("harvest_share 100 paused %v", d)
	}
	var nilPacer *Pacer
	if err := nilPacer.yield(context.Background(), time.Second); err != nil || nilPacer.pause(time.Second) != 0 {
		t.Error("a nil pacer paused")
	}
}
