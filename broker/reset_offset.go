package broker

// ResetOffset: INVOKE_BROKER_TO_RESET_OFFSET (222) of remoting, the
// server-side reset of a 5.x broker (AdminBrokerProcessor.resetOffsetInner,
// useServerSideResetOffset true by default), so no
// RESET_CONSUMER_CLIENT_OFFSET (220) goes to clients and isForce is
// ignored, as in Java.
//
// Request (ResetOffsetRequest: codec.ResetOffsetRequestHeader): group,
// topic, timestamp (ms), isForce; queueId (-1 = every queue); offset
// (HasOffset false = none). mqadmin resetOffsetByTime sends it to every
// broker of the topic's route with queueId absent and offset -1; `-s now`
// is the admin host's clock, a date `yyyy-MM-dd#HH:mm:ss:SSS` is parsed
// there too.
//
// Behaviour:
//   - Target per queue: with queueId ≥ 0 and an offset, that offset, which
//     must lie in [minOffset, maxOffset + 1] (else SYSTEM_ERROR "Target
//     offset N not in consume queue range [min-max]", Java's check);
//     otherwise the first queueOffset whose store time is ≥ timestamp
//     (SearchOffset's LOWER boundary, the max offset when every message is
//     older), or the max offset for a negative timestamp. Without queueId
//     every read queue of the topic is reset.
//   - The targets are found on the reader pool (the timestamp search reads
//     RocksDB); the group's consume offsets of those queues are written in
//     one WriteBatch through the writer (background lane) and done runs
//     after the fsync. The consume offset is the POP cursor: the next POP
//     of the group reads from the new offset (POP keeps no other read
//     position), and a POP in flight that read the old offset loses its
//     offset advance to the reset (the compare-and-set in the POP job, as
//     for UpdateConsumerOffset). Parked POPs, PULLs and NOTIFICATIONs of
//     the group on those queues are woken once the write is durable. A
//     reset also ends the queues' orderly leases (Java: clearBlock in
//     PopMessageProcessor.resetPopOffset).
//   - Until a queue's next PULL its reset is pending (reset_pending.go):
//     a client's commits of that queue are ignored and the PULL answers
//     PULL_OFFSET_MOVED with the reset offset, as a 5.x broker's
//     useServerSideResetOffset does.
//   - In-flight checkpoints of the group are kept. Java does not touch
//     them either: resetPopOffset (PopMessageProcessor) only drops the
//     PopBufferMergeService commit-offset queue (clearOffsetQueue) so that
//     ACKs of older POPs cannot move the offset past the reset, and
//     clearInFlightMessageNum zeroes a counter; checkpoints already stored
//     stay and are revived. So an ACK of a receipt taken before the reset
//     still succeeds, and an unacked message taken before the reset comes
//     back through its retry topic when its invisible time ends, besides
//     being read again from the queue after a rewind. popshim's POP commits
//     the offset when it reads, not when checkpoints are acked, so there is
//     no commit-offset queue to drop.
//   - Messages read again after a rewind are the stored originals:
//     reconsumeTimes as stored (0 for a message never sent back), a new
//     receipt handle. Retry topics of the group are not reset (Java resets
//     only the topic named).
//
// Result: ResetOffsetResult, the new offset of every queue reset (remoting
// sends it as ResetOffsetBody {"offsetTable": {MessageQueue: offset}}).
// Errors (*Error): TOPIC_NOT_EXIST (17) "Topic <t> does not exist";
// SUBSCRIPTION_GROUP_NOT_EXIST (26) "Group <g> does not exist" (a group not
// in the table; nothing is auto-created); INVALID_PARAMETER (29) for a
// queueId ≥ the topic's queue count (Java would write an offset for that
// queue); SYSTEM_ERROR (1) for a target offset out of range, a topic with
// no read queue ("No queues to reset."), a store error ("search offset:
// <cause>") or a failed write ("write failed: <cause>"); SYSTEM_BUSY (2)
// when the reader queue or the writer lane is full; GO_AWAY (1500) when
// the writer is closed for shutdown.
//
// Differences: Java keeps the reset in a side table until the next POP or
// PULL of that queue consumes it and meanwhile ignores the client's
// UPDATE_CONSUMER_OFFSET for it (hasOffsetReset), so a push consumer's
// periodic commit cannot undo the reset; popshim writes the offset itself
// and does not filter later commits (POP consumers do not send them).

