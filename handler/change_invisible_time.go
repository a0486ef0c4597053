package handler

// CHANGE_MESSAGE_INVISIBLETIME (200053),
// broker/.../processor/ChangeInvisibleTimeProcessor.java on the KV path
// (PopConsumerService.changeInvisibilityDuration).
//
// Header (codec.ChangeInvisibleTimeRequestHeader): consumerGroup, topic
// (real topic, as for ACK), queueId, offset, extraInfo, invisibleTime (ms,
// counted from now), bname.
//
// Behaviour:
//   - Validated on the event loop like ACK, except that offset == maxOffset
//     is NO_MESSAGE (docs/SCENARIOS.md CHG-01); a negative invisibleTime is
//     INVALID_PARAMETER.
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
//     hand out a handle that holds no lease (otherwise an ACK of
//     such a handle would answer SUCCESS and the message still come back).
//     The Java broker writes blindly and answers SUCCESS. Java clients map
//     any code but SUCCESS to AckStatus.NO_EXIST and keep their handle
//     (MQClientAPIImpl.changeInvisibleTimeAsync); the 5.x proxy stops
//     renewing that handle (DefaultReceiptHandleManager) and answers a gRPC
//     client INTERNAL_SERVER_ERROR without a handle. A chain of CHANGEs each
//     using the newest handle is unaffected.
//   - Bulk lane (batch.LaneBulk): CHANGEs come in bursts (a proxy renewing
//     thousands of handles at once), and on the foreground lane a burst made
//     every ACK behind it wait for one huge batch. On the bulk lane each
//     batch takes at most --batch-max-bulk-ops CHANGEs, so ACKs accepted
//     after a burst overtake its queued CHANGEs. Why that reordering is
//     safe (the KV path's rules, broker/.../pop/PopConsumerService.java):
//     1. An ACK or CHANGE names a key the client learned from a POP or
//     CHANGE reply, and those are sent only after the put is durable: a
//     request that could follow a CHANGE causally (ACK or CHANGE of the
//     new handle) is accepted after the CHANGE was applied, so no
//     reordering can apply it before the put it refers to.
//     2. What can be reordered are requests the client had in flight at
//     the same time, which the Java broker also runs in any order on its
//     thread pool. ACK(h) and CHANGE(h) of the same handle h: ACK first →
//     the CHANGE finds no old checkpoint, writes nothing and answers
//     NO_MESSAGE (acked, never redelivered); CHANGE first → the ACK deletes a key that no longer
//     exists and the new checkpoint redelivers the message once unless the
//     new handle is acked. Both are at-least-once outcomes, and neither
//     leaves two in-flight records, because the existence check and the
//     put/delete run atomically in the writer.
//     3. Revive (background lane) also checks existence in the writer, so
//     a CHANGE and a revive of the same checkpoint redeliver exactly once
//     in either order. POP checkpoints (foreground) are new keys nobody
//     can have changed yet.
//     Within the bulk lane CHANGEs keep accept order (two CHANGEs of one
//     handle: the second finds nothing, writes nothing and answers
//     NO_MESSAGE, whatever their popTimes).
//   - SUCCESS when durable, with header popTime, invisibleTime, reviveQid
//     (echoed) for the new handle, plus ext field extraInfo holding the new
//     handle as the client would build it.
//   - An orderly receipt (reviveQid 999) moves the deadline of its offset in
//     the queue's lease instead (change_invisible_time_order.go).
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2); SYSTEM_ERROR (1) header
// errors, failed write; TOPIC_NOT_EXIST (17); MESSAGE_ILLEGAL (13) bad
// queueId or invalid receipt handle; NO_MESSAGE (208) offset outside
// [minOffset, maxOffset), or a stale handle (no in-flight checkpoint: no
// new handle, nothing written); INVALID_PARAMETER (29) invisibleTime negative or
// above MaxInvisibleTimeMillis, or an invalid consumerGroup.

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleChangeInvisibleTime(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeChangeInvisibleTimeRequest(req)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	rc, rerr := b.Svc.CheckReceipt(h.ConsumerGroup, h.Topic, h.QueueID, h.Offset, h.ExtraInfo, true)
	if rerr != nil {
		reply.Code(c, req, rerr.Code, rerr.Remark)
		return
	}
	if rerr := broker.CheckInvisibleTime(h.InvisibleTime); rerr != nil {
		reply.Code(c, req, rerr.Code, rerr.Remark)
		return
	}
	now := b.Now()
	if rc.EI.IsOrder() {
		b.submitOrderChange(c, req, h, rc.EI, now)
		return
	}
	j := &changeJob{b: b, c: c, req: req, old: rc.Key, invisible: h.InvisibleTime, now: now, reviveQid: rc.EI.ReviveQid}
	j.ck = popstore.Checkpoint{
		Key:           rc.Key,
		PopTimeMillis: now, InvisibleTimeMillis: h.InvisibleTime,
		RetryFlag: uint8(codec.RetryFlagOfTopic(h.Topic)),
	}
	j.ck.Key.VisibleAtMillis = now + h.InvisibleTime
	j.handle = rc.EI
	j.handle.CkQueueOffset = h.Offset
	j.handle.PopTime = now
	j.handle.InvisibleTime = h.InvisibleTime
	j.op = batch.Op{Lane: batch.LaneBulk, Bytes: 128, Job: j}
	if err := b.Writer.Submit(&j.op); err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("change invisible time", err))
	}
}

// staleChangeRemark is the remark of a CHANGE whose handle names no
// in-flight checkpoint (acked, revived, or already changed by another
// CHANGE): the caller keeps the handle it has, if any is still live.
const staleChangeRemark = "receipt handle is stale: no in-flight message for it (acked, revived or already changed); nothing changed, keep the newest handle"

// changeJob is one CHANGE in the writer, in one allocation (batch.Job): the
// old checkpoint key, the new checkpoint, the new handle and where the reply
// goes.
type changeJob struct {
	op        batch.Op
	b         *Broker
	c         remoting.Conn
	req       *codec.Command
	old       popstore.CheckpointKey
	ck        popstore.Checkpoint // the new checkpoint
	handle    codec.ExtraInfo     // the new receipt handle
	now       int64               // popTime of the new handle, ms
	invisible int64               // invisibleTime, ms
	reviveQid int32
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
	j.ck.Suspend = cur.Suspend
	j.ck.PhysicalOffset = cur.PhysicalOffset
	return tx.ReplaceCheckpoint(j.old, j.ck)
}

// Done answers SUCCESS with the new handle once durable, NO_MESSAGE (208)
// without a handle when the old checkpoint was gone (the writer's
// completer goroutine).
func (j *changeJob) Done(err error) {
	if err != nil {
		reply.Code(j.c, j.req, broker.WriteErrorCode(err), "change invisible time failed: "+err.Error())
		return
	}
	if j.stale {
		reply.Code(j.c, j.req, codec.NoMessage, staleChangeRemark)
		return
	}
	j.b.Revive.NoteDurable(j.ck.Key.VisibleAtMillis)
	resp := codec.NewResponse(j.req, codec.Success, "")
	codec.ChangeInvisibleTimeResponseHeader{PopTime: j.now, InvisibleTime: j.invisible, ReviveQid: j.reviveQid}.Encode(resp)
	resp.SetExt("extraInfo", j.handle.String())
	reply.Respond(j.c, j.req, resp)
}
