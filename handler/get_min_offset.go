package handler

// GET_MIN_OFFSET (31).
//
// Header: topic, queueId (required) (GetMinOffsetRequestHeader.java).
//
// Behaviour: answers the smallest queueOffset still stored (raised by
// retention), from memory; an empty queue answers its max offset, an
// unknown one 0.
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
	resp := codec.NewResponse(req, codec.Success, "")
	codec.OffsetResponseHeader{Offset: b.Store.MinOffset(h.Topic, h.QueueID)}.Encode(resp)
	reply.Respond(c, req, resp)
}
