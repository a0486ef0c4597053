package handler

// UNREGISTER_CLIENT (35): the remoting adapter of
// broker.Broker.UnregisterClient, where the behaviour and the response
// codes are listed (ClientManageProcessor.unregisterClient).
//
// Header: clientID (required), producerGroup (optional), consumerGroup
// (optional) (UnregisterClientRequestHeader.java); an undecodable header →
// SYSTEM_ERROR (1) naming the field.
//
// Reply: SUCCESS (0) with no header fields.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUnregisterClient(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeUnregisterClientRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.UnregisterClient(broker.UnregisterClientRequest{ClientID: h.ClientID, ProducerGroup: h.ProducerGroup, ConsumerGroup: h.ConsumerGroup},
		func(err error) { replyOutcome(c, req, err) })
}
