package handler

// INVOKE_BROKER_TO_RESET_OFFSET (222): the remoting adapter of
// broker.Broker.ResetOffset, where the behaviour, the response codes and
// the differences from Java are listed
// (AdminBrokerProcessor.resetOffsetInner).
//
// Header: group, topic, timestamp (ms), isForce (required); queueId
// (optional, -1 = every queue); offset (optional, -1 = none)
// (ResetOffsetRequestHeader.java). A missing or invalid field →
// SYSTEM_ERROR (1) naming it.
//
// Reply: SUCCESS (0) after the fsync, body ResetOffsetBody
// {"offsetTable": {MessageQueue: offset}} with fastjson2 object keys
// (codec.AppendResetOffsetBody); else the error's code and remark.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleInvokeBrokerToResetOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeResetOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	r := broker.ResetOffsetRequest{ResetOffsetRequestHeader: h}
	if a := c.RemoteAddr(); a != nil {
		r.Requester = a.String()
	}
	b.ResetOffset(r, func(res broker.ResetOffsetResult, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.AppendResetOffsetBody(nil, res.Offsets)
		reply.Respond(c, req, resp)
	})
}
