package dueloop

import (
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// A Runner whose pass asks for an hour's sleep runs again only when an
// entry due before that hour is noted (or it is triggered), hands the
// earliest noted due time to the pass once, and stops idempotently.
func TestNoteWakesAndLowestIsTakenOnce(t *testing.T) {
	var now atomic.Int64
	now.Store(1_000)
	lows := make(chan int64, 8)
	var r *Runner
	r = New(now.Load, func() time.Duration {
		lows <- r.TakeLowest()
		return time.Hour
	})
	r.Start()
	defer r.Stop()
	if got := <-lows; got != math.MaxInt64 {
		t.Fatalf("first pass saw lowest %d, want none", got)
	}
	waitPasses(t, r, 1)
	r.Note(now.Load() + 2*time.Hour.Milliseconds()) // after the planned wake-up: no pass
	r.Note(5_000)                                   // before it: a pass, which sees the earlier of the two
	if got := <-lows; got != 5_000 {
		t.Fatalf("woken pass saw lowest %d, want 5000", got)
	}
	waitPasses(t, r, 2)
	select {
	case got := <-lows:
		t.Fatalf("an unexpected pass ran (lowest %d)", got)
	case <-time.After(50 * time.Millisecond):
	}
	r.Trigger()
	if got := <-lows; got != math.MaxInt64 {
		t.Fatalf("triggered pass saw lowest %d, want none (taken by the pass before)", got)
	}
	r.Stop()
	r.Stop()
	select {
	case <-r.Quit():
	default:
		t.Fatal("Quit is not closed after Stop")
	}
}

// Stop of a Runner that never started returns at once.
func TestStopWithoutStart(t *testing.T) {
	r := New(func() int64 { return 0 }, func() time.Duration { return time.Hour })
	r.Stop()
	if r.Passes() != 0 {
		t.Fatalf("passes %d, want 0", r.Passes())
	}
}

func waitPasses(t *testing.T, r *Runner, n uint64) {
	t.Helper()
	for i := 0; i < 2000 && r.Passes() < n; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if r.Passes() < n {
		t.Fatalf("passes %d, want %d", r.Passes(), n)
	}
}
