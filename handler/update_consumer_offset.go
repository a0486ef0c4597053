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
// Response codes: SUCCESS (0); TOPIC_NOT_EXIST (17) for an unknown topic;
// INVALID_PARAMETER (29) for a queueId outside the topic's queues or a
// negative commitOffset; SYSTEM_BUSY (2) when the lane is full;
// SYSTEM_ERROR (1) naming a missing field, or for a failed write.

import (
	"strconv"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUpdateConsumerOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeUpdateConsumerOffsetRequestHeader(req.ExtFields)
	if err != nil {
		respondHeaderError(c, req, err)
		return
	}
	meta, ok := b.Topics.Get(h.Topic)
	if !ok {
		respondCode(c, req, codec.TopicNotExist, "Topic "+h.Topic+" not exist!")
		return
	}
	if h.QueueID < 0 || h.QueueID >= max(meta.ReadQueueNums, meta.WriteQueueNums) {
		respondCode(c, req, codec.InvalidParameter, "queueId "+strconv.Itoa(int(h.QueueID))+" out of range for topic "+h.Topic)
		return
	}
	if h.CommitOffset < 0 {
		respondCode(c, req, codec.InvalidParameter, "commitOffset must not be negative")
		return
	}
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 64,
		Apply: func(tx *popstore.Txn) error {
			return tx.SetConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
		},
		Done: func(err error) { respondDone(c, req, err) },
	}
	if err := b.Writer.Submit(op); err != nil {
		respondSubmitError(c, req, err)
	}
}
