package handler

// GET_CONSUMER_RUNNING_INFO (307), mqadmin consumerStatus: forwarded to
// the consumer (broker.Broker.ConsumerChannel finds it; the behaviour and
// the codes are listed in broker/client_call.go;
// AdminBrokerProcessor.getConsumerRunningInfo).
//
// Header: consumerGroup, clientId (required), jstackEnable (optional)
// (GetConsumerRunningInfoRequestHeader.java); a missing field →
// SYSTEM_ERROR (1) "the custom field <name> is null". The request goes to
// the client with the admin's fields and no body.
//
// Reply: the client's answer as it came: SUCCESS (0) with its
// ConsumerRunningInfo body, or its own refusal; CONSUME_MSG_TIMEOUT (207)
// when it does not answer in 10 s; SYSTEM_ERROR (1) when it is not online
// or its connection is gone.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetConsumerRunningInfo(c remoting.Conn, req *codec.Command) {
	group, client := req.ExtFields["consumerGroup"], req.ExtFields["clientId"]
	switch {
	case group == "":
		reply.Code(c, req, codec.SystemError, "the custom field <consumerGroup> is null")
		return
	case client == "":
		reply.Code(c, req, codec.SystemError, "the custom field <clientId> is null")
		return
	}
	ch, err := b.ConsumerChannel(group, client)
	if err != nil {
		reply.Err(c, req, err)
		return
	}
	b.callConsumer(c, req, codec.RequestGetConsumerRunningInfo, group, client, ch, forwardedFields(req, nil), nil)
}
