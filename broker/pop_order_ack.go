package broker

import (
	"github.com/popshim/popshim/broker/orderly"
	"github.com/popshim/popshim/popstore"
)

// OrderAckResult is what ApplyOrderAck did.
type OrderAckResult int

const (
	// OrderAckDone: the offset was marked acked and the consume offset
	// moved to the lease's first un-acked offset.
	OrderAckDone OrderAckResult = iota
	// OrderAckNoop: the offset is below the consume offset (acked before),
	// or the receipt's popTime is not the lease's: SUCCESS without effect.
	OrderAckNoop
	// OrderAckIllegal: no lease holds the offset: MESSAGE_ILLEGAL (13).
	OrderAckIllegal
)

// ApplyOrderAck applies the ACK of an orderly receipt (reviveQid 999) of
// (group, topic, queueID) at offset with the receipt's popTime, inside a
// writer op against tx (AckMessageProcessor.ackOrderlyNew): the lease and
// the consume offset are read and written through tx, so the decision and
// the write are atomic. Writer goroutine. Errors: those of the Txn writes.
func ApplyOrderAck(tx *popstore.Txn, group, topic string, queueID int32, offset, popTime int64) (OrderAckResult, error) {
	cur, hasCur := tx.ConsumerOffset(group, topic, queueID)
	if hasCur && offset < cur {
		return OrderAckNoop, nil
	}
	st, had := tx.OrderState(group, topic, queueID)
	nst, next, res := orderly.Commit(st, had, offset, popTime)
	switch res {
	case orderly.Stale:
		return OrderAckNoop, nil
	case orderly.Illegal:
		return OrderAckIllegal, nil
	}
	if err := tx.PutOrderState(group, topic, queueID, nst); err != nil {
		return 0, err
	}
	if !hasCur || next > cur {
		if err := tx.SetConsumerOffset(group, topic, queueID, next); err != nil {
			return 0, err
		}
	}
	return OrderAckDone, nil
}

// ApplyOrderChange sets the deadline of offset of the orderly lease of
// (group, topic, queueID) to visibleAt (Unix ms) for a receipt with
// popTime, inside a writer op against tx
// (processChangeInvisibleTimeForOrderNew). changed false: the offset is
// below the consume offset, the popTime is stale or the lease does not
// hold it; nothing is written (Java answers SUCCESS). Writer goroutine.
func ApplyOrderChange(tx *popstore.Txn, group, topic string, queueID int32, offset, popTime, visibleAt int64) (changed bool, err error) {
	if cur, ok := tx.ConsumerOffset(group, topic, queueID); ok && offset < cur {
		return false, nil
	}
	st, had := tx.OrderState(group, topic, queueID)
	nst, ok := orderly.Change(st, had, offset, popTime, visibleAt)
	if !ok {
		return false, nil
	}
	return true, tx.PutOrderState(group, topic, queueID, nst)
}
