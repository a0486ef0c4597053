package batch_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

type fixture struct {
	store *popstore.Store
	w     *batch.Writer
	gate  *gateHook
	reg   *prometheus.Registry
}

func newFixture(t *testing.T, opts batch.Options) *fixture {
	t.Helper()
	f := &fixture{gate: newGateHook(), reg: prometheus.NewRegistry()}
	f.store, _ = popstoretest.Open(t, popstore.Options{WriteHook: f.gate.hook})
	w, err := batch.New(f.store, opts, f.reg)
	require.NoError(t, err)
	f.w = w
	t.Cleanup(func() { _ = w.Close() }) // runs before the store's cleanup
	return f
}

// stall submits one op and holds its write (write number n) until release.
func (f *fixture) stall(t *testing.T, n uint64) (release func()) {
	t.Helper()
	release = f.gate.hold(n)
	require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Apply: func(tx *popstore.Txn) error {
		return tx.PutMetaValue("stall", []byte{byte(n)})
	}}))
	f.gate.waitEntered(t, n)
	return release
}

// Ops queued while a write is in flight form the next batch, are applied and
// completed in accept order, and same-key CHANGE keeps the new record.
func TestGroupCommitOrderAndSameKey(t *testing.T) {
	f := newFixture(t, batch.Options{})
	release := f.stall(t, 1)
	rec := newRecorder()
	var applied []int
	submit := func(id int, lane batch.Lane, apply func(tx *popstore.Txn) error) {
		require.NoError(t, f.w.Submit(&batch.Op{Lane: lane, Apply: func(tx *popstore.Txn) error {
			applied = append(applied, id)
			return apply(tx)
		}, Done: rec.done(id)}))
	}
	ck := func(k popstore.CheckpointKey, pop int64) popstore.Checkpoint {
		return popstore.Checkpoint{Key: k, PopTimeMillis: pop}
	}
	// POP writes K1; CHANGE moves it to K2; CHANGE with an equal key rewrites K2.
	submit(1, batch.LaneForeground, func(tx *popstore.Txn) error { return tx.PutCheckpoint(ck(ckKey(100, 7), 1)) })
	submit(2, batch.LaneBackground, func(tx *popstore.Txn) error { return tx.PutCheckpoint(ck(ckKey(50, 1), 1)) })
	submit(3, batch.LaneForeground, func(tx *popstore.Txn) error {
		return tx.ReplaceCheckpoint(ckKey(100, 7), ck(ckKey(200, 7), 2))
	})
	submit(4, batch.LaneProduce, func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1, []byte("m")))
		return err
	})
	submit(5, batch.LaneForeground, func(tx *popstore.Txn) error {
		return tx.ReplaceCheckpoint(ckKey(200, 7), ck(ckKey(200, 7), 3))
	})
	release()
	rec.wait()
	require.Equal(t, []int{1, 2, 3, 4, 5}, applied, "applied in accept order across lanes")
	require.Equal(t, []int{1, 2, 3, 4, 5}, rec.ids, "completed in accept order")
	st := f.w.Stats()
	require.Equal(t, uint64(2), st.Batches, "the stall op's batch, then one batch for all five")
	require.Equal(t, uint64(2), st.Fsyncs)

	_, ok, _ := f.store.Checkpoint(ckKey(100, 7))
	require.False(t, ok, "old key deleted")
	got, ok, err := f.store.Checkpoint(ckKey(200, 7))
	require.NoError(t, err)
	require.True(t, ok, "same-key replacement must not delete the new record")
	require.Equal(t, int64(3), got.PopTimeMillis)
	require.Equal(t, int64(1), f.store.MaxOffset("T", 0))
}

// An Apply error fails that op alone; its writes are not in the batch.
func TestApplyErrorFailsOnlyThatOp(t *testing.T) {
	f := newFixture(t, batch.Options{})
	release := f.stall(t, 1)
	rec := newRecorder()
	bad := errors.New("bad receipt handle")
	for i := 0; i < 6; i++ {
		i := i
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Done: rec.done(i), Apply: func(tx *popstore.Txn) error {
			if err := tx.PutCheckpoint(popstore.Checkpoint{Key: ckKey(10, int64(i))}); err != nil {
				return err
			}
			if i%3 == 1 {
				return bad
			}
			return nil
		}}))
	}
	release()
	rec.wait()
	for i := 0; i < 6; i++ {
		_, ok, err := f.store.Checkpoint(ckKey(10, int64(i)))
		require.NoError(t, err)
		if i%3 == 1 {
			require.ErrorIs(t, rec.err(i), bad)
			require.False(t, ok, "failed op %d left a write", i)
		} else {
			require.NoError(t, rec.err(i))
			require.True(t, ok)
		}
	}
}

