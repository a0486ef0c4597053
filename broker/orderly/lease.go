package orderly

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// Blocked reports whether st blocks a POP carrying attemptID at broker time
// now (Unix ms): some un-acked offset is still invisible, and attemptID is
// not the lease's own (OrderInfo.needBlock; an empty attemptID never
// matches, as Java's null). Any goroutine.
func Blocked(st popstore.OrderState, attemptID string, now int64) bool {
	if len(st.Offsets) == 0 || (attemptID != "" && attemptID == st.AttemptID) {
		return false
	}
	return Held(st, now)
}

// Held reports whether some un-acked offset of st is still invisible at
// now, whoever asks. Any goroutine.
func Held(st popstore.OrderState, now int64) bool {
	for i := range st.Offsets {
		if st.Acked&(1<<i) == 0 && now < st.VisibleAt[i] {
			return true
		}
	}
	return false
}

// FreeAt returns when st stops blocking (Unix ms): the latest deadline of
// an un-acked offset; ok false when nothing un-acked is held past now.
func FreeAt(st popstore.OrderState, now int64) (at int64, ok bool) {
	for i := range st.Offsets {
		if st.Acked&(1<<i) == 0 && st.VisibleAt[i] > now && st.VisibleAt[i] > at {
			at, ok = st.VisibleAt[i], true
		}
	}
	return at, ok
}

// NewLease returns the lease of a POP with attemptID at popTime (Unix ms)
// holding offsets (ascending, ≤ popstore.MaxOrderOffsets) for invisible ms,
// given the previous lease prev (had false: none). An offset also in prev
// counts prev's count + 1, unless attemptID equals prev's (then the count
// is kept: a re-entrant retry is not an attempt)
// (OrderInfo.mergeOffsetConsumedCount).
func NewLease(prev popstore.OrderState, had bool, attemptID string, popTime, invisible int64, offsets []int64) popstore.OrderState {
	n := len(offsets)
	st := popstore.OrderState{
		AttemptID: attemptID, PopTime: popTime, InvisibleTime: invisible,
		Offsets: append([]int64(nil), offsets...), VisibleAt: make([]int64, n), Counts: make([]int32, n),
	}
	for i, off := range offsets {
		st.VisibleAt[i] = popTime + invisible
		st.Counts[i] = CountFor(prev, had, attemptID, off)
	}
	return st
}

// CountFor is the attempt count a POP with attemptID gives offset, after
// the previous lease prev (had false: none): prev's count + 1 when prev
// held offset, unchanged for prev's own attemptID, 0 when prev did not
// hold it. It is the reconsumeTimes the client sees.
func CountFor(prev popstore.OrderState, had bool, attemptID string, offset int64) int32 {
	if !had {
		return 0
	}
	for j, p := range prev.Offsets {
		if p == offset {
			if attemptID != "" && attemptID == prev.AttemptID {
				return prev.Counts[j]
			}
			return prev.Counts[j] + 1
		}
	}
	return 0
}

// CommitResult is the outcome of Commit.
type CommitResult int

const (
	// Committed: the offset was marked acked; Next is the new consume offset.
	Committed CommitResult = iota
	// Stale: the receipt's popTime is not the lease's (an earlier lease of
	// the queue): SUCCESS without effect.
	Stale
	// Illegal: no lease, or the offset is not one it holds: MESSAGE_ILLEGAL.
	Illegal
)

// Commit marks offset acked in st for a receipt with popTime
// (ConsumerOrderInfoManager.commitAndNext). On Committed it returns the new
// lease and next, the first un-acked offset of the lease (all acked: the
// last offset + 1), which becomes the consume offset.
func Commit(st popstore.OrderState, had bool, offset, popTime int64) (popstore.OrderState, int64, CommitResult) {
	if !had || len(st.Offsets) == 0 {
		return st, 0, Illegal
	}
	if popTime != st.PopTime {
		return st, 0, Stale
	}
	i := indexOf(st, offset)
	if i < 0 {
		return st, 0, Illegal
	}
	nst := st.Clone()
	nst.Acked |= 1 << i
	return nst, NextOffset(nst), Committed
}

// NextOffset is the first un-acked offset of st, or its last offset + 1
// when all are acked (OrderInfo.getNextOffset). st must hold offsets.
func NextOffset(st popstore.OrderState) int64 {
	for i, off := range st.Offsets {
		if st.Acked&(1<<i) == 0 {
			return off
		}
	}
	return st.Offsets[len(st.Offsets)-1] + 1
}

// Change sets the deadline of offset in st to visibleAt for a receipt with
// popTime (updateNextVisibleTime). ok false when nothing changes: no
// lease, a stale popTime or an offset it does not hold (Java answers
// SUCCESS either way).
func Change(st popstore.OrderState, had bool, offset, popTime, visibleAt int64) (popstore.OrderState, bool) {
	if !had || popTime != st.PopTime {
		return st, false
	}
	i := indexOf(st, offset)
	if i < 0 {
		return st, false
	}
	nst := st.Clone()
	nst.VisibleAt[i] = visibleAt
	return nst, true
}

func indexOf(st popstore.OrderState, offset int64) int {
	for i, off := range st.Offsets {
		if off == offset {
			return i
		}
	}
	return -1
}

// AppendCountInfo appends the orderCountInfo entries of lease st on queue
// queueID to dst, as ConsumerOrderInfoManager.update writes them: one
// "0 qo<queueId>%<offset> <count>" per offset counted at least once, then
// "0 <queueId> <min count>" (0 when some offset is new) for older clients.
func AppendCountInfo(dst []byte, st popstore.OrderState, queueID int32) []byte {
	minCount := int32(-1)
	for i, off := range st.Offsets {
		c := st.Counts[i]
		if c > 0 {
			dst = codec.AppendOrderCountInfoOffset(dst, codec.RetryFlagNormal, queueID, off, c)
		}
		if minCount < 0 || c < minCount {
			minCount = c
		}
	}
	return codec.AppendOrderCountInfo(dst, codec.RetryFlagNormal, queueID, max(minCount, 0))
}
