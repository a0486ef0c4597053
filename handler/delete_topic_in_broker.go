package handler

// DELETE_TOPIC_IN_BROKER (215): the remoting adapter of
// broker.Broker.DeleteTopic, where the behaviour and the response codes
// are listed (AdminBrokerProcessor.deleteTopic).
//
// Header: topic (required) (DeleteTopicRequestHeader.java); an
// undecodable header → SYSTEM_ERROR (1) naming the field.
//
// Reply: the bare code and remark, once the deletion is durable.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleDeleteTopicInBroker(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeTopicHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.DeleteTopic(broker.DeleteTopicRequest{Topic: h.Topic}, func(err error) { replyOutcome(c, req, err) })
}
