package handler

// SET_MESSAGE_REQUEST_MODE (401): the remoting adapter of
// broker.Broker.SetMessageRequestMode, where the behaviour and the
// response codes are listed (QueryAssignmentProcessor.setMessageRequestMode).
//
// Header: none. Body: JSON SetMessageRequestModeRequestBody {topic,
// consumerGroup, mode: "POP"|"PULL", popShareQueueNum}; a body that is not
// valid JSON → SYSTEM_ERROR (1) "set message request mode: <cause>".
//
// Reply: the bare code and remark, once the mode is durable.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleSetMessageRequestMode(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeSetMessageRequestModeRequestBody(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "set message request mode: "+err.Error())
		return
	}
	b.SetMessageRequestMode(broker.MessageRequestModeRequest{Topic: body.Topic, ConsumerGroup: body.ConsumerGroup,
		Mode: body.Mode, PopShareQueueNum: body.PopShareQueueNum}, func(err error) { replyOutcome(c, req, err) })
}
