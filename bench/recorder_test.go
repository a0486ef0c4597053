package bench

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

func TestRecorderDrainAndSummary(t *testing.T) {
	r := newRecorder([]string{"a", "b"}, 3)
	var wg sync.WaitGroup
	// 4 goroutines × 1000: latencies 1..1000 µs on series a, every 10th
	// reply SYSTEM_BUSY, every 100th a transport error on series b.
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 1000; i++ {
				r.ok(g, 0, int64(i))
				if i%10 == 0 {
					r.fail(g+1, 0, codec.SystemBusy)
				}
				if i%100 == 0 {
					r.fail(g, 1, codeTransport)
				}
			}
		}()
	}
	wg.Wait()
	dst := r.newWindows()
	dst[1].record(5) // drainTo replaces what dst held
	r.drainTo(dst)
	require.EqualValues(t, 4000, dst[0].ok)
	require.EqualValues(t, 400, dst[0].busy)
	require.EqualValues(t, 0, dst[0].errs)
	require.EqualValues(t, 40, dst[1].errs)
	require.EqualValues(t, 40, dst[1].codes[codeTransport])

	s := summarize("a", dst[0], 2)
	require.InDelta(t, 2000, s.OpsPerSec, 1e-9)
	require.InDelta(t, 500, s.Latency.P50, 1) // 3 significant digits
	require.InDelta(t, 990, s.Latency.P99, 1)
	require.InDelta(t, 999, s.Latency.P999, 1)
	require.EqualValues(t, 1000, s.Latency.Max)
	require.InDelta(t, 500.5, s.Latency.Mean, 1)
	require.Equal(t, map[string]int64{"2": 400}, s.Codes)

	// Drained shards are empty: a second drain adds nothing.
	again := r.newWindows()
	r.drainTo(again)
	require.Zero(t, again[0].ok+again[0].busy+again[1].errs)
}

func TestWindowClampsOutOfRange(t *testing.T) {
	w := newWindow()
	w.record(0)
	w.record(histMaxMicros * 10)
	require.EqualValues(t, 2, w.ok)
	require.EqualValues(t, 2, w.h.TotalCount())
	require.Equal(t, w.h.ValueAtQuantile(0), w.h.ValueAtQuantile(1)) // the 0 became histMinMicros
}

func TestIntervalOfAndLatencyOfEmpty(t *testing.T) {
	w := newWindow()
	require.Equal(t, Latency{}, latencyOf(w))
	for i := range 100 {
		w.record(int64(1000 * (i + 1)))
	}
	w.fail(codec.SystemBusy)
	w.fail(codec.MessageIllegal)
	iv := intervalOf(w, 0.5)
	require.InDelta(t, 200, iv.OpsPerSec, 1e-9)
	require.EqualValues(t, 1, iv.Busy)
	require.EqualValues(t, 1, iv.Errors)
	require.InDelta(t, 100000, iv.Max, 100)
}