// A write that fails (rejected before the WAL) fails every op of its batch and
// none of the next batch's.
func TestWriteFailureFailsWholeBatchOnly(t *testing.T) {
	f := newFixture(t, batch.Options{})
	release1 := f.stall(t, 1)
	injected := fmt.Errorf("injected disk refusal: %w", popstore.ErrWriteRejected)
	f.gate.fail(2, injected)
	release2 := f.gate.hold(2)
	recA, recB := newRecorder(), newRecorder()
	for i := 0; i < 10; i++ {
		i := i
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Done: recA.done(i), Apply: func(tx *popstore.Txn) error {
			return tx.PutCheckpoint(popstore.Checkpoint{Key: ckKey(1, int64(i))})
		}}))
	}
	release1()
	f.gate.waitEntered(t, 2) // batch A is now in its (failing) write
	for i := 0; i < 10; i++ {
		i := i
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Done: recB.done(i), Apply: func(tx *popstore.Txn) error {
			return tx.PutCheckpoint(popstore.Checkpoint{Key: ckKey(2, int64(i))})
		}}))
	}
	release2()
	recA.wait()
	recB.wait()
	for i := 0; i < 10; i++ {
		require.ErrorIs(t, recA.err(i), popstore.ErrWriteRejected, "batch A op %d", i)
		require.NoError(t, recB.err(i), "batch B op %d", i)
		_, ok, _ := f.store.Checkpoint(ckKey(1, int64(i)))
		require.False(t, ok)
		_, ok, _ = f.store.Checkpoint(ckKey(2, int64(i)))
		require.True(t, ok)
	}
	require.NoError(t, f.w.Err())
	require.Equal(t, uint64(10), f.w.Stats().Failed)
}

// A write error of unknown WAL state stops the writer; with recovery
// disabled (ProbeInterval < 0), for good.
func TestStickyFailure(t *testing.T) {
	f := newFixture(t, batch.Options{ProbeInterval: -1})
	release1 := f.stall(t, 1)
	ioErr := errors.New("IO error: fsync failed")
	f.gate.fail(2, ioErr)
	release2 := f.gate.hold(2)
	recA, recB := newRecorder(), newRecorder()
	require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Done: recA.done(0), Apply: func(tx *popstore.Txn) error {
		return tx.PutCheckpoint(popstore.Checkpoint{Key: ckKey(1, 0)})
	}}))
	release1()
	f.gate.waitEntered(t, 2)
	require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneBackground, Done: recB.done(0)}))
	release2()
	recA.wait()
	recB.wait()
	require.ErrorIs(t, recA.err(0), ioErr)
	require.ErrorIs(t, recB.err(0), batch.ErrFailed, "queued op fails with the sticky error")
	require.ErrorIs(t, recB.err(0), ioErr, "which names the cause")
	require.ErrorIs(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground}), batch.ErrFailed)
	require.ErrorIs(t, f.w.Err(), batch.ErrFailed)
	require.Equal(t, 1.0, metricValue(t, f.reg, "popshim_writer_failed", ""))
	require.ErrorIs(t, f.w.Close(), batch.ErrFailed)
}

// A full lane answers ErrBusy at once; other lanes are unaffected.
func TestQueueFullReturnsErrBusy(t *testing.T) {
	f := newFixture(t, batch.Options{LaneCapacity: 4})
	release := f.stall(t, 1)
	defer release()
	rec := newRecorder()
	for i := 0; i < 4; i++ {
		require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Done: rec.done(i)}))
	}
	for i := 0; i < 3; i++ {
		require.ErrorIs(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground}), batch.ErrBusy)
	}
	require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneProduce, Done: rec.done(100)}))
	require.ErrorIs(t, f.w.Submit(&batch.Op{Lane: 7}), batch.ErrBadLane)
	st := f.w.Stats()
	require.Equal(t, uint64(3), st.Rejects[batch.LaneForeground])
	require.Equal(t, uint64(0), st.Rejects[batch.LaneProduce])
	require.Equal(t, 3.0, metricValue(t, f.reg, "popshim_writer_rejects_total", "foreground"))
	require.Equal(t, 4.0, metricValue(t, f.reg, "popshim_writer_queue_depth", "foreground"))
	release()
	rec.wait()
	for i := 0; i < 4; i++ {
		require.NoError(t, rec.err(i))
	}
}

// Close drains: every accepted op is written and completed before Close
// returns; later Submits get ErrClosed.
func TestCloseDrainsQueue(t *testing.T) {
	f := newFixture(t, batch.Options{MaxBatchOps: 16})
	release := f.stall(t, 1)
	var mu sync.Mutex
	completed := 0
	for i := 0; i < 100; i++ {
		i := i
		lane := batch.Lane(i % 3)
		require.NoError(t, f.w.Submit(&batch.Op{Lane: lane, Apply: func(tx *popstore.Txn) error {
			return tx.PutCheckpoint(popstore.Checkpoint{Key: ckKey(3, int64(i))})
		}, Done: func(err error) {
			require.NoError(t, err)
			mu.Lock()
			completed++
			mu.Unlock()
		}}))
	}
	closed := make(chan error)
	go func() { closed <- f.w.Close() }()
	release()
	require.NoError(t, <-closed)
	require.Equal(t, 100, completed, "Close returned before every accepted op completed")
	require.ErrorIs(t, f.w.Submit(&batch.Op{}), batch.ErrClosed)
	cks, err := f.store.ScanCheckpoints(3, 4, 1000)
	require.NoError(t, err)
	require.Len(t, cks, 100)
	require.Greater(t, f.w.Stats().Batches, uint64(100/16), "MaxBatchOps respected")
}

