package broker

// BatchAck: BATCH_ACK_MESSAGE (200151) of remoting,
// broker/.../processor/AckMessageProcessor.java (batch branch) on the KV
// path.
//
// Request (BatchAckRequest): the entries of the decoded body
// (codec.BatchAck: c, t, r, so, q, rq, pt, it and the bit set, bit i acking
// queue offset so+i).
//
// Behaviour:
//   - Validated on the caller's goroutine. Per entry the real topic is
//     derived from t, c and r (0 → t, 1 → %RETRY%c_t, 2 → %RETRY%c+t).
//     Entries whose topic is unknown or whose queueId is out of range are
//     skipped silently, like offsets outside [minOffset, maxOffset]
//     (RocketMQ skips them too), and so are entries whose consumerGroup is
//     empty or holds '@' or NUL. Bits beyond maxBatchAckBits per entry are
//     ignored.
//   - An entry whose fields cannot describe one checkpoint (CheckHandle:
//     so < 0, pt ≤ 0, it out of range) makes the whole request
//     MESSAGE_ILLEGAL (13), as a body that does not decode: nothing is
//     acked and retrying cannot help.
//   - Every resulting checkpoint delete (key: pt+it, c, real topic, q,
//     offset) goes to the writer as ONE op: one fsync for the request.
//     Blind and idempotent like ACK.
//   - Entries with the orderly reviveQid 999 ack each set bit as an orderly
//     ACK (ack_order.go, docs/SCENARIOS.md BAT-02), in the same op as the
//     deletes; an offset no lease holds makes the answer MESSAGE_ILLEGAL
//     (13) while the rest still applies, as in Java.
//   - Success when durable (at once when nothing is left to delete).
//
// Response codes: SUCCESS (0); NO_MESSAGE (208) for an empty acks list;
// MESSAGE_ILLEGAL (13) for an entry that names no possible checkpoint (a
// definite answer: retrying cannot help) or an orderly offset no lease
// holds; SYSTEM_BUSY (2); SYSTEM_ERROR (1) failed write.

import (
	"strings"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// maxBatchAckBits bounds the bits read per BATCH_ACK entry. popshim's POP
// scans at most maxScanPerQueue offsets of one queue, so a legitimate bit
// index stays below it.
const maxBatchAckBits = 8192

// maxBatchAckDeletes bounds the deletes of one BATCH_ACK request; further
// bits are ignored (a hostile body cannot make one op unbounded).
const maxBatchAckDeletes = 65536

// BatchAckRequest is one BATCH_ACK: the entries of its body
// (remoting/.../protocol/body/BatchAckMessageRequestBody.java, decoded by
// codec.DecodeBatchAckBody).
type BatchAckRequest struct {
	Acks []codec.BatchAck
}

// BatchAck validates r and deletes every checkpoint its entries name (and
// commits their orderly offsets) in one writer op; done gets nil once that
// is durable, or an *Error with the codes listed above. Any goroutine;
// never blocks.
func (b *Broker) BatchAck(r BatchAckRequest, done func(error)) {
	if len(r.Acks) == 0 {
		done(&Error{Code: codec.NoMessage, Remark: "acks is empty"})
		return
	}
	for i := range r.Acks {
		a := &r.Acks[i]
		if err := CheckHandle(a.StartOffset, a.StartOffset, a.PopTime, a.InvisibleTime); err != nil {
			done(Errorf(codec.MessageIllegal, "invalid batch ack entry %d: %s", i, err))
			return
		}
	}
	keys, orderAcks := b.batchAckTargets(r.Acks)
	if len(orderAcks) > 0 {
		b.submitOrderAcks(orderAcks, keys, done)
		return
	}
	if len(keys) == 0 {
		done(nil)
		return
	}
	b.submitCheckpointDeletes("batch ack", keys, done)
}

// submitCheckpointDeletes deletes keys in one foreground writer op and
// calls done once: nil after the fsync, else an *Error naming what (the
// write's code from writeFailed, or SubmitError's SYSTEM_BUSY when the
// writer refuses the op). keys belong to the op from here on. Any
// goroutine; never blocks.
func (b *Broker) submitCheckpointDeletes(what string, keys []popstore.CheckpointKey, done func(error)) {
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
				done(writeFailed(what, err))
				return
			}
			done(nil)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		done(SubmitError(what, err))
	}
}

// batchAckTargets lists the checkpoint keys and the orderly acks of acks,
// skipping what the behaviour list above skips, at most maxBatchAckDeletes
// in all. In-memory state only.
func (b *Broker) batchAckTargets(acks []codec.BatchAck) (keys []popstore.CheckpointKey, orderAcks []orderAck) {
	for i := range acks {
		a := &acks[i]
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
	return keys, orderAcks
}
