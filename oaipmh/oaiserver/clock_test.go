package oaiserver

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	c := NewClock(t0)
	if !c.Now().Equal(t0) {
		t.Fatal("Now before any move")
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { c.Add(time.Second) })
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("after 10 concurrent Adds: %v", got)
	}
	c.Set(t0)
	if !c.Now().Equal(t0) {
		t.Error("Set")
	}
}
