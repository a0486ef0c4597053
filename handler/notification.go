package handler

// NOTIFICATION (200054): the remoting adapter of broker.Broker.Notification,
// where the behaviour and the response codes are listed
// (broker/.../processor/NotificationProcessor.java).
//
// Header (codec.NotificationRequestHeader): consumerGroup, topic, queueId
// (-1 = any queue), pollTime (ms), bornTime (ms), order, attemptId, bname.
// An undecodable header → SYSTEM_ERROR (1) naming the field.
//
// Reply: SUCCESS with NotificationResponseHeader (hasMsg, pollingFull), or
// the error's code and remark. A parked request is marked long-polling for
// rocketmq_rpc_latency (remoting.MarkLongPolling).

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleNotification(c remoting.Conn, req *codec.Command) {
	h, err := codec.DecodeNotificationRequestHeader(req.ExtFields)
	if err != nil {
		reply.HeaderError(c, req, err)
		return
	}
	b.Notification(broker.NotificationRequest{NotificationRequestHeader: h, ConnID: c.ID(), OnPark: func() { remoting.MarkLongPolling(c) }},
		func(r broker.NotificationResult, err error) {
			if err != nil {
				reply.Err(c, req, err)
				return
			}
			resp := codec.NewResponse(req, codec.Success, "")
			codec.NotificationResponseHeader{HasMsg: r.HasMsg, PollingFull: r.PollingFull}.Encode(resp)
			reply.Respond(c, req, resp)
		})
}
