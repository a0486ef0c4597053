package handler

// CHANGE_MESSAGE_INVISIBLETIME (200053): the remoting adapter of
// broker.Broker.ChangeInvisible, where the behaviour and the response codes
// are listed (broker/.../processor/ChangeInvisibleTimeProcessor.java).
//
// Header (codec.ChangeInvisibleTimeRequestHeader): consumerGroup, topic
// (real topic, as for ACK), queueId, offset, extraInfo, invisibleTime (ms,
// counted from now), bname (ignored). An undecodable header → SYSTEM_ERROR
// (1) naming the field.
//
// Reply: on SUCCESS ChangeInvisibleTimeResponseHeader (popTime,
// invisibleTime, reviveQid of the new handle) plus ext field extraInfo
// holding the new handle as the client would build it; otherwise a bare
// response with the error's code and remark.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleChangeInvisibleTime(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeChangeInvisibleTimeRequest(req)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.ChangeInvisible(broker.ChangeRequest{ConsumerGroup: h.ConsumerGroup, Topic: h.Topic, QueueID: h.QueueID, Offset: h.Offset,
		ExtraInfo: h.ExtraInfo, InvisibleTime: h.InvisibleTime},
		func(r broker.ChangeResult, err error) { replyChange(c, req, r, err) })
}

// replyChange answers a CHANGE: SUCCESS with the new handle's header
// fields and ext field extraInfo, or the error's code and remark. Any
// goroutine.
func replyChange(c remoting.Conn, req *codec.Command, r broker.ChangeResult, err error) {
	if err != nil {
		reply.Err(c, req, err)
		return
	}
	resp := codec.NewResponse(req, codec.Success, "")
	codec.ChangeInvisibleTimeResponseHeader{PopTime: r.PopTime, InvisibleTime: r.InvisibleTime, ReviveQid: r.ReviveQid}.Encode(resp)
	resp.SetExt("extraInfo", r.ExtraInfo)
	reply.Respond(c, req, resp)
}
