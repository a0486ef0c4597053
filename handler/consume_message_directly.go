package handler

// CONSUME_MESSAGE_DIRECTLY (309), mqadmin queryMsgById / queryMsgByUniqueKey
// with -g and -d: the message is read (broker.Broker.PrepareDirectConsume,
// where the behaviour and the codes are listed, broker/client_call.go) and
// forwarded to the consumer, which runs its listener on it
// (AdminBrokerProcessor.consumeMessageDirectly).
//
// Header: consumerGroup (required), clientId, msgId (the offsetMsgId),
// topic (ConsumeMessageDirectlyResultRequestHeader.java); a missing
// consumerGroup → SYSTEM_ERROR (1) "the custom field <consumerGroup> is
// null". The request goes to the client with the admin's fields plus
// brokerName, topicSysFlag and groupSysFlag, and the stored message as
// body.
//
// Reply: the client's answer as it came (SUCCESS with its
// ConsumeMessageDirectlyResult body, or its refusal); CONSUME_MSG_TIMEOUT
// (207) when it does not answer in 10 s; SYSTEM_ERROR (1) for a bad
// msgId, a message not found, a client not online or gone; SYSTEM_BUSY (2)
// when the reader queue is full.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleConsumeMessageDirectly(c remoting.Conn, req *codec.Command) {
	r := broker.DirectConsumeRequest{ConsumerGroup: req.ExtFields["consumerGroup"], ClientID: req.ExtFields["clientId"],
		MsgID: req.ExtFields["msgId"], Topic: req.ExtFields["topic"]}
	if r.ConsumerGroup == "" {
		reply.Code(c, req, codec.SystemError, "the custom field <consumerGroup> is null")
		return
	}
	b.PrepareDirectConsume(r, func(t broker.DirectConsumeTarget, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		b.callConsumer(c, req, codec.RequestConsumeMessageDirectly, r.ConsumerGroup, r.ClientID, t.Channel,
			forwardedFields(req, t.Fields), t.Record)
	})
}
