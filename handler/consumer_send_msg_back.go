package handler

// CONSUMER_SEND_MSG_BACK (36): the remoting adapter of
// broker.Broker.SendBack, where the behaviour and the response codes are
// listed (broker/.../processor/AbstractSendMessageProcessor.java,
// consumerSendMsgBack).
//
// Header (codec.ConsumerSendMsgBackRequestHeader): offset (the commit-log
// physical offset of the message), group, delayLevel, originMsgId,
// originTopic, unitMode, maxReconsumeTimes, bname; the header's version is
// the client version. An undecodable header → SYSTEM_ERROR (1) naming the
// field.
//
// Reply: a bare SUCCESS (0) once the copy is durable, otherwise the
// error's code and remark.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleConsumerSendMsgBack(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeConsumerSendMsgBackRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.SendBack(broker.SendBackRequest{ConsumerSendMsgBackRequestHeader: h, ClientVersion: req.Version}, func(err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		reply.Code(c, req, codec.Success, "")
	})
}
