package handler

// POP_MESSAGE (200050): the remoting adapter of broker.Broker.Pop, where the
// behaviour and the response codes are listed
// (broker/.../processor/PopMessageProcessor.java).
//
// Header (codec.PopMessageRequestHeader): consumerGroup, topic, queueId,
// maxMsgNums, invisibleTime, pollTime, bornTime, initMode, expType/exp,
// order, attemptId, bname. An undecodable header → SYSTEM_ERROR (1) naming
// the field.
//
// Reply: PopMessageResponseHeader (popTime, invisibleTime, reviveQid,
// restNum, startOffsetInfo, msgOffsetInfo, orderCountInfo; written for
// every code, empty offset strings when nothing was found, as a Java
// broker writes them) and the stored records as the body. A parked POP is
// marked long-polling for rocketmq_rpc_latency (remoting.MarkLongPolling).

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handlePopMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodePopMessageRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Pop(broker.PopRequest{PopMessageRequestHeader: h, ConnID: c.ID(), OnPark: func() { remoting.MarkLongPolling(c) }},
		func(r broker.PopResult, err error) { replyPop(c, req, r, err) })
}

// replyPop encodes a POP answer: SUCCESS "FOUND" with the records, or the
// error's code and remark, always with the POP response header. Any
// goroutine.
func replyPop(c remoting.Conn, req *codec.Command, r broker.PopResult, err error) {
	code, remark := codec.Success, "FOUND"
	rh := codec.PopMessageResponseHeader{PopTime: r.PopTime, InvisibleTime: r.InvisibleTime, ReviveQid: r.ReviveQid}
	if err != nil {
		e := broker.ErrorOf(err)
		code, remark = e.Code, e.Remark
		rh.EmptyInfo = true
	} else {
		rh.RestNum, rh.StartOffsetInfo, rh.MsgOffsetInfo, rh.OrderCountInfo = r.RestNum, r.StartOffsetInfo, r.MsgOffsetInfo, r.OrderCountInfo
	}
	resp := codec.NewResponse(req, code, remark)
	rh.Encode(resp)
	resp.Body = r.Body
	reply.Respond(c, req, resp)
}
