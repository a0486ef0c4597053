package popstore_test

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

func TestSearchOffsetByTimestamp(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	for i := 0; i < 20; i++ {
		appendN(t, s, "T", 0, i, 1, int64(1000+i*10))
	}
	for _, c := range []struct{ ts, want int64 }{{0, 0}, {1000, 0}, {1001, 1}, {1100, 10}, {1190, 19}, {5000, 20}} {
		got, err := s.SearchOffsetByTimestamp("T", 0, c.ts)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "ts %d", c.ts)
	}
}

func TestRetentionTrimsByStoreTime(t *testing.T) {
	var now atomic.Int64
	now.Store(10_000)
	dir := t.TempDir()
	opts := popstore.Options{Dir: dir, RetentionMillis: 1000, NowMillis: now.Load}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	appendN(t, s, "A", 0, 0, 5, 8_000) // old
	appendN(t, s, "A", 0, 5, 5, 9_500) // young
	appendN(t, s, "B", 0, 0, 3, 8_500) // all old
	firstYoung, err := s.ReadMessage("A", 0, 5)
	require.NoError(t, err)
	oldB, err := s.ReadMessage("B", 0, 0)
	require.NoError(t, err)

	plan, err := s.PlanRetention(now.Load())
	require.NoError(t, err)
	require.Equal(t, []popstore.Trim{{Topic: "A", QueueId: 0, NewMinOffset: 5}, {Topic: "B", QueueId: 0, NewMinOffset: 3}}, plan.Trims)
	require.Equal(t, popstoretest.PhysicalOffset(firstYoung), plan.PhysicalFloor)
	commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
	s.CompactTrimmed(plan)

	require.Equal(t, int64(5), s.MinOffset("A", 0))
	require.Equal(t, int64(10), s.MaxOffset("A", 0))
	require.Equal(t, int64(3), s.MinOffset("B", 0))
	require.Equal(t, int64(3), s.MaxOffset("B", 0))
	recs, next, err := s.ReadMessages("A", 0, 0, 100, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	require.Equal(t, int64(5), popstoretest.QueueOffset(recs[0]))
	require.Equal(t, int64(10), next)
	_, err = s.MessageByPhysicalOffset(popstoretest.PhysicalOffset(oldB))
	require.ErrorIs(t, err, popstore.ErrNotFound)
	got, err := s.MessageByPhysicalOffset(popstoretest.PhysicalOffset(firstYoung))
	require.NoError(t, err)
	require.True(t, bytes.Equal(firstYoung, got))

	require.NoError(t, s.Close())
	s, err = popstore.Open(opts)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, int64(5), s.MinOffset("A", 0))
	require.Equal(t, int64(3), s.MaxOffset("B", 0), "an emptied queue keeps its max offset")
	appendN(t, s, "B", 0, 3, 1, 10_000)
	require.Equal(t, int64(4), s.MaxOffset("B", 0))
}
