package handler

// GET_MAX_OFFSET (30).
//
// Header: topic, queueId (required), committed (optional, default true)
// (GetMaxOffsetRequestHeader.java).
//
// Behaviour: answers the queue's max offset, the queueOffset the next
// message will get (one past the last durable message), from memory. An
// unknown queue answers 0. Every stored message is committed, so
// committed=false changes nothing.
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
	resp := codec.NewResponse(req, codec.Success, "")
	codec.OffsetResponseHeader{Offset: b.Store.MaxOffset(h.Topic, h.QueueID)}.Encode(resp)
	reply.Respond(c, req, resp)
}
