package batch_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// testJob is a batch.Job that embeds its Op, as the ACK handler's does.
type testJob struct {
	op    batch.Op
	key   popstore.CheckpointKey
	fail  error       // returned by Apply
	cb    func(error) // a recorder's Done callback
	panic bool        // Done panics after recording
}

func (j *testJob) Apply(tx *popstore.Txn) error {
	if j.fail != nil {
		return j.fail
	}
	return tx.PutCheckpoint(popstore.Checkpoint{Key: j.key})
}

func (j *testJob) Done(err error) {
	j.cb(err)
	if j.panic {
		panic("job done panics")
	}
}

// Ops carrying a Job are applied, made durable and completed like
// Apply/Done ops, in accept order, in both modes; a failing Job.Apply fails
// only its own op and a panicking Job.Done is contained.
func TestJobOps(t *testing.T) {
	for _, mode := range []batch.Mode{batch.ModeGroup, batch.ModeSync} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, batch.Options{Mode: mode, SyncWorkers: 1})
			rec := newRecorder()
			applyErr := errors.New("job refused")
			for i := 0; i < 20; i++ {
				j := &testJob{key: ckKey(7, int64(i)), cb: rec.done(i), panic: i == 5}
				if i == 3 {
					j.fail = applyErr
				}
				j.op = batch.Op{Lane: batch.LaneForeground, Job: j}
				require.NoError(t, f.w.Submit(&j.op))
			}
			rec.wait()
			rec.mu.Lock()
			order := append([]int(nil), rec.ids...)
			rec.mu.Unlock()
			require.Equal(t, seq(20), order, "Job.Done in accept order")
			for i := 0; i < 20; i++ {
				_, ok, err := f.store.Checkpoint(ckKey(7, int64(i)))
				require.NoError(t, err)
				if i == 3 {
					require.ErrorIs(t, rec.err(i), applyErr)
					require.False(t, ok, "failed Job wrote nothing")
					continue
				}
				require.NoError(t, rec.err(i), "op %d", i)
				require.True(t, ok, "op %d durable", i)
			}
			require.NoError(t, f.w.Err())
		})
	}
}

// An Op may not carry both a Job and Apply/Done.
func TestJobWithCallbacksRejected(t *testing.T) {
	f := newFixture(t, batch.Options{})
	j := &testJob{cb: func(error) {}}
	j.op = batch.Op{Lane: batch.LaneForeground, Job: j, Done: func(error) {}}
	require.ErrorIs(t, f.w.Submit(&j.op), batch.ErrBadOp)
	j.op = batch.Op{Lane: batch.LaneForeground, Job: j, Apply: func(*popstore.Txn) error { return nil }}
	require.ErrorIs(t, f.w.Submit(&j.op), batch.ErrBadOp)
	var none *testJob // a typed nil in the interface: its methods would dereference nil
	require.ErrorIs(t, f.w.Submit(&batch.Op{Lane: batch.LaneForeground, Job: none}), batch.ErrBadOp)
	j.op = batch.Op{Lane: batch.LaneForeground, Job: j}
	require.NoError(t, f.w.Submit(&j.op), "a real Job alone is fine")
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
