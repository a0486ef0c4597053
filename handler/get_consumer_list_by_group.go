package handler

// GET_CONSUMER_LIST_BY_GROUP (38).
//
// Header: consumerGroup (required) (GetConsumerListByGroupRequestHeader.java).
//
// Behaviour: answers the clientIDs of the group's live members (heartbeat
// within 120 s), sorted, as {"consumerIdList":[...]}. Push consumers with
// client-side rebalance (the Go client, Java with clientRebalance=true)
// allocate queues from it.
//
// Response codes: SUCCESS (0) with the body; SYSTEM_ERROR (1) "no consumer
// for this group, <group>" when the group has no live member (as
// ConsumerManageProcessor answers); SYSTEM_ERROR (1) naming a missing field.

import (
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleGetConsumerListByGroup(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeGetConsumerListByGroupRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	ids := b.Clients.ConsumerIDs(h.ConsumerGroup)
	if len(ids) == 0 {
		reply.Code(c, req, codec.SystemError, "no consumer for this group, "+h.ConsumerGroup)
		return
	}
	resp := codec.NewResponse(req, codec.Success, "")
	resp.Body = codec.EncodeConsumerListBody(ids)
	reply.Respond(c, req, resp)
}
