package broker

// Consumer offsets: QUERY_CONSUMER_OFFSET (14) and UPDATE_CONSUMER_OFFSET
// (15) of remoting (broker/.../processor/ConsumerManageProcessor.java).
// The consume offset of (consumerGroup, topic, queueId) is the next
// queueOffset the group reads there; it is also the POP cursor of the
// group on that queue.

import (
	"strconv"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// QueryConsumerOffsetRequest is one QUERY_CONSUMER_OFFSET: consumerGroup,
// topic, queueId and setZeroIfNotFound
// (remoting/.../header/QueryConsumerOffsetRequestHeader.java; the adapter
// sets SetZeroIfNotFound true when the field is absent, as Java does).
type QueryConsumerOffsetRequest struct {
	codec.QueryConsumerOffsetRequestHeader
}

// QueryNotFoundRemark is the remark of QUERY_NOT_FOUND (22) for a queue
// the group has no committed offset on, worded as ConsumerManageProcessor.
const QueryNotFoundRemark = "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"

// QueryConsumerOffset answers the committed consume offset of
// (consumerGroup, topic, queueId) from the store's in-memory copy. With no
// committed offset it follows ConsumerManageProcessor: offset 0 when
// SetZeroIfNotFound allows it and the queue is hot (hotQueue: never
// trimmed, holding a message, the first within Settings.InMemoryBytes of
// the commit log's end, popshim's form of the Java broker's "first
// message still in memory"; the same rule POP's initMode MAX follows);
// otherwise QUERY_NOT_FOUND (22) with QueryNotFoundRemark, and
// the client starts from its consumeFromWhere (GET_MAX_OFFSET,
// SEARCH_OFFSET_BY_TIMESTAMP, or 0), so a new group that starts from its
// last offset does not read a backlog a Java broker has paged out. The test reads
// RocksDB on the reader pool (SYSTEM_BUSY (2) when its queue is full); done
// runs on the caller's goroutine otherwise. Any goroutine; never blocks.
func (b *Broker) QueryConsumerOffset(r QueryConsumerOffsetRequest, done func(int64, *Error)) {
	if off, ok := b.Store.ConsumerOffset(r.ConsumerGroup, r.Topic, r.QueueID); ok {
		done(off, nil)
		return
	}
	notFound := &Error{Code: codec.QueryNotFound, Remark: QueryNotFoundRemark}
	if !r.SetZeroIfNotFound || b.Store.MinOffset(r.Topic, r.QueueID) > 0 || b.Store.MaxOffset(r.Topic, r.QueueID) == 0 {
		done(0, notFound)
		return
	}
	if !b.SubmitRead(func() {
		if hotQueue(b.Store, r.Topic, r.QueueID, b.Svc.Settings.InMemoryBytes) {
			done(0, nil)
			return
		}
		done(0, notFound)
	}) {
		done(0, errBusy)
	}
}

// UpdateConsumerOffsetRequest is one UPDATE_CONSUMER_OFFSET:
// consumerGroup, topic, queueId and commitOffset, all required
// (remoting/.../header/UpdateConsumerOffsetRequestHeader.java).
type UpdateConsumerOffsetRequest struct {
	codec.UpdateConsumerOffsetRequestHeader
}

// UpdateConsumerOffset commits the consume offset of (consumerGroup,
// topic, queueId) through the writer (background lane); done gets nil once
// it is fsynced. Java clients send it every 5 s; admin tools use it to
// reset a POP group (OffsetResetForPopIT), since the same offset is the
// POP cursor.
//
// A reset racing a POP wins: the POP's offset advance is a compare-and-set
// applied on the writer (PopJob.Run), dropped when the stored offset is no
// longer the one the POP read, so a POP that read the offset before the
// reset was applied cannot overwrite it (the messages it already took are
// still delivered, with checkpoints). With --pop-write-mode=sync, ops are
// written by concurrent workers and the compare is not atomic with the
// write: a POP whose write is in flight at the moment of the reset may
// still overwrite it there. Once durable, a reset wakes one parked POP of
// the group on the queue (a rewind makes messages available again).
//
// The group must exist (ConsumerManageProcessor's containsSubscriptionGroup,
// which never creates): an unknown group is SUBSCRIPTION_GROUP_NOT_EXIST
// (26) "Group <g> not exist!", whatever --auto-create-subscription-group
// says; a consumer's HEART_BEAT, PULL or POP creates its group first when
// that flag allows. Until 2026-12-07 popshim stored the offset of an
// unknown group when the flag was on.
//
// Errors (*Error): TOPIC_NOT_EXIST (17) "Topic <t> not exist!";
// SUBSCRIPTION_GROUP_NOT_EXIST (26) as above; INVALID_PARAMETER (29) for a
// queueId outside the topic's queues or a negative commitOffset;
// SYSTEM_BUSY (2) when the lane is full, GO_AWAY (1500) when shutting down
// (SubmitError); SYSTEM_ERROR (1) "write failed: <cause>" for a failed
// write. done runs on the caller's goroutine for a refusal, else on the
// writer's completer goroutine. Any goroutine; never blocks.
func (b *Broker) UpdateConsumerOffset(r UpdateConsumerOffsetRequest, done func(error)) {
	if _, ok := b.Groups.Get(r.ConsumerGroup); !ok {
		done(&Error{Code: codec.SubscriptionGroupNotExist, Remark: "Group " + r.ConsumerGroup + " not exist!"})
		return
	}
	meta, ok := b.Topics.Get(r.Topic)
	if !ok {
		done(&Error{Code: codec.TopicNotExist, Remark: "Topic " + r.Topic + " not exist!"})
		return
	}
	if r.QueueID < 0 || r.QueueID >= max(meta.ReadQueueNums, meta.WriteQueueNums) {
		done(&Error{Code: codec.InvalidParameter, Remark: "queueId " + strconv.Itoa(int(r.QueueID)) + " out of range for topic " + r.Topic})
		return
	}
	if r.CommitOffset < 0 {
		done(&Error{Code: codec.InvalidParameter, Remark: "commitOffset must not be negative"})
		return
	}
	if b.resets.pending(r.ConsumerGroup, r.Topic, r.QueueID) {
		// An admin reset waits for the queue's next PULL: the commit is
		// answered and ignored, as ConsumerManageProcessor does ("Offset
		// has been previously reset").
		done(nil)
		return
	}
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64,
		Apply: func(tx *popstore.Txn) error {
			return tx.SetConsumerOffset(r.ConsumerGroup, r.Topic, r.QueueID, r.CommitOffset)
		},
		Done: func(err error) {
			if err != nil {
				done(offsetWriteFailed(err))
				return
			}
			b.Polls.WakeSome(r.Topic, r.QueueID, r.ConsumerGroup, 1)
			done(nil)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		done(SubmitError("", err))
	}
}

// offsetWriteFailed is the failure of a consume-offset write that was
// queued: SYSTEM_ERROR (1) "write failed: <cause>", the remark the
// remoting adapter has always sent for it.
func offsetWriteFailed(err error) *Error {
	return &Error{Code: codec.SystemError, Remark: "write failed: " + err.Error()}
}
