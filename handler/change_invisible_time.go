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
//   - One writer op (foreground lane): the new checkpoint (popTime = broker
//     now, invisibleTime as asked, same group/topic/queue/offset, retry flag
//     kept) is written and the old one deleted in the same WriteBatch; when
//     both keys are equal the delete is skipped (RocketMQ PR #10277).
//   - The old checkpoint is read inside the writer (through the batch being
//     built): if it no longer exists (acked, revived or already changed),
//     nothing is written and SUCCESS is still answered, so a stale handle
//     cannot create a second in-flight record (one redelivery, not two:
//     pop-scenarios POP-06, CHG-02). The Java broker writes blindly.
//   - SUCCESS when durable, with header popTime, invisibleTime, reviveQid
//     (echoed) for the new handle, plus ext field extraInfo holding the new
//     handle as the client would build it.
//
// Response codes: SUCCESS (0); SYSTEM_BUSY (2); SYSTEM_ERROR (1) header
// errors, failed write; TOPIC_NOT_EXIST (17); MESSAGE_ILLEGAL (13) bad
// queueId or invalid receipt handle; NO_MESSAGE (208) offset outside
// [minOffset, maxOffset); INVALID_PARAMETER (29) negative invisibleTime.

import (
	"fmt"

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
	if h.InvisibleTime < 0 {
		respondCode(c, req, codec.InvalidParameter, fmt.Sprintf("invisibleTime %d is negative", h.InvisibleTime))
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
		Lane:  batch.LaneForeground,
		Bytes: 128,
		Apply: func(tx *popstore.Txn) error {
			cur, ok, err := tx.GetCheckpoint(old)
			if err != nil || !ok {
				return err
			}
			ck.RetryFlag = cur.RetryFlag
			ck.Suspend = cur.Suspend
			ck.AttemptId = cur.AttemptId // carries the message's physical offset
			return tx.ReplaceCheckpoint(old, ck)
		},
		Done: func(err error) {
			if err != nil {
				respondCode(c, req, writeErrorCode(err), "change invisible time failed: "+err.Error())
				return
			}
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
