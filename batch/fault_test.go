package batch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// waitFor polls cond every 5 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// putOp is an op that writes meta value name = v.
func putOp(lane batch.Lane, name string, v byte, done func(error)) *batch.Op {
	return &batch.Op{Lane: lane, Done: done, Apply: func(tx *popstore.Txn) error {
		return tx.PutMetaValue(name, []byte{v})
	}}
}

// After a failed synced write the writer refuses work, counting every
// refusal, reopens the store on its probe, and accepts work again;
// everything acknowledged before is still there.
func TestFailedWriteRecoversAfterProbe(t *testing.T) {
	f := newFixture(t, batch.Options{ProbeInterval: 20 * time.Millisecond})
	require.NoError(t, f.w.SubmitWait(batch.LaneForeground, func(tx *popstore.Txn) error {
		return tx.PutMetaValue("before", []byte{1})
	}))
	ioErr := errors.New("IO error: No space left on device")
	f.gate.fail(2, ioErr)
	rec := newRecorder()
	require.NoError(t, f.w.Submit(putOp(batch.LaneProduce, "failed", 2, rec.done(0))))
	rec.wait()
	require.ErrorIs(t, rec.err(0), ioErr)
	require.False(t, f.w.Writable())

	refused := 0
	for i := 0; i < 40 && f.w.Err() != nil; i++ {
		if err := f.w.Submit(putOp(batch.LaneForeground, "x", 0, nil)); err != nil {
			require.ErrorIs(t, err, batch.ErrFailed)
			refused++
		}
	}
	require.Positive(t, refused)
	require.GreaterOrEqual(t, f.w.Stats().Failed, uint64(1+refused), "every refused mutation is counted")
	require.GreaterOrEqual(t, metricValue(t, f.reg, "popshim_writer_failed_mutations_total", ""), float64(1+refused))

	waitFor(t, "recovery", f.w.Writable)
	require.NoError(t, f.w.Err())
	require.Equal(t, 0.0, metricValue(t, f.reg, "popshim_writer_failed", ""))
	require.Equal(t, 1.0, metricValue(t, f.reg, "popshim_writer_recoveries_total", ""))
	require.NoError(t, f.w.SubmitWait(batch.LaneForeground, func(tx *popstore.Txn) error {
		return tx.PutMetaValue("after", []byte{3})
	}))
	v, err := f.store.MetaValue("before")
	require.NoError(t, err)
	require.Equal(t, []byte{1}, v)
	v, err = f.store.MetaValue("after")
	require.NoError(t, err)
	require.Equal(t, []byte{3}, v)
}

// Close while the writer is failed (probe running) neither hangs nor
// aborts, and the store closes after it.
func TestCloseWhileFailed(t *testing.T) {
	f := newFixture(t, batch.Options{ProbeInterval: time.Hour})
	f.gate.fail(1, errors.New("IO error: fsync failed"))
	require.Error(t, f.w.SubmitWait(batch.LaneForeground, func(tx *popstore.Txn) error {
		return tx.PutMetaValue("x", []byte{1})
	}))
	require.ErrorIs(t, f.w.Close(), batch.ErrFailed)
	require.NoError(t, f.store.Close())
}

