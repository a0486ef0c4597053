package broker

// ChangeInvisible: CHANGE_MESSAGE_INVISIBLETIME (200053) of remoting,
// ChangeInvisibleDuration of gRPC;
// broker/.../processor/ChangeInvisibleTimeProcessor.java on the KV path
// (PopConsumerService.changeInvisibilityDuration).
//
// Request (ChangeRequest): consumerGroup, topic (real topic, as for ACK),
// queueId, offset, extraInfo, invisibleTime (ms, counted from now).
//
// Behaviour:
//   - Validated on the caller's goroutine like ACK, except that offset ==
//     maxOffset is NO_MESSAGE (docs/SCENARIOS.md CHG-01); a negative
//     invisibleTime is INVALID_PARAMETER.
//   - One writer op (bulk lane, see below): the new checkpoint (popTime =
//     broker now, invisibleTime as asked, same group/topic/queue/offset,
//     retry flag kept) is written and the old one deleted in the same
//     WriteBatch; when both keys are equal the delete is skipped (RocketMQ
//     PR #10277).
//   - The old checkpoint is read inside the writer (through the batch being
//     built): if it no longer exists (acked, revived or already changed),
//     nothing is written and NO_MESSAGE (208) is answered without a new
//     handle, so a stale handle can neither create a second in-flight
//     record (one redelivery, not two: docs/SCENARIOS.md POP-06, CHG-02) nor
//     hand out a handle that holds no lease (an ACK of such a handle would
//     answer SUCCESS and the message still come back). The Java broker
//     writes blindly and answers SUCCESS. Java clients map any code but
//     SUCCESS to AckStatus.NO_EXIST and keep their handle
//     (MQClientAPIImpl.changeInvisibleTimeAsync); the 5.x proxy stops
//     renewing that handle (DefaultReceiptHandleManager) and answers a gRPC
//     client INTERNAL_SERVER_ERROR without a handle. A chain of CHANGEs
//     each using the newest handle is unaffected.
//   - Bulk lane (batch.LaneBulk): CHANGEs come in bursts (a proxy renewing
//     thousands of handles at once), and on the foreground lane a burst made
//     every ACK behind it wait for one huge batch. On the bulk lane each
//     batch takes at most --batch-max-bulk-ops CHANGEs, so ACKs accepted
//     after a burst overtake its queued CHANGEs. Why that reordering is
//     safe (the KV store's rules, PopConsumerService and PopConsumerRocksdbStore):
//     1. An ACK or CHANGE names a key the client learned from a POP or
//     CHANGE reply, and those are sent only after the put is durable: a
//     request that could follow a CHANGE causally (ACK or CHANGE of the
//     new handle) is accepted after the CHANGE was applied, so no
//     reordering can apply it before the put it refers to.
//     2. What can be reordered are requests the client had in flight at
//     the same time, which the Java broker also runs in any order on its
//     thread pool. ACK(h) and CHANGE(h) of the same handle h: ACK first →
//     the CHANGE finds no old checkpoint, writes nothing and answers
//     NO_MESSAGE (acked, never redelivered); CHANGE first → the ACK deletes
//     a key that no longer exists and the new checkpoint redelivers the
//     message once unless the new handle is acked. Both are at-least-once
//     outcomes, and neither leaves two in-flight records, because the
//     existence check and the put/delete run atomically in the writer.
//     3. Revive (background lane) also checks existence in the writer, so
//     a CHANGE and a revive of the same checkpoint redeliver exactly once
//     in either order. POP checkpoints (foreground) are new keys nobody
//     can have changed yet.
//     Within the bulk lane CHANGEs keep accept order (two CHANGEs of one
//     handle: the second finds nothing, writes nothing and answers
//     NO_MESSAGE, whatever their popTimes).
//   - Success when durable, with the new handle's popTime, invisibleTime
//     and reviveQid (echoed), and the new handle as the client would build
//     it (ChangeResult).
//   - An orderly receipt (reviveQid 999) moves the deadline of its offset in
//     the queue's lease instead (change_order.go).
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2); SYSTEM_ERROR (1) failed
// write; TOPIC_NOT_EXIST (17); MESSAGE_ILLEGAL (13) bad queueId or invalid
// receipt handle; NO_MESSAGE (208) offset outside [minOffset, maxOffset),
// or a stale handle (no in-flight checkpoint: no new handle, nothing
// written); INVALID_PARAMETER (29) invisibleTime negative or above
// MaxInvisibleTimeMillis, or an invalid consumerGroup.

