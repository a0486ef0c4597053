package popstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
)

// ConsumerOffsetsByGroupTopic and CountCheckpoints report their bounds:
// past maxPairs or limit they say the answer is incomplete.
func TestLagScanBounds(t *testing.T) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	commit(t, s, func(tx *popstore.Txn) error {
		for _, o := range []struct {
			g, tp string
			q     int32
		}{{"G1", "T", 0}, {"G1", "T", 1}, {"G2", "T", 0}} {
			if err := tx.SetConsumerOffset(o.g, o.tp, o.q, 5); err != nil {
				return err
			}
		}
		for i, k := range []popstore.CheckpointKey{
			{VisibleAtMillis: 100, Group: "G1", Topic: "T", QueueId: 0, QueueOffset: 1},
			{VisibleAtMillis: 200, Group: "G1", Topic: "T", QueueId: 1, QueueOffset: 2},
			{VisibleAtMillis: 300, Group: "G2", Topic: "%RETRY%G2+T", QueueId: 0, QueueOffset: 3},
		} {
			if err := tx.PutCheckpoint(popstore.Checkpoint{Key: k, PopTimeMillis: int64(i), InvisibleTimeMillis: 1}); err != nil {
				return err
			}
		}
		return nil
	})

	pairs, ok := s.ConsumerOffsetsByGroupTopic(2)
	require.True(t, ok)
	require.Len(t, pairs, 2)
	require.ElementsMatch(t, []popstore.QueueOffset{{QueueId: 0, Offset: 5}, {QueueId: 1, Offset: 5}},
		pairs[popstore.GroupTopic{Group: "G1", Topic: "T"}])
	_, ok = s.ConsumerOffsetsByGroupTopic(1)
	require.False(t, ok, "more pairs than allowed")

	counts, complete, err := s.CountCheckpoints(3)
	require.NoError(t, err)
	require.True(t, complete)
	require.Equal(t, map[popstore.GroupTopic]int64{{Group: "G1", Topic: "T"}: 2, {Group: "G2", Topic: "%RETRY%G2+T"}: 1}, counts)
	_, complete, err = s.CountCheckpoints(2)
	require.NoError(t, err)
	require.False(t, complete, "stopped at the limit")
}