// The queued bytes never pass MaxQueuedBytes: a Submit that would passes
// gets ErrBusy (counted as a reject) while anything is queued.
func TestQueuedBytesBound(t *testing.T) {
	f := newFixture(t, batch.Options{MaxQueuedBytes: 1000})
	release := f.stall(t, 1)
	rec := newRecorder()
	op := func(id int) *batch.Op {
		o := putOp(batch.LaneProduce, "b", byte(id), nil)
		o.Bytes = 400
		return o
	}
	a, b := op(0), op(1)
	a.Done, b.Done = rec.done(0), rec.done(1)
	require.NoError(t, f.w.Submit(a))
	require.NoError(t, f.w.Submit(b))
	require.ErrorIs(t, f.w.Submit(op(2)), batch.ErrBusy)
	require.Equal(t, int64(800), f.w.QueuedBytes())
	require.Equal(t, 800.0, metricValue(t, f.reg, "popshim_writer_queued_bytes", ""))
	require.Equal(t, 1.0, metricValue(t, f.reg, "popshim_writer_rejects_total", "produce"))
	release()
	rec.wait()
	require.NoError(t, rec.err(0))
	require.NoError(t, rec.err(1))
	require.Equal(t, int64(0), f.w.QueuedBytes())
	// One op larger than the bound is accepted when nothing is queued.
	big := putOp(batch.LaneProduce, "big", 1, nil)
	big.Bytes = 5000
	require.NoError(t, f.w.SubmitWait(big.Lane, big.Apply))
}

// A produce op that waited longer than MaxProduceWait is shed: Done gets
// a QueueTimeoutError (errors.Is ErrBusy) and nothing is written.
func TestProduceShedAfterWait(t *testing.T) {
	f := newFixture(t, batch.Options{MaxProduceWait: 30 * time.Millisecond})
	release := f.stall(t, 1)
	rec := newRecorder()
	applied := false
	require.NoError(t, f.w.Submit(&batch.Op{Lane: batch.LaneProduce, Done: rec.done(0), Apply: func(tx *popstore.Txn) error {
		applied = true
		return nil
	}}))
	require.NoError(t, f.w.Submit(putOp(batch.LaneForeground, "fg", 1, rec.done(1))))
	time.Sleep(60 * time.Millisecond)
	release()
	rec.wait()
	var qt *batch.QueueTimeoutError
	require.ErrorAs(t, rec.err(0), &qt)
	require.ErrorIs(t, rec.err(0), batch.ErrBusy)
	require.GreaterOrEqual(t, qt.Waited, 30*time.Millisecond)
	require.False(t, applied)
	require.NoError(t, rec.err(1), "other lanes are not shed")
	require.Equal(t, 1.0, metricValue(t, f.reg, "popshim_writer_rejects_total", "produce"))
}

// Above DiskWarningRatio the produce lane refuses with ErrDiskFull while
// the other lanes work; below it again, produce is accepted.
func TestDiskGuardRefusesProduce(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 16)
	s, err := popstore.Open(popstore.Options{Dir: filepath.Join(mnt, "db")})
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	w, err := batch.New(s, batch.Options{DiskWarningRatio: 0.8, DiskCheckInterval: 10 * time.Millisecond}, reg)
	require.NoError(t, err)
	defer s.Close()
	defer w.Close()
	require.NoError(t, w.SubmitWait(batch.LaneProduce, func(tx *popstore.Txn) error { return tx.PutMetaValue("p", []byte{1}) }))

	ballast := popstoretest.Fill(t, mnt)
	require.NoError(t, os.Truncate(ballast, 14<<20)) // ~90 % used, room left to write
	waitFor(t, "disk guard", func() bool { return !w.Writable() })
	err = w.Submit(putOp(batch.LaneProduce, "p", 2, nil))
	require.ErrorIs(t, err, batch.ErrDiskFull)
	require.Equal(t, 1.0, metricValue(t, reg, "popshim_writer_disk_full", ""))
	require.NoError(t, w.SubmitWait(batch.LaneForeground, func(tx *popstore.Txn) error { return tx.PutMetaValue("ack", []byte{1}) }),
		"ACKs and CHANGEs keep working")

	require.NoError(t, os.Remove(ballast))
	waitFor(t, "disk guard release", w.Writable)
	require.NoError(t, w.SubmitWait(batch.LaneProduce, func(tx *popstore.Txn) error { return tx.PutMetaValue("p", []byte{3}) }))
}

