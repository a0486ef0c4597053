package handler

// QUERY_CONSUMER_OFFSET (14): the remoting adapter of
// broker.Broker.QueryConsumerOffset, where the behaviour is described
// (ConsumerManageProcessor.java).
//
// Header: consumerGroup, topic, queueId (required), setZeroIfNotFound
// (optional, default true) (QueryConsumerOffsetRequestHeader.java).
//
// Response codes: SUCCESS (0) with header offset; QUERY_NOT_FOUND (22);
// SYSTEM_ERROR (1) naming a missing or invalid header field; SYSTEM_BUSY
// (2) when the reader queue is full. Answered on the event loop, or on a
// reader goroutine when the core reads the queue's first message.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleQueryConsumerOffset(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeQueryConsumerOffsetRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.QueryConsumerOffset(broker.QueryConsumerOffsetRequest{QueryConsumerOffsetRequestHeader: h}, func(off int64, e *broker.Error) {
		if e != nil {
			reply.Err(c, req, e)
			return
		}
		replyOffset(c, req, off)
	})
}

// replyOffset answers SUCCESS with the {offset} header
// (codec.OffsetResponseHeader). Any goroutine.
func replyOffset(c remoting.Conn, req *codec.Command, off int64) {
	resp := codec.NewResponse(req, codec.Success, "")
	codec.OffsetResponseHeader{Offset: off}.Encode(resp)
	reply.Respond(c, req, resp)
}