import (
	"sync"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// ChangeRequest is one CHANGE
// (broker/.../header/ChangeInvisibleTimeRequestHeader.java: consumerGroup,
// topic, queueId, offset, extraInfo, invisibleTime). A gRPC endpoint fills
// QueueID and Offset from the parsed receipt handle, as for AckRequest.
type ChangeRequest struct {
	ConsumerGroup string
	Topic         string // the real topic, as for AckRequest
	QueueID       int32
	Offset        int64  // the message's queue offset (receipt field 7)
	ExtraInfo     string // the receipt handle
	InvisibleTime int64  // new invisible duration from now, ms
	// Suspend (gRPC ChangeInvisibleDurationRequest.suspend; remoting has
	// no such field): the new checkpoint is marked so that its revive does
	// not count a redelivery (reconsumeTimes stays). false keeps the mark
	// of the old checkpoint. Not applied to orderly receipts.
	Suspend bool
}

// ChangeResult is a successful CHANGE: the new receipt handle and the
// fields of ChangeInvisibleTimeResponseHeader.java it was built from.
type ChangeResult struct {
	ExtraInfo     string // the new receipt handle, as the client rebuilds it
	PopTime       int64  // popTime of the new handle, Unix ms
	InvisibleTime int64  // invisibleTime of the new handle, ms
	ReviveQid     int32  // 0, or 999 (codec.PopOrderReviveQueue) for an orderly receipt
}

// staleChangeRemark is the remark of a CHANGE whose handle names no
// in-flight checkpoint (acked, revived, or already changed by another
// CHANGE): the caller keeps the handle it has, if any is still live.
const staleChangeRemark = "receipt handle is stale: no in-flight message for it (acked, revived or already changed); nothing changed, keep the newest handle"

// errStaleChange is the answer of a CHANGE of a stale handle.
var errStaleChange = &Error{Code: codec.NoMessage, Remark: staleChangeRemark}

// ChangeInvisible validates r and replaces the checkpoint its handle names
// by one visible at now + r.InvisibleTime (or, for an orderly receipt,
// moves the offset's deadline in the queue's lease); done gets the new
// handle once that is durable, or a zero ChangeResult and an *Error with
// the codes listed above. Any goroutine; never blocks. The writer op comes
// from a pool and goes back after done returns.
func (b *Broker) ChangeInvisible(r ChangeRequest, done func(ChangeResult, error)) {
	rc, rerr := b.Svc.CheckReceipt(r.ConsumerGroup, r.Topic, r.QueueID, r.Offset, r.ExtraInfo, true)
	if rerr != nil {
		done(ChangeResult{}, rerr)
		return
	}
	if rerr := CheckInvisibleTime(r.InvisibleTime); rerr != nil {
		done(ChangeResult{}, rerr)
		return
	}
	now := b.Now()
	if rc.EI.IsOrder() {
		b.submitOrderChange(r, rc.EI, now, done)
		return
	}
	j := changeJobs.Get().(*changeJob)
	j.b, j.done, j.old = b, done, rc.Key
	j.ck = popstore.Checkpoint{
		Key:           rc.Key,
		PopTimeMillis: now, InvisibleTimeMillis: r.InvisibleTime,
		RetryFlag: uint8(codec.RetryFlagOfTopic(r.Topic)),
		Suspend:   r.Suspend,
	}
	j.ck.Key.VisibleAtMillis = now + r.InvisibleTime
	j.handle = rc.EI
	j.handle.CkQueueOffset = r.Offset
	j.handle.PopTime = now
	j.handle.InvisibleTime = r.InvisibleTime
	j.op = batch.Op{Lane: batch.LaneBulk, Bytes: 128, Job: j}
	if err := b.Writer.Submit(&j.op); err != nil {
		j.release()
		done(ChangeResult{}, SubmitError("change invisible time", err))
	}
}

// changeJobs recycles changeJobs.
var changeJobs = sync.Pool{New: func() any { return new(changeJob) }}

// changeJob is one CHANGE in the writer (batch.Job): the old checkpoint
// key, the new checkpoint, the new handle and the caller's completion. It
// belongs to the writer from Submit until Done, then goes back to
// changeJobs.
type changeJob struct {
	op     batch.Op
	b      *Broker
	done   func(ChangeResult, error)
	old    popstore.CheckpointKey
	ck     popstore.Checkpoint // the new checkpoint
	handle codec.ExtraInfo     // the new receipt handle (popTime, invisibleTime, reviveQid of the reply)
	// stale is set by Apply (writer goroutine) when the old checkpoint no
	// longer exists; Done reads it on the completer goroutine, after the
	// writer handed the batch over.
	stale bool
}

// Apply replaces the old checkpoint if it still exists, keeping its retry
// flag, suspend flag and physical offset; else writes nothing and marks the
// request stale (writer goroutine).
func (j *changeJob) Apply(tx *popstore.Txn) error {
	cur, ok, err := tx.GetCheckpoint(j.old)
	if err != nil {
		return err
	}
	if !ok {
		j.stale = true
		return nil
	}
	j.ck.RetryFlag = cur.RetryFlag
	j.ck.Suspend = j.ck.Suspend || cur.Suspend
	j.ck.PhysicalOffset = cur.PhysicalOffset
	return tx.ReplaceCheckpoint(j.old, j.ck)
}

// Done reports the new handle once durable, NO_MESSAGE (208) without one
// when the old checkpoint was gone, or the write error as "change
// invisible time failed: <cause>" (the writer's completer goroutine), then
// recycles j.
func (j *changeJob) Done(err error) {
	switch {
	case err != nil:
		j.done(ChangeResult{}, writeFailed("change invisible time", err))
	case j.stale:
		j.done(ChangeResult{}, errStaleChange)
	default:
		j.b.Revive.NoteDurable(j.ck.Key.VisibleAtMillis)
		j.done(ChangeResult{ExtraInfo: j.handle.String(), PopTime: j.handle.PopTime,
			InvisibleTime: j.handle.InvisibleTime, ReviveQid: j.handle.ReviveQid}, nil)
	}
	j.release()
}

// release clears j (the op's writer state included) and returns it to
// changeJobs.
func (j *changeJob) release() {
	*j = changeJob{}
	changeJobs.Put(j)
}
