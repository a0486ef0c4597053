package revive

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
)

// TestREV04_BackoffAndCap drives the per-record failure path of revive
// inside a real writer: a record that cannot be revived is rescheduled at
// now + invisibleTime + backoff[attempts] with attempts + 1, and dropped at
// the cap.
func TestREV04_BackoffAndCap(t *testing.T) {
	store, err := popstore.Open(popstore.Options{Dir: t.TempDir(), RetentionMillis: -1})
	require.NoError(t, err)
	w, err := batch.New(store, batch.Options{RetentionInterval: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, w.Close())
		require.NoError(t, store.Close())
	})
	// The test plays the revive loop itself: the reviver is never started.
	// MaxAttempts is the broker's default (popReviveMaxAttemptTimes).
	rv := New(&Settings{Interval: time.Hour, Batch: 16384, MaxAttempts: 16, RetryTopicV2: true}, Deps{
		Log: zerolog.Nop(), Store: store, Writer: w, Now: func() int64 { return 5000 },
	})
	defer rv.Stop()
	key := popstore.CheckpointKey{VisibleAtMillis: 1000, Group: "G", Topic: "T", QueueId: 0, QueueOffset: 3}
	put := func(attempts int32) {
		ck := popstore.Checkpoint{Key: key, PopTimeMillis: 0, InvisibleTimeMillis: 1000, AttemptTimes: attempts}
		require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error { return tx.PutCheckpoint(ck) }))
	}
	run := func(it *reviveItem, now int64) {
		require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error {
			return rv.apply(tx, it, now)
		}))
	}
	put(0)
	it := &reviveItem{ck: popstore.Checkpoint{Key: key}, kind: reviveBackoff}
	run(it, 5000)
	require.False(t, it.dropped)
	cks, err := store.ScanCheckpoints(0, 1<<62, 10)
	require.NoError(t, err)
	require.Len(t, cks, 1)
	require.EqualValues(t, 5000+1000+10000, cks[0].Key.VisibleAtMillis)
	require.EqualValues(t, 1, cks[0].AttemptTimes)
	require.EqualValues(t, 11000, cks[0].InvisibleTimeMillis)
	require.NoError(t, w.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error { return tx.DeleteCheckpoint(cks[0].Key) }))

	put(16)
	it = &reviveItem{ck: popstore.Checkpoint{Key: key}, kind: reviveBackoff}
	run(it, 5000)
	require.True(t, it.dropped, "dropped at the cap")
	cks, err = store.ScanCheckpoints(0, 1<<62, 10)
	require.NoError(t, err)
	require.Empty(t, cks)

	// A record acked after the scan is skipped: nothing is written.
	it = &reviveItem{ck: popstore.Checkpoint{Key: key}, kind: reviveRetry}
	run(it, 5000)
	require.True(t, it.skipped)
}
