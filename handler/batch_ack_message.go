package handler

// BATCH_ACK_MESSAGE (200151), broker/.../processor/AckMessageProcessor.java
// (batch branch) on the KV path.
//
// No header. Body: JSON {"brokerName":..,"acks":[{c,t,r,so,q,rq,pt,it,b}]}
// (codec.DecodeBatchAckBody; long member names accepted), b a Base64 Java
// BitSet, bit i acking queue offset so+i.
//
// Behaviour:
//   - Decoded and validated on the event loop. Per entry the real topic is
//     derived from t, c and r (0 → t, 1 → %RETRY%c_t, 2 → %RETRY%c+t).
//     Entries whose topic is unknown or whose queueId is out of range are
//     skipped silently, like offsets outside [minOffset, maxOffset] (RocketMQ skips
//     them too). Bits beyond maxBatchAckBits per entry are ignored.
//   - An entry whose fields cannot describe one checkpoint
//     (broker.CheckHandle: so < 0, pt ≤ 0, it out of range) makes the
//     whole request MESSAGE_ILLEGAL (13), as a body that does not decode:
//     nothing is acked and retrying cannot help.
//   - Every resulting checkpoint delete (key: pt+it, c, real topic, q,
//     offset) goes to the writer as ONE op: one fsync for the request.
//     Blind and idempotent like ACK.
//   - Entries with the orderly reviveQid 999 ack each set bit as an orderly
//     ACK (ack_message_order.go, docs/SCENARIOS.md BAT-02), in the same op as
//     the deletes; an offset no lease holds makes the answer
//     MESSAGE_ILLEGAL (13) while the rest still applies, as in Java.
//   - SUCCESS when durable (at once when nothing is left to delete).
//
// Response codes: SUCCESS (0); NO_MESSAGE (208) for an empty or missing
// body or an empty acks list; INVALID_PARAMETER (29) for a body over
// maxBatchAckBodyBytes; MESSAGE_ILLEGAL (13) for a body that does not
// decode or an entry that names no possible checkpoint (a definite answer:
// retrying cannot help); SYSTEM_BUSY (2);
// SYSTEM_ERROR (1) failed write.

import (
	"fmt"
	"strings"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// maxBatchAckBits bounds the bits read per BATCH_ACK entry. popshim's POP
// scans at most maxScanPerQueue offsets of one queue, so a legitimate bit
// index stays below it.
const maxBatchAckBits = 8192

// maxBatchAckDeletes bounds the deletes of one BATCH_ACK request; further
// bits are ignored (a hostile body cannot make one op unbounded).
const maxBatchAckDeletes = 65536

// maxBatchAckBodyBytes bounds the BATCH_ACK body decoded on the event loop
// (256 KiB, about 1,700 entries; a Java client sends a few dozen). A larger
// body is INVALID_PARAMETER (29) and nothing is acked, so one request cannot
// stall every connection of its loop while its JSON is parsed.
const maxBatchAckBodyBytes = 256 << 10

func (b *Broker) handleBatchAckMessage(c remoting.Conn, req *codec.Command) {
	if len(req.Body) == 0 {
		reply.Code(c, req, codec.NoMessage, "body is null")
		return
	}
	if len(req.Body) > maxBatchAckBodyBytes {
		reply.Code(c, req, codec.InvalidParameter, fmt.Sprintf("batch ack body of %d bytes exceeds %d", len(req.Body), maxBatchAckBodyBytes))
		return
	}
	body, err := codec.DecodeBatchAckBody(req.Body)
	if err != nil {
		reply.Code(c, req, codec.MessageIllegal, "invalid batch ack body: "+err.Error())
		return
	}
	if len(body.Acks) == 0 {
		reply.Code(c, req, codec.NoMessage, "acks is empty")
		return
	}
	for i := range body.Acks {
		a := &body.Acks[i]
		if err := broker.CheckHandle(a.StartOffset, a.StartOffset, a.PopTime, a.InvisibleTime); err != nil {
			reply.Code(c, req, codec.MessageIllegal, fmt.Sprintf("invalid batch ack entry %d: %s", i, err))
			return
		}
	}
	var keys []popstore.CheckpointKey
	var orderAcks []orderAck
	for i := range body.Acks {
		a := &body.Acks[i]
		if a.ConsumerGroup == "" || strings.ContainsAny(a.ConsumerGroup, "@\x00") {
			continue
		}
		topic := codec.RealTopic(a.Topic, a.ConsumerGroup, a.RetryFlag)
		meta, ok := b.Topics.Get(topic)
		if !ok || a.QueueID < 0 || a.QueueID >= meta.ReadQueueNums {
			continue
		}
		minOff, maxOff := b.Store.MinOffset(topic, a.QueueID), b.Store.MaxOffset(topic, a.QueueID)
		for _, off := range a.AckedOffsets(maxBatchAckBits) {
			if off < minOff || off > maxOff || len(keys)+len(orderAcks) >= maxBatchAckDeletes {
				continue
			}
			if a.ReviveQueueID == codec.PopOrderReviveQueue {
				orderAcks = append(orderAcks, orderAck{a.ConsumerGroup, topic, a.QueueID, off, a.PopTime})
				continue
			}
			keys = append(keys, popstore.CheckpointKey{
				VisibleAtMillis: a.PopTime + a.InvisibleTime, Group: a.ConsumerGroup,
				Topic: topic, QueueId: a.QueueID, QueueOffset: off,
			})
		}
	}
	if len(orderAcks) > 0 {
		b.submitOrderAcks(c, req, orderAcks, keys)
		return
	}
	if len(keys) == 0 {
		reply.Code(c, req, codec.Success, "")
		return
	}
	op := &batch.Op{
		Lane:  batch.LaneForeground,
		Bytes: 64 * len(keys),
		Apply: func(tx *popstore.Txn) error {
			for _, k := range keys {
				if err := tx.DeleteCheckpoint(k); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) {
			if err != nil {
				reply.Code(c, req, broker.WriteErrorCode(err), "batch ack failed: "+err.Error())
				return
			}
			reply.Code(c, req, codec.Success, "")
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		reply.Code(c, req, reply.SubmitCode(err), reply.SubmitRemark("batch ack", err))
	}
}
