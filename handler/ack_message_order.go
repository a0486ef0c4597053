package handler

// ACK_MESSAGE and BATCH_ACK_MESSAGE of orderly receipts (reviveQid 999),
// AckMessageProcessor.ackOrderlyNew on the KV path; the rules are in
// broker/orderly, the writer-side step in broker.ApplyOrderAck:
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
	"fmt"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// orderAck is one orderly ACK target.
type orderAck struct {
	group, topic string
	queueID      int32
	offset       int64
	popTime      int64
}

// submitOrderAck queues the ACK of one orderly receipt. Event loop.
func (b *Broker) submitOrderAck(c remoting.Conn, req *codec.Command, group, topic string, queueID int32, offset, popTime int64) {
	b.submitOrderAcks(c, req, []orderAck{{group, topic, queueID, offset, popTime}}, nil)
}

// submitOrderAcks queues one writer op that applies acks in order and
// deletes the checkpoints keys (BATCH_ACK's non-orderly entries), answered
// when durable: SUCCESS, or MESSAGE_ILLEGAL when some orderly ack named an
// offset no lease holds (the others still apply, as in the Java broker).
// Event loop.
func (b *Broker) submitOrderAcks(c remoting.Conn, req *codec.Command, acks []orderAck, keys []popstore.CheckpointKey) {
	var illegal *orderAck
	done := make([]bool, len(acks))
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
				res, err := broker.ApplyOrderAck(tx, a.group, a.topic, a.queueID, a.offset, a.popTime)
				if err != nil {
					return err
				}
				done[i] = res == broker.OrderAckDone
				if res == broker.OrderAckIllegal && illegal == nil {
					illegal = a
				}
			}
			return nil
		},
		Done: func(err error) {
			if err != nil {
				reply.Code(c, req, broker.WriteErrorCode(err), "ack failed: "+err.Error())
				return
			}
			for i := range acks {
				if done[i] && (i == len(acks)-1 || acks[i+1].queueID != acks[i].queueID || acks[i+1].topic != acks[i].topic || acks[i+1].group != acks[i].group) {
					b.Svc.OrderChanged(acks[i].group, acks[i].topic, acks[i].queueID)
				}
			}
			if illegal != nil {
				reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("offset is illegal, key:%s %s %d, commit:%d: no orderly lease holds it",
					illegal.group, illegal.topic, illegal.queueID, illegal.offset))
				return
			}
			reply.Code(c, req, codec.Success, "")
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("ack", err))
	}
}
