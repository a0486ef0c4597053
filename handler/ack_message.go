package handler

// ACK_MESSAGE (200051): the remoting adapter of broker.Broker.Ack, where
// the behaviour and the response codes are listed
// (broker/.../processor/AckMessageProcessor.java).
//
// Header (codec.AckMessageRequestHeader): consumerGroup, topic (the real
// topic: the pop retry topic for receipts with retry flag 1/2), queueId,
// offset, extraInfo (8-field receipt handle, or 9 from the proxy), bname
// (ignored). An undecodable header → SYSTEM_ERROR (1) naming the field.
//
// Reply: a bare response, SUCCESS once the delete is durable, else the
// error's code and remark.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleAckMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeAckMessageRequest(req)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Ack(broker.AckRequest{ConsumerGroup: h.ConsumerGroup, Topic: h.Topic, QueueID: h.QueueID, Offset: h.Offset, ExtraInfo: h.ExtraInfo},
		func(err error) { replyAck(c, req, err) })
}

// replyAck answers an ACK or BATCH_ACK: SUCCESS, or the error's code and
// remark. Any goroutine.
func replyAck(c remoting.Conn, req *codec.Command, err error) {
	if err != nil {
		reply.Err(c, req, err)
		return
	}
	reply.Code(c, req, codec.Success, "")
}