import (
	"fmt"
	"strconv"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// ResetOffsetRequest is one offset reset: the fields of
// remoting/.../header/ResetOffsetRequestHeader.java and who asked.
type ResetOffsetRequest struct {
	codec.ResetOffsetRequestHeader
	// Requester names who asked, for the log line of a done reset
	// (remoting: the peer's "ip:port"); "" when unknown.
	Requester string
}

// ResetOffsetResult lists the new consume offset of every queue reset
// (Queue.BrokerName is --broker-name), in queue order.
type ResetOffsetResult struct {
	Offsets []codec.QueueOffset
}

// ResetOffset validates r, finds the target offset of every queue on the
// reader pool and writes them; done gets the new offsets once they are
// durable, or an *Error with the codes listed above. done runs on the
// caller's goroutine for a refusal before anything was queued, else on a
// reader goroutine (a refused target or write) or the writer's completer.
// Any goroutine; never blocks.
func (b *Broker) ResetOffset(r ResetOffsetRequest, done func(ResetOffsetResult, error)) {
	refuse := func(e *Error) { done(ResetOffsetResult{}, e) }
	meta, ok := b.Topics.Get(r.Topic)
	if !ok {
		refuse(&Error{Code: codec.TopicNotExist, Remark: "Topic " + r.Topic + " does not exist"})
		return
	}
	if _, ok := b.Groups.Get(r.Group); !ok {
		refuse(&Error{Code: codec.SubscriptionGroupNotExist, Remark: "Group " + r.Group + " does not exist"})
		return
	}
	var queues []int32
	switch {
	case r.QueueID >= max(meta.ReadQueueNums, meta.WriteQueueNums):
		refuse(&Error{Code: codec.InvalidParameter, Remark: "queueId " + strconv.Itoa(int(r.QueueID)) + " out of range for topic " + r.Topic})
		return
	case r.QueueID >= 0:
		queues = []int32{r.QueueID}
	default:
		for q := int32(0); q < meta.ReadQueueNums; q++ {
			queues = append(queues, q)
		}
	}
	if len(queues) == 0 {
		refuse(&Error{Code: codec.SystemError, Remark: "No queues to reset."})
		return
	}
	if !b.SubmitRead(func() { b.resetOffsets(r, queues, done) }) {
		refuse(errBusy)
	}
}

// resetOffsets finds the target offset of every queue and submits their
// write; done runs from the op's Done. Reader pool only (the timestamp
// search reads RocksDB).
func (b *Broker) resetOffsets(r ResetOffsetRequest, queues []int32, done func(ResetOffsetResult, error)) {
	rows := make([]codec.QueueOffset, 0, len(queues))
	for _, q := range queues {
		off, e := b.resetTarget(r.ResetOffsetRequestHeader, q)
		if e != nil {
			done(ResetOffsetResult{}, e)
			return
		}
		rows = append(rows, codec.QueueOffset{Queue: codec.MessageQueue{Topic: r.Topic, BrokerName: b.Cfg.BrokerName, QueueID: q}, Offset: off})
	}
	// Pending before the write is queued: an UPDATE_CONSUMER_OFFSET queued
	// after this point is ignored, one queued before is applied first
	// (same lane), so no client commit lands after the reset.
	for _, row := range rows {
		b.resets.assign(r.Group, r.Topic, row.Queue.QueueID, row.Offset)
	}
	failed := func(e error) {
		for _, row := range rows {
			b.resets.drop(r.Group, r.Topic, row.Queue.QueueID, row.Offset)
		}
		done(ResetOffsetResult{}, e)
	}
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64 * len(rows),
		Apply: func(tx *popstore.Txn) error {
			for _, row := range rows {
				if err := tx.SetConsumerOffset(r.Group, r.Topic, row.Queue.QueueID, row.Offset); err != nil {
					return err
				}
				// A reset ends the queue's orderly lease (Java: clearBlock in
				// PopMessageProcessor.resetPopOffset).
				if err := tx.DeleteOrderState(r.Group, r.Topic, row.Queue.QueueID); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) {
			if err != nil {
				failed(offsetWriteFailed(err))
				return
			}
			for _, row := range rows {
				b.Polls.WakeSome(r.Topic, row.Queue.QueueID, r.Group, 0)
			}
			b.Log.Info().Str("topic", r.Topic).Str("group", r.Group).Int64("timestamp", r.Timestamp).
				Int("queues", len(rows)).Str("from", r.Requester).Msg("consume offsets reset")
			done(ResetOffsetResult{Offsets: rows}, nil)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		failed(SubmitError("", err))
	}
}

// resetTarget is the new consume offset of queue q
// (AdminBrokerProcessor.resetOffsetInner): the header's offset when it
// names one queue and an offset, else the search by timestamp. Reader pool
// only.
func (b *Broker) resetTarget(h codec.ResetOffsetRequestHeader, q int32) (int64, *Error) {
	minOff, maxOff := b.Store.MinOffset(h.Topic, q), b.Store.MaxOffset(h.Topic, q)
	switch {
	case h.QueueID >= 0 && h.HasOffset:
		if (minOff >= 0 && h.Offset < minOff) || h.Offset > maxOff+1 {
			return 0, &Error{Code: codec.SystemError, Remark: fmt.Sprintf("Target offset %d not in consume queue range [%d-%d]", h.Offset, minOff, maxOff)}
		}
		return h.Offset, nil
	case h.Timestamp < 0:
		return max(maxOff, 0), nil
	}
	off, err := b.Store.SearchOffsetByTimestamp(h.Topic, q, h.Timestamp)
	if err != nil {
		return 0, searchFailed(err)
	}
	return off, nil
}
