package handler

// UPDATE_CONSUMER_OFFSET (15).
//
// Header: consumerGroup, topic, queueId, commitOffset (all required)
// (UpdateConsumerOffsetRequestHeader.java). Java clients send it oneway
// every 5 s; the Go client without the oneway bit.
//
// Behaviour: commits the consume offset of (consumerGroup, topic, queueId)
// through the writer (background lane) and answers once it is fsynced. The
// same offset is the POP cursor of the group on that queue, so this is also
// how admin tools reset a POP group (OffsetResetForPopIT). Oneway requests
// are written all the same and get no reply.
//
// A reset racing a POP wins: the POP's offset advance is a compare-and-set
// applied on the writer (popJob.run), dropped when the stored offset is no
// longer the one the POP read, so a POP that read the offset before the
// reset was applied cannot overwrite it (the messages it already took are
// still delivered, with checkpoints). With --pop-write-mode=sync, ops are
// written by concurrent workers and the compare is not atomic with the
// write: a POP whose write is in flight at the moment of the reset may
// still overwrite it there. Once durable, a reset wakes one parked POP of
// the group on the queue (a rewind makes messages available again).
//
// The group must exist (ConsumerManageProcessor's containsSubscriptionGroup,
// which never creates): with --auto-create-subscription-group off an
// unknown group is SUBSCRIPTION_GROUP_NOT_EXIST (26) "Group <g> not exist!".
// With it on, popshim accepts the offset of a group it has not seen (a
// Java broker answers 26 there too, but every consumer that could commit
// has been auto-created by its HEART_BEAT or POP; admin tools resetting a
// group that only ever pulled through a proxy keep working). The offset
// commit does not create the group.
//
// Response codes: SUCCESS (0); TOPIC_NOT_EXIST (17) for an unknown topic;
// SUBSCRIPTION_GROUP_NOT_EXIST (26) as above;
// INVALID_PARAMETER (29) for a queueId outside the topic's queues or a
// negative commitOffset; SYSTEM_BUSY (2) when the lane is full;
// SYSTEM_ERROR (1) naming a missing field, or for a failed write.

import (
	"strconv"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUpdateConsumerOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeUpdateConsumerOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	if _, ok := b.Groups.Get(h.ConsumerGroup); !ok && !b.Groups.MayAutoCreate(h.ConsumerGroup) {
		reply.Code(c, req, codec.SubscriptionGroupNotExist, "Group "+h.ConsumerGroup+" not exist!")
		return
	}
	meta, ok := b.Topics.Get(h.Topic)
	if !ok {
		reply.Code(c, req, codec.TopicNotExist, "Topic "+h.Topic+" not exist!")
		return
	}
	if h.QueueID < 0 || h.QueueID >= max(meta.ReadQueueNums, meta.WriteQueueNums) {
		reply.Code(c, req, codec.InvalidParameter, "queueId "+strconv.Itoa(int(h.QueueID))+" out of range for topic "+h.Topic)
		return
	}
	if h.CommitOffset < 0 {
		reply.Code(c, req, codec.InvalidParameter, "commitOffset must not be negative")
		return
	}
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64,
		Apply: func(tx *popstore.Txn) error {
			return tx.SetConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
		},
		Done: func(err error) {
			if err == nil {
				b.Polls.WakeSome(h.Topic, h.QueueID, h.ConsumerGroup, 1)
			}
			reply.Done(c, req, err)
		},
	}
	if err := b.Writer.Submit(op); err != nil {
		reply.SubmitError(c, req, err)
	}
}
