package handler

// PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361, same header and answer):
// the remoting adapter of broker.Broker.Pull, where the behaviour and the
// response codes are listed (broker/.../processor/PullMessageProcessor.java).
//
// Header (codec.PullMessageRequestHeader): consumerGroup, topic, queueId,
// queueOffset, maxMsgNums, sysFlag (0x1 commit offset, 0x2 suspend, 0x4
// subscription in request), commitOffset, suspendTimeoutMillis,
// subscription, subVersion, expressionType, maxMsgBytes, bname. An
// undecodable header → SYSTEM_ERROR (1) naming the field.
//
// Reply: the result's code and remark (SUCCESS "FOUND", PULL_NOT_FOUND,
// PULL_RETRY_IMMEDIATELY, PULL_OFFSET_MOVED) with PullMessageResponseHeader
// (suggestWhichBrokerId, nextBeginOffset, minOffset, maxOffset) and the
// records as the body; a refusal is its bare code and remark, a
// NO_PERMISSION for a disabled group also carries forbiddenType=2. A
// parked PULL is marked long-polling for rocketmq_rpc_latency
// (remoting.MarkLongPolling).

import (
	"strconv"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handlePullMessage(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodePullMessageRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Pull(broker.PullRequest{PullMessageRequestHeader: h, ConnID: c.ID(), OnPark: func() { remoting.MarkLongPolling(c) }},
		func(r broker.PullResult, err error) { replyPull(c, req, r, err) })
}

// replyPull encodes a PULL answer. Any goroutine.
func replyPull(c remoting.Conn, req *codec.Command, r broker.PullResult, err error) {
	if err != nil {
		e := broker.ErrorOf(err)
		resp := codec.NewResponse(req, e.Code, e.Remark)
		if r.ForbiddenType != 0 {
			resp.SetExt("forbiddenType", strconv.Itoa(int(r.ForbiddenType)))
		}
		reply.Respond(c, req, resp)
		return
	}
	resp := codec.NewResponse(req, r.Code, r.Remark)
	codec.PullMessageResponseHeader{SuggestWhichBrokerID: r.SuggestWhichBrokerID, NextBeginOffset: r.NextBeginOffset,
		MinOffset: r.MinOffset, MaxOffset: r.MaxOffset}.Encode(resp)
	resp.Body = r.Body
	reply.Respond(c, req, resp)
}
