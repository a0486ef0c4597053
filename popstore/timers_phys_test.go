package popstore_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// A timer entry is found by the physical offset PutTimer gave it (the
// offsetMsgId of its SEND) while pending and, once delivered, that offset
// finds the delivered message, also after Close and Open; a cancelled
// entry is not found. Bodies on both sides of the commit-log threshold.
func TestTimerFoundByPhysicalOffsetBeforeAndAfterDelivery(t *testing.T) {
	for _, size := range []int{16, 64 << 10} {
		dir := t.TempDir()
		s, err := popstore.Open(popstore.Options{Dir: dir, CommitLogBatchMinBytes: 1})
		require.NoError(t, err)
		body := bytes.Repeat([]byte{'d'}, size)
		var delivered, cancelled int64
		commit(t, s, func(tx *popstore.Txn) error {
			var err error
			if delivered, err = tx.PutTimer(1000, 0, popstoretest.Record("T", 0, 7, body)); err != nil {
				return err
			}
			cancelled, err = tx.PutTimer(2000, 0, popstoretest.Record("T", 0, 8, []byte("c")))
			return err
		})
		rec, err := s.MessageByPhysicalOffset(delivered)
		require.NoError(t, err, "pending timer entry by its physical offset")
		require.Equal(t, delivered, popstoretest.PhysicalOffset(rec))
		require.True(t, bytes.Contains(rec, body))
		ts, err := s.EarliestMessageTime()
		require.NoError(t, err)
		require.EqualValues(t, 7, ts, "a pending entry is the oldest record stored")

		due, err := s.ScanTimers(popstore.TimerKey{}, 5000, 10, 1<<30)
		require.NoError(t, err)
		require.Len(t, due, 2)
		var newPhys int64
		commit(t, s, func(tx *popstore.Txn) error {
			var err error
			if _, newPhys, err = tx.DeliverTimer(due[0].Key, "T", 0, due[0].Record); err != nil {
				return err
			}
			return tx.DeleteTimer(due[1].Key)
		})
		require.Greater(t, newPhys, delivered)
		require.EqualValues(t, 0, s.PendingTimers())
		require.EqualValues(t, 1, s.MaxOffset("T", 0))
		for round := range 2 {
			rec, err := s.MessageByPhysicalOffset(delivered)
			require.NoError(t, err, "size %d round %d: the SEND's offset finds the delivered message", size, round)
			require.Equal(t, newPhys, popstoretest.PhysicalOffset(rec))
			require.True(t, bytes.Contains(rec, body))
			rec, err = s.MessageByPhysicalOffset(newPhys)
			require.NoError(t, err)
			require.Equal(t, newPhys, popstoretest.PhysicalOffset(rec))
			_, err = s.MessageByPhysicalOffset(cancelled)
			require.ErrorIs(t, err, popstore.ErrNotFound, "a cancelled entry")
			require.NoError(t, s.Close())
			s, err = popstore.Open(popstore.Options{Dir: dir, CommitLogBatchMinBytes: 1})
			require.NoError(t, err)
		}
		require.NoError(t, s.Close())
	}
}