// A produce op with a wait limit of its own (Op.MaxWait, as an
// END_TRANSACTION commit has) is written after MaxProduceWait passed while
// ordinary produce ops queued beside it are shed; one past its own limit
// is shed too. Group mode and sync mode with one worker.
func TestProduceShedRespectsOpMaxWait(t *testing.T) {
	for _, mode := range []batch.Mode{batch.ModeGroup, batch.ModeSync} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, batch.Options{Mode: mode, SyncWorkers: 1, MaxProduceWait: 30 * time.Millisecond})
			release := f.stall(t, 1)
			rec := newRecorder()
			waits := []time.Duration{0, time.Hour, -1, 40 * time.Millisecond, 0}
			for i, wait := range waits {
				op := putOp(batch.LaneProduce, "p"+strconv.Itoa(i), byte(i), rec.done(i))
				op.MaxWait = wait
				require.NoError(t, f.w.Submit(op))
			}
			time.Sleep(60 * time.Millisecond) // every op has waited past 30 and 40 ms
			release()
			rec.wait()
			for i, wait := range waits {
				v, err := f.store.MetaValue("p" + strconv.Itoa(i))
				if wait == 0 || wait == 40*time.Millisecond {
					require.ErrorIs(t, rec.err(i), batch.ErrBusy, "op %d (MaxWait %v) shed", i, wait)
					require.ErrorIs(t, err, popstore.ErrNotFound, "op %d not written", i)
					continue
				}
				require.NoError(t, rec.err(i), "op %d (MaxWait %v) written", i, wait)
				require.NoError(t, err)
				require.Equal(t, []byte{byte(i)}, v)
			}
		})
	}
}

// An op's own wait limit below MaxProduceWait sheds it earlier, while an
// ordinary produce op queued beside it is written (group and sync mode).
func TestProduceShedOpLimitBelowDefault(t *testing.T) {
	for _, mode := range []batch.Mode{batch.ModeGroup, batch.ModeSync} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, batch.Options{Mode: mode, SyncWorkers: 1, MaxProduceWait: time.Hour})
			release := f.stall(t, 1)
			rec := newRecorder()
			plain := putOp(batch.LaneProduce, "plain", 1, rec.done(0))
			short := putOp(batch.LaneProduce, "short", 2, rec.done(1))
			short.MaxWait = 20 * time.Millisecond
			require.NoError(t, f.w.Submit(plain))
			require.NoError(t, f.w.Submit(short))
			time.Sleep(60 * time.Millisecond) // past 20 ms, far below an hour
			release()
			rec.wait()
			require.NoError(t, rec.err(0))
			require.ErrorIs(t, rec.err(1), batch.ErrBusy)
			_, err := f.store.MetaValue("short")
			require.ErrorIs(t, err, popstore.ErrNotFound)
		})
	}
}

// Submit refuses an op that would pass MaxQueuedBytes, but not one marked
// PastByteBound; both queued ones are written.
func TestPastByteBoundAccepted(t *testing.T) {
	f := newFixture(t, batch.Options{MaxQueuedBytes: 1000})
	release := f.stall(t, 1)
	rec := newRecorder()
	big := putOp(batch.LaneProduce, "big", 1, rec.done(0))
	big.Bytes = 900
	require.NoError(t, f.w.Submit(big))
	over := putOp(batch.LaneProduce, "over", 2, nil)
	over.Bytes = 200
	require.ErrorIs(t, f.w.Submit(over), batch.ErrBusy, "past the byte bound")
	end := putOp(batch.LaneProduce, "end", 3, rec.done(1))
	end.Bytes = 200
	end.PastByteBound = true
	require.NoError(t, f.w.Submit(end))
	rb := putOp(batch.LaneForeground, "rollback", 4, rec.done(2))
	rb.Bytes = 200
	rb.PastByteBound = true
	require.NoError(t, f.w.Submit(rb), "any lane")
	release()
	rec.wait()
	for i, name := range []string{"big", "end", "rollback"} {
		require.NoError(t, rec.err(i), name)
		_, err := f.store.MetaValue(name)
		require.NoError(t, err, name)
	}
}
