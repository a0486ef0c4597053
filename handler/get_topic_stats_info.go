package handler

// GET_TOPIC_STATS_INFO (202).
//
// Header: topic (required) (GetTopicStatsInfoRequestHeader.java).
//
// Behaviour: for each queue 0..max(readQueueNums, writeQueueNums)-1 of the
// topic, its min and max offsets (max is one past the last message) and the
// store time in ms of the last message (0 for an empty queue), as
// AdminBrokerProcessor.getTopicStatsInfo answers; mqadmin topicStatus prints
// them. The body is a TopicStatsTable with the MessageQueue-object keys
// fastjson2 writes (codec.AppendTopicStatsTable). topicPutTps is 0: popshim
// keeps no per-topic put rate. Offsets come from memory; the last store
// times need a store read, so the answer is built on the reader pool.
//
// Response codes: SUCCESS (0); TOPIC_NOT_EXIST (17) "topic[T] not exist";
// SYSTEM_BUSY (2) when the reader queue is full; SYSTEM_ERROR (1) for a
// store error or a missing header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetTopicStatsInfo(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeTopicHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	tc, ok := b.Topics.Get(h.Topic)
	if !ok {
		reply.Code(c, req, codec.TopicNotExist, "topic["+h.Topic+"] not exist")
		return
	}
	queues := max(tc.ReadQueueNums, tc.WriteQueueNums)
	job := func() {
		rows := make([]codec.TopicOffset, 0, queues)
		for q := int32(0); q < queues; q++ {
			r := codec.TopicOffset{
				Queue:     codec.MessageQueue{Topic: h.Topic, BrokerName: b.Cfg.BrokerName, QueueID: q},
				MinOffset: max(b.Store.MinOffset(h.Topic, q), 0),
				MaxOffset: max(b.Store.MaxOffset(h.Topic, q), 0),
			}
			if r.MaxOffset > 0 {
				ts, err := b.Store.StoreTimeAt(h.Topic, q, r.MaxOffset-1)
				if err != nil {
					reply.Code(c, req, codec.SystemError, "topic stats: "+err.Error())
					return
				}
				r.LastUpdateTimestamp = ts
			}
			rows = append(rows, r)
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.AppendTopicStatsTable(nil, rows, 0)
		reply.Respond(c, req, resp)
	}
	if !b.submitLargeRead(c, req, job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}
