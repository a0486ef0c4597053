package handler

// GET_EARLIEST_MSG_STORETIME (32).
//
// Header: topic, queueId (required) (GetEarliestMsgStoretimeRequestHeader.java).
//
// Behaviour: reads the first stored message of the queue on the reader pool
// and answers its STORETIMESTAMP (ms); -1 when the queue is empty or
// unknown, as the Java store answers.
//
// Response codes: SUCCESS (0) with header timestamp; SYSTEM_BUSY (2) when
// the reader queue is full; SYSTEM_ERROR (1) for a store error or a missing
// or invalid header field.

import (
	"errors"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetEarliestMsgStoretime(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeQueueHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	job := func() {
		ts := int64(-1)
		minOff, maxOff := b.Store.MinOffset(h.Topic, h.QueueID), b.Store.MaxOffset(h.Topic, h.QueueID)
		if minOff < maxOff {
			rec, err := b.Store.ReadMessage(h.Topic, h.QueueID, minOff)
			switch {
			case err == nil:
				if t, ok := popstore.StoreTimestamp(rec); ok {
					ts = t
				}
			case !errors.Is(err, popstore.ErrNotFound):
				reply.Code(c, req, codec.SystemError, "read earliest message: "+err.Error())
				return
			}
		}
		resp := codec.NewResponse(req, codec.Success, "")
		codec.EarliestMsgStoretimeResponseHeader{Timestamp: ts}.Encode(resp)
		reply.Respond(c, req, resp)
	}
	if !b.SubmitRead(job) {
		reply.Code(c, req, codec.SystemBusy, reply.BusyRemark)
	}
}
