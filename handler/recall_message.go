package handler

// RECALL_MESSAGE (370), adapter of broker.Broker.Recall (behaviour and
// codes in broker/recall.go; RecallMessageProcessor.java).
//
// Header (codec.RecallMessageRequestHeader,
// RecallMessageRequestHeader.java): producerGroup, topic and recallHandle
// (both required), bname. An undecodable header → SYSTEM_ERROR (1) naming
// the field.
//
// Reply: SUCCESS (0) with RecallMessageResponseHeader's msgId (the
// recalled message's UNIQ_KEY), or the error's code and remark; every
// reply carries MSG_REGION, as Java's. A oneway request gets no reply.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleRecallMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeRecallMessageRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Recall(broker.RecallRequest{ProducerGroup: h.ProducerGroup, Topic: h.Topic, RecallHandle: h.RecallHandle},
		func(res broker.RecallResult, err error) {
			resp := codec.NewResponse(req, codec.Success, "")
			if e := broker.ErrorOf(err); e != nil {
				resp = codec.NewResponse(req, e.Code, e.Remark)
			} else {
				resp.SetExt("msgId", res.MsgID)
			}
			resp.SetExt(codec.PropertyMsgRegion, b.Settings.RegionID)
			reply.Respond(c, req, resp)
		})
}
