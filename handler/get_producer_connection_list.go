package handler

// GET_PRODUCER_CONNECTION_LIST (204).
//
// Header: producerGroup (required) (GetProducerConnectionListRequestHeader.java).
//
// Behaviour: the live producers of the group that announced themselves with
// HEART_BEAT, one Connection each (clientId, clientAddr "ip:port",
// language, version ordinal), as
// AdminBrokerProcessor.getProducerConnectionList answers; mqadmin
// producerConnection prints them. Memory only: answered on the event loop.
//
// Response codes: SUCCESS (0); SYSTEM_ERROR (1) "the producer group[G] not
// exist" when the group has no live producer, or naming a missing header
// field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetProducerConnectionList(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeProducerGroupHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	chs, ok := b.Clients.Producers(h.ProducerGroup)
	if !ok {
		reply.Code(c, req, codec.SystemError, "the producer group["+h.ProducerGroup+"] not exist")
		return
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeProducerConnection(connectionsOf(chs))
	reply.Respond(c, req, resp)
}
