package timer

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// paceLoop opens a real store and writer with n timers of 1 KiB bodies due
// at 1,000 ms, and a loop over them whose clock says now (not started: the
// test calls pass itself).
func paceLoop(t *testing.T, n int, now int64) (*Loop, *batch.Writer, *popstore.Store) {
	t.Helper()
	st, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	w, err := batch.New(st, batch.Options{}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close(); st.Close() })
	require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error {
		for i := 0; i < n; i++ {
			if _, err := tx.PutTimer(1000, 0, popstoretest.Record("T", 0, 1, bytes.Repeat([]byte{'x'}, 1024))); err != nil {
				return err
			}
		}
		return nil
	}))
	l := New(Deps{Log: zerolog.Nop(), Store: st, Writer: w, TopicExists: func(string) bool { return true },
		Now: func() int64 { return now },
		Metrics: Metrics{Pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "p"}),
			Delivered: prometheus.NewCounter(prometheus.CounterOpts{Name: "d"}),
			Lateness:  prometheus.NewHistogram(prometheus.HistogramOpts{Name: "l"}),
			Dropped:   prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})}})
	return l, w, st
}

// TestPaceYieldsToForeground: with no foreground work a pass delivers a
// full chunk and asks for the next at once; after a foreground op was
// accepted, past the first burstItems of the drain, the pass delivers at most
// busyChunkBytes of records and rests.
func TestPaceYieldsToForeground(t *testing.T) {
	l, w, st := paceLoop(t, 2*ChunkItems, 2000)
	l.pace.drained = burstItems // past the unpaced burst
	require.Zero(t, l.pass(), "idle: next pass at once")
	require.EqualValues(t, ChunkItems, 2*ChunkItems-st.PendingTimers(), "idle: a full chunk")

	before := st.PendingTimers()
	require.NoError(t, w.SubmitWait(batch.LaneForeground, func(*popstore.Txn) error { return nil }))
	wait := l.pass()
	delivered := before - st.PendingTimers()
	require.Positive(t, delivered)
	require.LessOrEqual(t, delivered, int64(busyChunkBytes/1024), "busy: chunk bounded by busyChunkBytes")
	require.Positive(t, wait, "busy: the loop rests")
	require.LessOrEqual(t, wait, maxRest)

	before = st.PendingTimers()
	require.Zero(t, l.pass(), "no foreground op since the last pass: back to full chunks")
	require.Equal(t, min(before, int64(ChunkItems)), before-st.PendingTimers())
}

// TestPaceNotInBurst: the first burstItems timers of a drain are not
// paced, foreground work or not.
func TestPaceNotInBurst(t *testing.T) {
	l, w, st := paceLoop(t, 2*ChunkItems, 2000)
	require.NoError(t, w.SubmitWait(batch.LaneForeground, func(*popstore.Txn) error { return nil }))
	require.Zero(t, l.pass(), "within the burst: no rest")
	require.NoError(t, w.SubmitWait(batch.LaneForeground, func(*popstore.Txn) error { return nil }))
	require.Zero(t, l.pass(), "within the burst: no rest")
	require.Zero(t, st.PendingTimers(), "within the burst: full chunks")
}

func TestRest(t *testing.T) {
	half := pacer{share: 0.5}
	require.Equal(t, 4*time.Millisecond, half.rest(4*time.Millisecond), "half the time: rest as long as the op")
	quarter := pacer{share: 0.25}
	require.Equal(t, 12*time.Millisecond, quarter.rest(4*time.Millisecond), "a quarter: rest three times as long")
	require.Equal(t, maxRest, half.rest(time.Hour))
	whole := pacer{share: 1}
	require.Zero(t, whole.rest(4*time.Millisecond))
}

// TestPaceShareOneIsUnpaced: --timer-drain-share 1 turns pacing off: a
// pass after foreground work still delivers a full chunk and does not rest.
func TestPaceShareOneIsUnpaced(t *testing.T) {
	l, w, st := paceLoop(t, 2*ChunkItems, 2000)
	l.pace.share = 1
	l.pace.drained = burstItems
	require.NoError(t, w.SubmitWait(batch.LaneForeground, func(*popstore.Txn) error { return nil }))
	require.Zero(t, l.pass(), "share 1: no rest")
	require.EqualValues(t, ChunkItems, 2*ChunkItems-st.PendingTimers(), "share 1: a full chunk")
}
