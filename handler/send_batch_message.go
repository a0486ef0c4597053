package handler

// SEND_BATCH_MESSAGE (320): the remoting adapter of broker.Broker.Send with
// SendRequest.Batch, where the behaviour and the response codes are listed
// (broker/.../processor/SendMessageProcessor.java, sendBatchMessage).
//
// Header: the V2 send header (letters a..n, batch m=true); its properties
// are the batch's own and are not stored. Body: concatenated inner entries
// (codec.AppendBatchEntry layout): flag, body and properties of each
// message. An undecodable header → SYSTEM_ERROR (1) naming the field.
//
// Reply: as SEND_MESSAGE; msgId is the comma-joined offsetMsgIds of the
// entries, queueOffset the first entry's.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleSendBatchMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeSendRequest(req)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Send(sendRequestOf(c, req, &h, true), func(r broker.SendResult, err error) { b.replySend(c, req, r, err) })
}
