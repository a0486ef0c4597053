package handler

// GET_MAX_OFFSET (30): the remoting adapter of broker.Broker.MaxOffset
// (the queue's next queueOffset, from memory; 0 for an unknown queue).
//
// Header: topic, queueId (required), committed (optional, default true;
// every stored message is committed, so false changes nothing)
// (GetMaxOffsetRequestHeader.java).
//
// Response codes: SUCCESS (0) with header offset; SYSTEM_ERROR (1) naming a
// missing or invalid header field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetMaxOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeGetMaxOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	off, e := b.MaxOffset(h.Topic, h.QueueID)
	if e != nil {
		reply.Err(c, req, e)
		return
	}
	replyOffset(c, req, off)
}
