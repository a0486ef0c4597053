package handler

// SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325): the remoting
// adapter of broker.Broker.Reply, where the behaviour and the response
// codes are listed (broker/reply.go; ReplyMessageProcessor.java).
//
// Header: codec.SendMessageRequestHeader, long names for 324, letters
// a..n for 325 (SendMessageRequestHeaderV2.java); the header's version is
// the client version. Body: the reply body as sent. The born host is the
// connection's peer. An undecodable header → SYSTEM_ERROR (1) naming the
// field.
//
// Reply: SUCCESS (0) with SendMessageResponseHeader (msgId: the stored
// reply's offsetMsgId or "0", queueId, queueOffset, MSG_REGION,
// TRACE_ON), or the error's code and remark. A oneway request gets no
// reply. The push to the requester goes through the broker listener
// (reply_push.go).

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleSendReplyMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeSendRequest(req)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	r := broker.ReplyRequest{SendRequest: sendRequestOf(c, req, &h, false),
		DefaultTopic: h.DefaultTopic, DefaultTopicQueueNums: h.DefaultTopicQueueNums, UnitMode: h.UnitMode}
	b.Reply(r, func(res broker.ReplyResult, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		resp := codec.NewResponse(req, codec.Success, "")
		codec.SendMessageResponseHeader{MsgID: res.OffsetMsgID, QueueID: res.QueueID, QueueOffset: res.QueueOffset,
			MsgRegion: b.Settings.RegionID, TraceOn: b.Settings.TraceOn}.EncodeJSON(resp)
		reply.Respond(c, req, resp)
	})
}
