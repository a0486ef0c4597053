package broker

// Ack: ACK_MESSAGE (200051) of remoting, AckMessage of gRPC;
// broker/.../processor/AckMessageProcessor.java on the KV path
// (PopConsumerService.ackAsync).
//
// Request (AckRequest): consumerGroup, topic (the real topic: the pop retry
// topic for receipts with retry flag 1/2), queueId, offset, extraInfo
// (8-field receipt handle, or 9 from the proxy).
//
// Behaviour:
//   - Validated on the caller's goroutine against in-memory state
//     (CheckReceipt).
//   - Blind and idempotent: one writer op (foreground lane) deletes the
//     checkpoint key named by the handle; a missing key is SUCCESS (re-ACK,
//     ACK after revive, ACK of a changed handle). Nothing is read.
//   - The connection does not matter (ACK on another connection works).
//   - Success is reported when the delete is durable (fsynced).
//   - An orderly receipt (reviveQid 999) goes to submitOrderAcks
//     (ack_order.go): it moves the queue's lease and consume offset
//     instead of deleting a checkpoint.
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2) writer lane full (nothing
// changed); SYSTEM_ERROR (1) failed write; TOPIC_NOT_EXIST (17);
// MESSAGE_ILLEGAL (13) bad queueId or invalid receipt handle;
// INVALID_PARAMETER (29) invalid consumerGroup; NO_MESSAGE (208) offset
// outside [minOffset, maxOffset]; for orderly receipts MESSAGE_ILLEGAL (13)
// also when no lease holds the offset.

import (
	"sync"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// AckRequest is one ACK (broker/.../header/AckMessageRequestHeader.java:
// consumerGroup, topic, queueId, offset, extraInfo). A gRPC endpoint,
// which acks with (topic, group, receipt handle), takes QueueID and Offset
// from the parsed handle (codec.ParseExtraInfo: QueueID, QueueOffset) and
// the real topic from its retry flag (codec.ExtraInfo.RealTopic).
type AckRequest struct {
	ConsumerGroup string
	Topic         string // the real topic (a pop retry topic for retry flag 1/2)
	QueueID       int32
	Offset        int64  // queue offset of the acked message (receipt field 7)
	ExtraInfo     string // the receipt handle
	// Receipt is ExtraInfo already parsed (codec.ParseExtraInfo) by the
	// adapter when HasReceipt is set; the core then checks it without
	// parsing the text again.
	Receipt    codec.ExtraInfo
	HasReceipt bool
}

// Ack validates r and deletes the checkpoint its handle names (or, for an
// orderly receipt, commits the offset in the queue's lease); done gets nil
// once that is durable, or an *Error with the codes listed above. Any
// goroutine; never blocks. On the hot path Ack allocates nothing of its
// own: the writer op comes from a pool and goes back after done returns.
func (b *Broker) Ack(r AckRequest, done func(error)) {
	rc, rerr := b.Svc.receiptOf(&r)
	if rerr != nil {
		done(rerr)
		return
	}
	if rc.EI.IsOrder() {
		b.submitOrderAcks([]orderAck{{r.ConsumerGroup, r.Topic, r.QueueID, r.Offset, rc.EI.PopTime}}, nil, done)
		return
	}
	j := ackJobs.Get().(*ackJob)
	j.key, j.done = rc.Key, done
	j.op = batch.Op{Lane: batch.LaneForeground, Bytes: 64, Job: j}
	if err := b.Writer.Submit(&j.op); err != nil {
		j.release()
		done(SubmitError("ack", err))
	}
}

// ackJobs recycles ackJobs: an ACK costs no allocation of the core.
var ackJobs = sync.Pool{New: func() any { return new(ackJob) }}

// ackJob is one ACK in the writer: the op, the checkpoint key it deletes
// and the caller's completion (batch.Job). It belongs to the writer from
// Submit until Done, then goes back to ackJobs.
type ackJob struct {
	op   batch.Op
	key  popstore.CheckpointKey
	done func(error)
}

// Apply deletes the checkpoint (writer goroutine).
func (j *ackJob) Apply(tx *popstore.Txn) error { return tx.DeleteCheckpoint(j.key) }

// Done reports nil once the delete is durable, else the write error as
// "ack failed: <cause>" (the writer's completer goroutine), then recycles
// j. The writer does not touch the op once Done returns.
func (j *ackJob) Done(err error) {
	if err != nil {
		j.done(writeFailed("ack", err))
	} else {
		j.done(nil)
	}
	j.release()
}

// release clears j (the op's writer state included) and returns it to
// ackJobs.
func (j *ackJob) release() {
	*j = ackJob{}
	ackJobs.Put(j)
}
