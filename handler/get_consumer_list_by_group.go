package handler

// GET_CONSUMER_LIST_BY_GROUP (38): the remoting adapter of
// broker.Broker.ConsumerList, where the behaviour and the response codes
// are listed (ConsumerManageProcessor.getConsumerListByGroup).
//
// Header: consumerGroup (required) (GetConsumerListByGroupRequestHeader.java);
// an undecodable header → SYSTEM_ERROR (1) naming the field.
//
// Reply: SUCCESS (0) with the body {"consumerIdList":[...]}.

import (
	"github.com/popshim/popshim/broker"
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
	b.ConsumerList(broker.ConsumerListRequest{ConsumerGroup: h.ConsumerGroup}, func(ids []string, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.EncodeConsumerListBody(ids)
		reply.Respond(c, req, resp)
	})
}
