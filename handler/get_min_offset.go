package handler

// GET_MIN_OFFSET (31): the remoting adapter of broker.Broker.MinOffset
// (the smallest queueOffset still stored, from memory; an empty queue
// answers its max offset, an unknown one 0).
//
// Header: topic, queueId (required) (GetMinOffsetRequestHeader.java).
//
// Response codes: SUCCESS (0) with header offset; SYSTEM_ERROR (1) naming a
// missing or invalid header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetMinOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeGetMinOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	off, e := b.MinOffset(h.Topic, h.QueueID)
	if e != nil {
		reply.Err(c, req, e)
		return
	}
	replyOffset(c, req, off)
}
