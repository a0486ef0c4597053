package handler

// QUERY_ASSIGNMENT (400): the remoting adapter of broker.Broker.Assignment,
// where the behaviour and the response codes are listed
// (QueryAssignmentProcessor.java). With --namesrv-addr the core reads the
// name servers' routes through namesrv.RouteCache (installed by NewBroker
// with SetRouteSource); a cache miss is answered from the fetch's
// goroutine, never on the event loop.
//
// Header: none. Body: JSON QueryAssignmentRequestBody {topic, consumerGroup,
// clientId, strategyName, messageModel}; a body that is not valid JSON →
// SYSTEM_ERROR (1) "query assignment: <cause>".
//
// Reply: SUCCESS (0) with QueryAssignmentResponseBody: one
// {messageQueue, mode} per assigned queue, [] for an empty assignment, and
// null ("keep the current assignment") for broker.AssignmentResult's
// KeepCurrent.

import (
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

func (b *Broker) handleQueryAssignment(c remoting.Conn, req *codec.Command) {
	body, err := codec.DecodeQueryAssignmentRequestBody(req.Body)
	if err != nil {
		reply.Code(c, req, codec.SystemError, "query assignment: "+err.Error())
		return
	}
	r := broker.AssignmentRequest{Topic: body.Topic, ConsumerGroup: body.ConsumerGroup, ClientID: body.ClientID,
		StrategyName: body.StrategyName, MessageModel: body.MessageModel}
	b.Assignment(r, func(res broker.AssignmentResult, err error) {
		if err != nil {
			reply.Err(c, req, err)
			return
		}
		var out codec.QueryAssignmentResponseBody
		if !res.KeepCurrent {
			out.MessageQueueAssignments = make([]codec.MessageQueueAssignment, 0, len(res.Queues))
			for _, mq := range res.Queues {
				out.MessageQueueAssignments = append(out.MessageQueueAssignments, codec.MessageQueueAssignment{Mode: res.Mode, MessageQueue: mq})
			}
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = codec.EncodeQueryAssignmentResponseBody(&out)
		reply.Respond(c, req, resp)
	})
}
