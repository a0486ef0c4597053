package handler

// UPDATE_CONSUMER_OFFSET (15): the remoting adapter of
// broker.Broker.UpdateConsumerOffset, where the behaviour and the response
// codes are listed (ConsumerManageProcessor.java).
//
// Header: consumerGroup, topic, queueId, commitOffset (all required)
// (UpdateConsumerOffsetRequestHeader.java); a missing field →
// SYSTEM_ERROR (1) naming it. Java clients send it oneway every 5 s; the Go
// client without the oneway bit. Oneway requests are written all the same
// and get no reply. SUCCESS (0) is sent once the offset is fsynced.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleUpdateConsumerOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeUpdateConsumerOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.UpdateConsumerOffset(broker.UpdateConsumerOffsetRequest{UpdateConsumerOffsetRequestHeader: h}, func(err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		reply.Code(c, req, codec.Success, "")
	})
}
