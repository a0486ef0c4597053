package grpcserver

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
)

// RecallMessage (the proxy's RecallMessageActivity, RocketMQ 5.5): cancel
// a delayed message that is not due yet with the recall_handle its
// SendResultEntry carried (a message with a delivery timestamp, stored as
// a timer entry). The call is the core's RECALL_MESSAGE
// (broker.Broker.Recall, gated by --recall-message-enable as on
// remoting); message_id is the recalled message's id once the recall is
// durable. As in Java, a well-formed handle whose message does not exist,
// or was recalled already, still succeeds.
//
// Codes: OK; CLIENT_ID_REQUIRED; ILLEGAL_TOPIC; FORBIDDEN when recall is
// off (NO_PERMISSION "recall failed, operation is forbidden");
// TOPIC_NOT_FOUND for an unknown topic; BAD_REQUEST for a handle the core
// refuses (ILLEGAL_OPERATION: "recall handle is invalid", "recall failed,
// topic not match", "recall failed, broker service not available",
// "recall failed, timestamp invalid" once the message is due);
// TOO_MANY_REQUESTS when the writer is busy or shutting down.
func (s *service) RecallMessage(ctx context.Context, req *v2.RecallMessageRequest) (*v2.RecallMessageResponse, error) {
	answer := func(st *v2.Status, id string) (*v2.RecallMessageResponse, error) {
		return &v2.RecallMessageResponse{Status: st, MessageId: id}, nil
	}
	if _, st := requireClient(ctx); st != nil {
		return answer(st, "")
	}
	if st := s.authorize(ctx, req); st != nil {
		return answer(st, "")
	}
	topic := req.GetTopic().GetName()
	if err := validateTopic(topic); err != nil {
		return answer(NewStatus(v2.Code_ILLEGAL_TOPIC, err.Error()), "")
	}
	r, err := await(ctx, func(done func(broker.RecallResult, error)) {
		s.core.Recall(broker.RecallRequest{ProducerGroup: topic, Topic: topic, RecallHandle: req.GetRecallHandle()}, done)
	})
	if err != nil {
		return answer(statusOfCore(OpRecall, err), "")
	}
	return answer(StatusOK(), r.MsgID)
}
