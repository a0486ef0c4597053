package broker

// ACK and BATCH_ACK of orderly receipts (reviveQid 999),
// AckMessageProcessor.ackOrderlyNew on the KV path; the rules are in
// broker/orderly, the writer-side step in applyOrderAck:
//   - offset below the group's consume offset: SUCCESS, nothing written
//     (acked before);
//   - the receipt's popTime is not the lease's (an earlier POP of the
//     queue, or a re-entrant retry replaced it): SUCCESS, nothing written;
//   - no lease, or the lease does not hold the offset: MESSAGE_ILLEGAL (13);
//   - else the offset is marked acked and the consume offset moves to the
//     lease's first un-acked offset, in one writer op (foreground lane),
//     answered when durable; once nothing of the lease is held the group's
//     parked orderly POPs and NOTIFICATIONs are woken.

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/orderly"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// orderAck is one orderly ACK target: the receipt's popTime (Unix ms) and
// the acked queue offset.
type orderAck struct {
	group, topic string
	queueID      int32
	offset       int64
	popTime      int64
}

// submitOrderAcks queues one writer op that deletes the checkpoint keys
// (BATCH_ACK's non-orderly entries) and applies acks in order; done gets
// nil when durable, or MESSAGE_ILLEGAL (13) when some orderly ack named an
// offset no lease holds (the others still apply, as in the Java broker),
// or the write's or Submit's failure. Any goroutine.
func (b *Broker) submitOrderAcks(acks []orderAck, keys []popstore.CheckpointKey, done func(error)) {
	var illegal *orderAck
	applied := make([]bool, len(acks))
	op := &batch.Op{
		Lane:  batch.LaneForeground,
		Bytes: 96*len(acks) + 64*len(keys),
		Apply: func(tx *popstore.Txn) error {
			illegal = nil
			for _, k := range keys {
				if err := tx.DeleteCheckpoint(k); err != nil {
					return err
				}
			}
			for i := range acks {
				a := &acks[i]
				res, err := applyOrderAck(tx, a.group, a.topic, a.queueID, a.offset, a.popTime)
				if err != nil {
					return err
				}
				applied[i] = res == orderAckDone
				if res == orderAckIllegal && illegal == nil {
					illegal = a
				}
			}
			return nil
		},
		Done: func(err error) {
			if err != nil {
				done(writeFailed("ack", err))
				return
			}
			for i := range acks {
				if applied[i] && (i == len(acks)-1 || acks[i+1].queueID != acks[i].queueID || acks[i+1].topic != acks[i].topic || acks[i+1].group != acks[i].group) {
					b.Svc.OrderChanged(acks[i].group, acks[i].topic, acks[i].queueID)
				}
			}
			if illegal != nil {
				done(Errorf(codec.MessageIllegal, "offset is illegal, key:%s %s %d, commit:%d: no orderly lease holds it",
					illegal.group, illegal.topic, illegal.queueID, illegal.offset))
				return
			}
			done(nil)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		done(SubmitError("ack", err))
	}
}

// orderAckResult is what applyOrderAck did.
type orderAckResult int

const (
	// orderAckDone: the offset was marked acked and the consume offset
	// moved to the lease's first un-acked offset.
	orderAckDone orderAckResult = iota
	// orderAckNoop: the offset is below the consume offset (acked before),
	// or the receipt's popTime is not the lease's: SUCCESS without effect.
	orderAckNoop
	// orderAckIllegal: no lease holds the offset: MESSAGE_ILLEGAL (13).
	orderAckIllegal
)

// applyOrderAck applies the ACK of an orderly receipt (reviveQid 999) of
// (group, topic, queueID) at offset with the receipt's popTime, inside a
// writer op against tx (AckMessageProcessor.ackOrderlyNew): the lease and
// the consume offset are read and written through tx, so the decision and
// the write are atomic. Writer goroutine. Errors: those of the Txn writes.
func applyOrderAck(tx *popstore.Txn, group, topic string, queueID int32, offset, popTime int64) (orderAckResult, error) {
	cur, hasCur := tx.ConsumerOffset(group, topic, queueID)
	if hasCur && offset < cur {
		return orderAckNoop, nil
	}
	st, had := tx.OrderState(group, topic, queueID)
	nst, next, res := orderly.Commit(st, had, offset, popTime)
	switch res {
	case orderly.Stale:
		return orderAckNoop, nil
	case orderly.Illegal:
		return orderAckIllegal, nil
	}
	if err := tx.PutOrderState(group, topic, queueID, nst); err != nil {
		return 0, err
	}
	if !hasCur || next > cur {
		if err := tx.SetConsumerOffset(group, topic, queueID, next); err != nil {
			return 0, err
		}
	}
	return orderAckDone, nil
}
