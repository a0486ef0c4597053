package handler

// GET_EARLIEST_MSG_STORETIME (32): the remoting adapter of
// broker.Broker.EarliestMsgStoreTime (the STORETIMESTAMP of the queue's
// first stored message, read on the reader pool; -1 when the queue is
// empty or unknown).
//
// Header: topic, queueId (required) (GetEarliestMsgStoretimeRequestHeader.java).
//
// Response codes: SUCCESS (0) with header timestamp; SYSTEM_BUSY (2) when
// the reader queue is full; SYSTEM_ERROR (1) for a store error or a missing
// or invalid header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetEarliestMsgStoretime(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeQueueHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.EarliestMsgStoreTime(h.Topic, h.QueueID, func(ts int64, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		resp := codec.NewResponse(req, codec.Success, "")
		codec.EarliestMsgStoretimeResponseHeader{Timestamp: ts}.Encode(resp)
		reply.Respond(c, req, resp)
	})
}
