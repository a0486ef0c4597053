package handler

// ACK_MESSAGE (200051), broker/.../processor/AckMessageProcessor.java on the
// KV path (PopConsumerService.ackAsync).
//
// Header (codec.AckMessageRequestHeader): consumerGroup, topic (the real
// topic: the pop retry topic for receipts with retry flag 1/2), queueId,
// offset, extraInfo (8-field receipt handle, or 9 from the proxy), bname.
//
// Behaviour:
//   - Validated on the event loop against in-memory state (checkReceipt).
//   - Blind and idempotent: one writer op (foreground lane) deletes the
//     checkpoint key named by the handle; a missing key is SUCCESS (re-ACK,
//     ACK after revive, ACK of a changed handle). Nothing is read.
//   - The connection does not matter (ACK on another connection works).
//   - SUCCESS is sent when the delete is durable (fsynced).
//   - An orderly receipt (reviveQid 999) goes to submitOrderAck
//     (ack_message_order.go): it moves the queue's lease and consume offset
//     instead of deleting a checkpoint.
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2) writer lane full (nothing
// changed); SYSTEM_ERROR (1) header errors, failed write; TOPIC_NOT_EXIST
// (17); MESSAGE_ILLEGAL (13) bad queueId or invalid receipt handle;
// INVALID_PARAMETER (29) invalid consumerGroup;
// NO_MESSAGE (208) offset outside [minOffset, maxOffset]; for orderly
// receipts MESSAGE_ILLEGAL (13) also when no lease holds the offset.

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAckMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeAckMessageRequest(req)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	rc, rerr := b.Svc.CheckReceipt(h.ConsumerGroup, h.Topic, h.QueueID, h.Offset, h.ExtraInfo, false)
	if rerr != nil {
		reply.Code(c, req, rerr.Code, rerr.Remark)
		return
	}
	if rc.EI.IsOrder() {
		b.submitOrderAck(c, req, h.ConsumerGroup, h.Topic, h.QueueID, h.Offset, rc.EI.PopTime)
		return
	}
	j := &ackJob{c: c, req: req, key: rc.Key}
	j.op = batch.Op{Lane: batch.LaneForeground, Bytes: 64, Job: j}
	if err := b.Writer.Submit(&j.op); err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("ack", err))
	}
}

// ackJob is one ACK in the writer: the op, the checkpoint key it deletes and
// where the reply goes, in one allocation (batch.Job).
type ackJob struct {
	op  batch.Op
	c   remoting.Conn
	req *codec.Command
	key popstore.CheckpointKey
}

// Apply deletes the checkpoint (writer goroutine).
func (j *ackJob) Apply(tx *popstore.Txn) error { return tx.DeleteCheckpoint(j.key) }

// Done answers SUCCESS once the delete is durable, else the write error's
// code (the writer's completer goroutine).
func (j *ackJob) Done(err error) {
	if err != nil {
		reply.Code(j.c, j.req, broker.WriteErrorCode(err), "ack failed: "+err.Error())
		return
	}
	reply.Code(j.c, j.req, codec.Success, "")
}
