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
//     is NO_MESSAGE (pop-scenarios CHG-01); a negative invisibleTime is
//     INVALID_PARAMETER.
//   - One writer op (bulk lane, see below): the new checkpoint (popTime =
//     broker now, invisibleTime as asked, same group/topic/queue/offset,
//     retry flag kept) is written and the old one deleted in the same
//     WriteBatch; when both keys are equal the delete is skipped (RocketMQ
//     PR #10277).
//   - The old checkpoint is read inside the writer (through the batch being
//     built): if it no longer exists (acked, revived or already changed),
//     nothing is written and SUCCESS is still answered, so a stale handle
//     cannot create a second in-flight record (one redelivery, not two:
//     pop-scenarios POP-06, CHG-02). The Java broker writes blindly.
//   - Bulk lane (batch.LaneBulk): CHANGEs come in bursts (a proxy renewing
//     thousands of handles at once), and on the foreground lane a burst made
//     every ACK behind it wait for one huge batch. On the bulk lane each
//     batch takes at most --batch-max-bulk-ops CHANGEs, so ACKs accepted
//     after a burst overtake its queued CHANGEs. Why that reordering is
//     safe (pop-kv-semantics §7 rules 4, 5, 8, 9):
//     1. An ACK or CHANGE names a key the client learned from a POP or
//     CHANGE reply, and those are sent only after the put is durable: a
//     request that could follow a CHANGE causally (ACK or CHANGE of the
//     new handle) is accepted after the CHANGE was applied, so no
//     reordering can apply it before the put it refers to.
//     2. What can be reordered are requests the client had in flight at
//     the same time, which the Java broker also runs in any order on its
//     thread pool. ACK(h) and CHANGE(h) of the same handle h: ACK first →
//     the CHANGE finds no old checkpoint and writes nothing (acked, never
//     redelivered); CHANGE first → the ACK deletes a key that no longer
//     exists and the new checkpoint redelivers the message once unless the
//     new handle is acked. Both are at-least-once outcomes, and neither
//     leaves two in-flight records, because the existence check and the
//     put/delete run atomically in the writer.
//     3. Revive (background lane) also checks existence in the writer, so
//     a CHANGE and a revive of the same checkpoint redeliver exactly once
//     in either order. POP checkpoints (foreground) are new keys nobody
//     can have changed yet.
//     Within the bulk lane CHANGEs keep accept order (two CHANGEs of one
//     handle: the second finds nothing and writes nothing).
//   - SUCCESS when durable, with header popTime, invisibleTime, reviveQid
//     (echoed) for the new handle, plus ext field extraInfo holding the new
//     handle as the client would build it.
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2); SYSTEM_ERROR (1) header
// errors, failed write; TOPIC_NOT_EXIST (17); MESSAGE_ILLEGAL (13) bad
// queueId or invalid receipt handle; NO_MESSAGE (208) offset outside
// [minOffset, maxOffset); INVALID_PARAMETER (29) invisibleTime negative or
// above MaxInvisibleTimeMillis, or an invalid consumerGroup.

import (
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleChangeInvisibleTime(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeChangeInvisibleTimeRequestHeader(req.ExtFields)
	if err != nil {
		respondHeaderError(c, req, err)
		return
	}
	rc, rerr := b.checkReceipt(h.ConsumerGroup, h.Topic, h.QueueID, h.Offset, h.ExtraInfo, true)
	if rerr != nil {
		respondCode(c, req, rerr.code, rerr.remark)
		return
	}
	if rerr := checkInvisibleTime(h.InvisibleTime); rerr != nil {
		respondCode(c, req, rerr.code, rerr.remark)
		return
	}
	now := b.nowMillis()
	old := rc.key
	ck := popstore.Checkpoint{
		Key:           old,
		PopTimeMillis: now, InvisibleTimeMillis: h.InvisibleTime,
		RetryFlag: uint8(codec.RetryFlagOfTopic(h.Topic)),
	}
	ck.Key.VisibleAtMillis = now + h.InvisibleTime
	newHandle := rc.ei
	newHandle.CkQueueOffset = h.Offset
	newHandle.PopTime = now
	newHandle.InvisibleTime = h.InvisibleTime
	op := &batch.Op{
		Lane:  batch.LaneBulk,
		Bytes: 128,
		Apply: func(tx *popstore.Txn) error {
			cur, ok, err := tx.GetCheckpoint(old)
			if err != nil || !ok {
				return err
			}
			ck.RetryFlag = cur.RetryFlag
			ck.Suspend = cur.Suspend
			ck.PhysicalOffset = cur.PhysicalOffset
			return tx.ReplaceCheckpoint(old, ck)
		},
		Done: func(err error) {
			if err != nil {
				respondCode(c, req, writeErrorCode(err), "change invisible time failed: "+err.Error())
				return
			}
			b.revive.noteDurable(ck.Key.VisibleAtMillis)
			resp := codec.NewResponse(req, codec.Success, "")
			codec.ChangeInvisibleTimeResponseHeader{PopTime: now, InvisibleTime: h.InvisibleTime, ReviveQid: rc.ei.ReviveQid}.Encode(resp)
			resp.SetExt("extraInfo", newHandle.String())
			respond(c, req, resp)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		respondCode(c, req, submitCode(err), "change invisible time: "+err.Error())
	}
}