// Background ops take at most BackgroundShare of a batch; foreground fills
// the rest.
func TestBackgroundShareCap(t *testing.T) {
	f := newFixture(t, batch.Options{MaxBatchOps: 8, BackgroundShare: 0.25})
	release := f.stall(t, 1)
	var mu sync.Mutex
	batches := map[*popstore.Txn][]string{}
	var order []*popstore.Txn
	rec := newRecorder()
	submit := func(id int, lane batch.Lane) {
		require.NoError(t, f.w.Submit(&batch.Op{Lane: lane, Done: rec.done(id), Apply: func(tx *popstore.Txn) error {
			mu.Lock()
			if _, ok := batches[tx]; !ok {
				order = append(order, tx)
			}
			batches[tx] = append(batches[tx], lane.String()[:1])
			mu.Unlock()
			return tx.PutMetaValue(fmt.Sprint(id), nil)
		}}))
	}
	for i := 0; i < 10; i++ {
		submit(i, batch.LaneBackground)
	}
	for i := 10; i < 20; i++ {
		submit(i, batch.LaneForeground)
	}
	release()
	rec.wait()
	require.GreaterOrEqual(t, len(order), 3)
	first := batches[order[0]]
	require.Equal(t, []string{"b", "b", "f", "f", "f", "f", "f", "f"}, first, "2 background (25%% of 8) then 6 foreground, in accept order")
	for _, tx := range order {
		bg := 0
		for _, l := range batches[tx] {
			if l == "b" {
				bg++
			}
		}
		require.LessOrEqual(t, bg, 2)
	}
}

// Sync mode: every op is its own synced write, done by a pool of workers.
func TestSyncModeWritesEachOp(t *testing.T) {
	f := newFixture(t, batch.Options{Mode: batch.ModeSync, SyncWorkers: 4})
	var wg sync.WaitGroup
	for s := 0; s < 8; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				err := f.w.SubmitWait(batch.LaneForeground, func(tx *popstore.Txn) error {
					_, _, err := tx.AppendMessage("T", int32(s%2), popstoretest.Record("T", int32(s%2), 1, []byte("x")))
					return err
				})
				require.NoError(t, err)
			}
		}(s)
	}
	wg.Wait()
	st := f.w.Stats()
	require.Equal(t, uint64(160), st.Fsyncs)
	require.Equal(t, uint64(160), st.Batches)
	require.Equal(t, int64(80), f.store.MaxOffset("T", 0))
	require.Equal(t, int64(80), f.store.MaxOffset("T", 1))
	recs, _, err := f.store.ReadMessages("T", 0, 0, 100, 1<<30)
	require.NoError(t, err)
	for i, r := range recs {
		require.Equal(t, int64(i), popstoretest.QueueOffset(r), "queue offsets contiguous under concurrent sync writers")
	}
	require.NoError(t, f.w.Close())
}

func TestOptionsValidation(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	for _, o := range []batch.Options{{Mode: "fast"}, {SyncWorkers: -1}, {MaxBatchOps: -1}, {BackgroundShare: 2}} {
		_, err := batch.New(s, o, nil)
		require.Error(t, err, "%+v", o)
	}
	m, err := batch.ParseMode("sync")
	require.NoError(t, err)
	require.Equal(t, batch.ModeSync, m)
}

// metricValue gathers reg and returns the value of the counter or gauge
// series name (with label lane=lane when lane is non-empty).
func metricValue(t *testing.T, reg *prometheus.Registry, name, lane string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			ok := lane == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "lane" && l.GetValue() == lane {
					ok = true
				}
			}
			if ok {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("metric %s{lane=%q} not found", name, lane)
	return 0
}

// TestDonePanicDoesNotStopTheWriter: a panicking Done callback is contained;
// the next op of the same batch and later ops still complete.
func TestDonePanicDoesNotStopTheWriter(t *testing.T) {
	f := newFixture(t, batch.Options{})
	done := make(chan error, 1)
	require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Done: func(error) { panic("boom") }}))
	require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Done: func(err error) { done <- err }}))
	require.NoError(t, <-done)
	require.NoError(t, f.w.SubmitWait(batch.LaneForeground, func(tx *popstore.Txn) error {
		return tx.PutMetaValue("after-panic", []byte{1})
	}))
}
