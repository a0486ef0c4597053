package broker

// CHANGE of an orderly receipt (reviveQid 999),
// ChangeInvisibleTimeProcessor.processChangeInvisibleTimeForOrderNew
// (docs/SCENARIOS.md CHG-05):
//   - one writer op (bulk lane, like every CHANGE) sets the deadline of the
//     offset in the queue's lease to now + invisibleTime
//     (applyOrderChange), so the queue stays blocked until then (or is
//     unblocked at once by a CHANGE to 0); nothing is written when the
//     offset is below the consume offset, the popTime is stale or the lease
//     does not hold the offset;
//   - success when durable, always with the fields the Java broker answers:
//     popTime = the receipt's (original) popTime, invisibleTime = the new
//     deadline − popTime, reviveQid 999, and the receipt rebuilt with them
//     (it stays valid for ACK: the lease keeps its popTime). Java leaves the
//     fields 0 when the offset is below the consume offset; popshim answers
//     them there too, so the handle it hands out stays well-formed.

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/orderly"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// submitOrderChange queues the CHANGE r of orderly receipt ei (validated
// by CheckReceipt) at broker time now (Unix ms). Any goroutine.
func (b *Broker) submitOrderChange(r ChangeRequest, ei codec.ExtraInfo, now int64, done func(ChangeResult, error)) {
	visibleAt := now + r.InvisibleTime
	var changed bool
	op := &batch.Op{
		Lane:  batch.LaneBulk,
		Bytes: 128,
		Apply: func(tx *popstore.Txn) (err error) {
			changed, err = applyOrderChange(tx, r.ConsumerGroup, r.Topic, r.QueueID, r.Offset, ei.PopTime, visibleAt)
			return err
		},
		Done: func(err error) {
			if err != nil {
				done(ChangeResult{}, writeFailed("change invisible time", err))
				return
			}
			if changed {
				b.Svc.OrderChanged(r.ConsumerGroup, r.Topic, r.QueueID)
			}
			handle := ei // as the client rebuilds it (ExtraInfoUtil.buildExtraInfo with the request offset)
			handle.CkQueueOffset = r.Offset
			handle.InvisibleTime = visibleAt - ei.PopTime
			done(ChangeResult{ExtraInfo: handle.String(), PopTime: ei.PopTime, InvisibleTime: handle.InvisibleTime,
				ReviveQid: codec.PopOrderReviveQueue}, nil)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		done(ChangeResult{}, SubmitError("change invisible time", err))
	}
}

// applyOrderChange sets the deadline of offset of the orderly lease of
// (group, topic, queueID) to visibleAt (Unix ms) for a receipt with
// popTime, inside a writer op against tx
// (processChangeInvisibleTimeForOrderNew). changed false: the offset is
// below the consume offset, the popTime is stale or the lease does not
// hold it; nothing is written (Java answers SUCCESS). Writer goroutine.
func applyOrderChange(tx *popstore.Txn, group, topic string, queueID int32, offset, popTime, visibleAt int64) (changed bool, err error) {
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
