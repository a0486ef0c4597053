package handler

// UNREGISTER_CLIENT (35).
//
// Header: clientID (required), producerGroup (optional), consumerGroup
// (optional) (UnregisterClientRequestHeader.java).
//
// Behaviour: removes the client from the named producer and/or consumer
// group in the ClientTable (Java clients send it on shutdown, once per
// group and once more for CLIENT_INNER_PRODUCER). Unknown clients and groups
// are not an error.
//
// Response codes: SUCCESS (0) with no header fields; SYSTEM_ERROR (1)
// naming a missing clientID.

import (
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
	b.Clients.Unregister(h.ClientID, h.ProducerGroup, h.ConsumerGroup)
	reply.Code(c, req, codec.Success, "")
}
