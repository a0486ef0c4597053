package orderly

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
)

func TestNewLeaseCountsAttempts(t *testing.T) {
	first := NewLease(popstore.OrderState{}, false, "A", 1000, 500, []int64{3, 4, 6})
	require.Equal(t, []int32{0, 0, 0}, first.Counts)
	require.Equal(t, []int64{1500, 1500, 1500}, first.VisibleAt)
	same := NewLease(first, true, "A", 1100, 500, []int64{3, 4, 6})
	require.Equal(t, []int32{0, 0, 0}, same.Counts, "re-entrant retry is not an attempt")
	next := NewLease(same, true, "B", 1700, 500, []int64{4, 6, 7})
	require.Equal(t, []int32{1, 1, 0}, next.Counts)
	again := NewLease(next, true, "", 2300, 500, []int64{4, 6, 7})
	require.Equal(t, []int32{2, 2, 1}, again.Counts)
	require.Equal(t, "0 qo0%4 2;0 qo0%6 2;0 qo0%7 1;0 0 1", string(AppendCountInfo(nil, again, 0)))
	require.Equal(t, "0 1 0", string(AppendCountInfo(nil, first, 1)))
}

func TestBlockedAndCommit(t *testing.T) {
	st := NewLease(popstore.OrderState{}, false, "A", 1000, 500, []int64{3, 4, 6})
	require.True(t, Blocked(st, "B", 1499))
	require.True(t, Blocked(st, "", 1499), "an absent attemptId never matches")
	require.False(t, Blocked(st, "A", 1499), "the lease's own attempt re-enters")
	require.False(t, Blocked(st, "B", 1500), "deadline passed")

	_, _, res := Commit(st, true, 4, 999)
	require.Equal(t, Stale, res)
	_, _, res = Commit(st, true, 5, 1000)
	require.Equal(t, Illegal, res)
	_, _, res = Commit(popstore.OrderState{}, false, 3, 1000)
	require.Equal(t, Illegal, res)

	st, next, res := Commit(st, true, 4, 1000)
	require.Equal(t, Committed, res)
	require.EqualValues(t, 3, next, "3 is still un-acked")
	st, next, _ = Commit(st, true, 3, 1000)
	require.EqualValues(t, 6, next, "past the acked prefix 3, 4")
	require.True(t, Blocked(st, "B", 1200))
	st, next, _ = Commit(st, true, 6, 1000)
	require.EqualValues(t, 7, next)
	require.False(t, Blocked(st, "B", 1200), "all acked")
	_, held := FreeAt(st, 1200)
	require.False(t, held)
}

func TestChangeMovesOneDeadline(t *testing.T) {
	st := NewLease(popstore.OrderState{}, false, "A", 1000, 500, []int64{3, 4})
	_, ok := Change(st, true, 3, 999, 9000)
	require.False(t, ok, "stale popTime")
	_, ok = Change(st, true, 5, 1000, 9000)
	require.False(t, ok, "not in the lease")
	ch, ok := Change(st, true, 4, 1000, 9000)
	require.True(t, ok)
	require.Equal(t, []int64{1500, 9000}, ch.VisibleAt)
	require.Equal(t, []int64{1500, 1500}, st.VisibleAt, "the old value is not modified")
	at, held := FreeAt(ch, 1600)
	require.True(t, held)
	require.EqualValues(t, 9000, at)
	require.True(t, Blocked(ch, "B", 1600))
}
