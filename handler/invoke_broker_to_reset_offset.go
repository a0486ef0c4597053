package handler

// INVOKE_BROKER_TO_RESET_OFFSET (222).
//
// Header: group, topic, timestamp (ms), isForce (required); queueId
// (optional, -1 = every queue); offset (optional, -1 = none)
// (ResetOffsetRequestHeader.java). mqadmin resetOffsetByTime sends it to
// every broker of the topic's route with queueId absent and offset -1;
// `-s now` is the admin host's clock, a date `yyyy-MM-dd#HH:mm:ss:SSS` is
// parsed there too.
//
// Behaviour: the server-side reset of a 5.x broker
// (AdminBrokerProcessor.resetOffsetInner, useServerSideResetOffset true by
// default), so no RESET_CONSUMER_CLIENT_OFFSET (220) goes to clients and
// isForce is ignored, as in Java.
//   - Target per queue: with queueId ≥ 0 and an offset, that offset, which
//     must lie in [minOffset, maxOffset + 1] (else SYSTEM_ERROR "Target
//     offset N not in consume queue range [min-max]", Java's check);
//     otherwise the first queueOffset whose store time is ≥ timestamp
//     (SEARCH_OFFSET_BY_TIMESTAMP's LOWER boundary, the max offset when
//     every message is older), or the max offset for a negative timestamp.
//     Without queueId every read queue of the topic is reset.
//   - The group's consume offsets of those queues are written in one
//     WriteBatch through the writer (background lane) and the reply is
//     sent after the fsync. The consume offset is the POP cursor: the next
//     POP of the group reads from the new offset (POP keeps no other read
//     position), and a POP in flight that read the old offset loses its
//     offset advance to the reset (the compare-and-set in the POP job, as
//     for UPDATE_CONSUMER_OFFSET). Parked POPs, PULLs and NOTIFICATIONs of
//     the group on those queues are woken once the write is durable.
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
// Response codes: SUCCESS (0), body ResetOffsetBody {"offsetTable":
// {MessageQueue: offset}} with fastjson2 object keys; TOPIC_NOT_EXIST (17)
// "Topic <t> does not exist"; SUBSCRIPTION_GROUP_NOT_EXIST (26) "Group <g>
// does not exist" (a group not in the table; nothing is auto-created);
// INVALID_PARAMETER (29) for a queueId ≥ the topic's queue count (Java
// would write an offset for that queue); SYSTEM_ERROR (1) for a target
// offset out of range, a topic with no read queue ("No queues to reset."),
// a missing or invalid header field, a store error or a failed write;
// SYSTEM_BUSY (2) when the reader queue or the writer lane is full.
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
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleInvokeBrokerToResetOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeResetOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	meta, ok := b.Topics.Get(h.Topic)
	if !ok {
		reply.Code(c, req, codec.TopicNotExist, "Topic "+h.Topic+" does not exist")
		return
	}
	if _, ok := b.Groups.Get(h.Group); !ok {
		reply.Code(c, req, codec.SubscriptionGroupNotExist, "Group "+h.Group+" does not exist")
		return
	}
	var queues []int32
	switch {
	case h.QueueID >= max(meta.ReadQueueNums, meta.WriteQueueNums):
		reply.Code(c, req, codec.InvalidParameter, "queueId "+strconv.Itoa(int(h.QueueID))+" out of range for topic "+h.Topic)
		return
	case h.QueueID >= 0:
		queues = []int32{h.QueueID}
	default:
		for q := int32(0); q < meta.ReadQueueNums; q++ {
			queues = append(queues, q)
		}
	}
	if len(queues) == 0 {
		reply.Code(c, req, codec.SystemError, "No queues to reset.")
		return
	}
	if !b.SubmitRead(func() { b.resetOffsets(c, req, h, queues) }) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}

// resetOffsets finds the target offset of every queue and submits their
// write; the reply is sent from the op's Done. Reader pool only (the
// timestamp search reads RocksDB).
func (b *Broker) resetOffsets(c remoting.Conn, req *codec.Command, h codec.ResetOffsetRequestHeader, queues []int32) {
	rows := make([]codec.QueueOffset, 0, len(queues))
	for _, q := range queues {
		off, code, remark := b.resetTarget(h, q)
		if code != codec.Success {
			reply.Code(c, req, code, remark)
			return
		}
		rows = append(rows, codec.QueueOffset{Queue: codec.MessageQueue{Topic: h.Topic, BrokerName: b.Cfg.BrokerName, QueueID: q}, Offset: off})
	}
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64 * len(rows),
		Apply: func(tx *popstore.Txn) error {
			for _, r := range rows {
				if err := tx.SetConsumerOffset(h.Group, h.Topic, r.Queue.QueueID, r.Offset); err != nil {
					return err
				}
				// A reset ends the queue's orderly lease (Java: clearBlock in
				// PopMessageProcessor.resetPopOffset).
				if err := tx.DeleteOrderState(h.Group, h.Topic, r.Queue.QueueID); err != nil {
					return err
				}
			}
			return nil
		},
		Done: func(err error) {
			if err != nil {
				reply.Done(c, req, err)
				return
			}
			for _, r := range rows {
				b.Polls.WakeSome(h.Topic, r.Queue.QueueID, h.Group, 0)
			}
			b.Log.Info().Str("topic", h.Topic).Str("group", h.Group).Int64("timestamp", h.Timestamp).
				Int("queues", len(rows)).Stringer("from", c.RemoteAddr()).Msg("consume offsets reset")
			resp := codec.NewResponse(req, codec.Success, "")
			resp.Body = codec.AppendResetOffsetBody(nil, rows)
			reply.Respond(c, req, resp)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		reply.SubmitError(c, req, err)
	}
}

// resetTarget is the new consume offset of queue q
// (AdminBrokerProcessor.resetOffsetInner): the header's offset when it
// names one queue and an offset, else the search by timestamp. A refusal
// comes back as a response code and remark. Reader pool only.
func (b *Broker) resetTarget(h codec.ResetOffsetRequestHeader, q int32) (int64, int32, string) {
	minOff, maxOff := b.Store.MinOffset(h.Topic, q), b.Store.MaxOffset(h.Topic, q)
	switch {
	case h.QueueID >= 0 && h.HasOffset:
		if (minOff >= 0 && h.Offset < minOff) || h.Offset > maxOff+1 {
			return 0, codec.SystemError, fmt.Sprintf("Target offset %d not in consume queue range [%d-%d]", h.Offset, minOff, maxOff)
		}
		return h.Offset, codec.Success, ""
	case h.Timestamp < 0:
		return max(maxOff, 0), codec.Success, ""
	}
	off, err := b.Store.SearchOffsetByTimestamp(h.Topic, q, h.Timestamp)
	if err != nil {
		return 0, codec.SystemError, "search offset: " + err.Error()
	}
	return off, codec.Success, ""
}
