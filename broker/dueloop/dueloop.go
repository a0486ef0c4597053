package dueloop

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Runner is one loop's goroutine and wake-up state. Build it with New,
// then Start; Stop ends it. Every method but Start may be called from any
// goroutine.
type Runner struct {
	now  func() int64         // broker clock, Unix ms
	pass func() time.Duration // one pass; returns the wait before the next
	kick chan struct{}
	quit chan struct{}
	done chan struct{}
	// passes counts completed passes (tests wait on it).
	passes atomic.Uint64
	// wake is when the next pass is planned (Unix ms, broker clock).
	wake atomic.Int64
	// lowest is the earliest due time Note saw since the last TakeLowest
	// (math.MaxInt64: none).
	lowest atomic.Int64
	once   sync.Once
	began  atomic.Bool
}

// New returns a stopped Runner that calls pass on its goroutine, with now
// as the clock the waits are planned on.
func New(now func() int64, pass func() time.Duration) *Runner {
	r := &Runner{now: now, pass: pass, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	r.wake.Store(math.MaxInt64)
	r.lowest.Store(math.MaxInt64)
	return r
}

// Start launches the goroutine; the first pass runs at once. Call once.
func (r *Runner) Start() {
	r.began.Store(true)
	go r.run()
}

// Stop ends the goroutine after its current pass and waits; safe when
// never started, idempotent.
func (r *Runner) Stop() {
	r.once.Do(func() {
		close(r.quit)
		if r.began.Load() {
			<-r.done
		}
	})
}

// Quit is closed when Stop is called: a pass waiting on the writer
// selects on it to give up.
func (r *Runner) Quit() <-chan struct{} { return r.quit }

// Trigger asks for a pass now (non-blocking).
func (r *Runner) Trigger() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Note records an entry due at dueMillis (broker clock, Unix ms) made
// durable and wakes the loop when that is before its planned pass. Never
// blocks.
func (r *Runner) Note(dueMillis int64) {
	for { // lowest = min(lowest, dueMillis)
		lo := r.lowest.Load()
		if dueMillis >= lo || r.lowest.CompareAndSwap(lo, dueMillis) {
			break
		}
	}
	if dueMillis < r.wake.Load() {
		r.Trigger()
	}
}

// TakeLowest returns the earliest due time noted since the last call
// (math.MaxInt64: none) and forgets it. The pass function calls it first.
func (r *Runner) TakeLowest() int64 { return r.lowest.Swap(math.MaxInt64) }

// Passes returns how many passes completed.
func (r *Runner) Passes() uint64 { return r.passes.Load() }

func (r *Runner) run() {
	defer close(r.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
		case <-r.kick:
		}
		wait := r.pass()
		r.passes.Add(1)
		r.wake.Store(r.now() + wait.Milliseconds())
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(wait)
	}
}
