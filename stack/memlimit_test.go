package stack

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The limit is the base while the heap other than held frames is small,
// follows that heap times the GC growth once it is large, and takes the
// smallest sample of the window, so one sample of passing garbage does not
// raise it.
func TestMemoryLimiterFollowsLiveHeapButNotFrames(t *testing.T) {
	const mib = 1 << 20
	m := newMemoryLimiter(320*mib, 2000*mib, 400, func() int64 { return 0 })
	require.Equal(t, int64(365*mib), m.limitFor(200*mib, 127*mib), "the only sample: 73 MiB other × 5")
	for range memoryLimitWindow {
		require.Equal(t, int64(320*mib), m.limitFor(140*mib, 127*mib))
	}
	require.Equal(t, int64(320*mib), m.limitFor(400*mib, 127*mib), "one large sample in a window of small ones")
	for range memoryLimitWindow {
		m.limitFor(300*mib, 0)
	}
	require.Equal(t, int64(1500*mib), m.limitFor(300*mib, 0), "300 MiB of broker state keeps --gc-percent's goal")
	require.Equal(t, int64(320*mib), m.limitFor(100*mib, 200*mib), "held above live counts as none other")
	for range memoryLimitWindow {
		m.limitFor(900*mib, 0)
	}
	require.Equal(t, int64(2000*mib), m.limitFor(900*mib, 0), "never above the ceiling")

	off := newMemoryLimiter(64*mib, 1000*mib, -1, func() int64 { return 0 })
	for range memoryLimitWindow {
		off.limitFor(100*mib, 0)
	}
	require.Equal(t, int64(200*mib), off.limitFor(100*mib, 0), "GC off: growth 2")
}

// run applies the limit to the runtime at once and stops with its context.
// Held frames are sampled once per GC cycle, with the live heap that
// cycle measured: frames that go after a GC do not turn that GC's live
// heap into broker state until the next GC measures it again.
func TestMemoryLimiterPairsHeldWithItsGC(t *testing.T) {
	const mib = 1 << 20
	held := int64(150 * mib)
	m := newMemoryLimiter(320*mib, 2000*mib, 400, func() int64 { return held })
	require.Equal(t, int64(320*mib), m.limitAt(7, 200*mib), "50 MiB other × 5 is under the base")
	held = 20 * mib // the flood's frames are gone; no GC since
	for range 2 * memoryLimitWindow {
		require.Equal(t, int64(320*mib), m.limitAt(7, 200*mib), "the same GC's live heap against later frames")
	}
	require.Equal(t, int64(320*mib), m.limitAt(8, 60*mib), "the next GC measures the heap without them")
	for range memoryLimitWindow {
		m.limitAt(9, 180*mib)
	}
	require.Equal(t, int64(800*mib), m.limitAt(9, 180*mib), "160 MiB of state measured at a GC × 5")
}

func TestMemoryLimiterAppliesAndStops(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	const base = 7 << 30 // above any live heap of this test binary
	m := newMemoryLimiter(base, base, gcPercent(), func() int64 { return 0 })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go m.run(ctx, done)
	require.Eventually(t, func() bool { return debug.SetMemoryLimit(-1) == base }, 5*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}
