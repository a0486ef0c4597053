package grpcserver

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// ForwardMessageToDeadLetterQueue (the proxy's
// ForwardMessageToDLQActivity): a push consumer gives up on a FIFO
// message after its local retries. As the proxy: a send-back of the
// message found by the commit-log offset in the handle's ninth field with
// delay level -1 and max reconsume times 0 (broker.Broker.SendBack: a copy
// straight to %DLQ%<group>, durable), then an ACK of the handle (the
// lease's newest one under auto-renew). Codes: OK once both are durable;
// INVALID_RECEIPT_HANDLE for a handle without a commit-log offset or one
// the core calls invalid; CONSUMER_GROUP_NOT_FOUND; the core's other
// refusals; a failed ACK after a stored copy is answered with the ACK's
// Status (the message may then come back once, and a second copy may
// reach the DLQ: at least once).
func (s *service) ForwardMessageToDeadLetterQueue(ctx context.Context, req *v2.ForwardMessageToDeadLetterQueueRequest) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
	answer := func(st *v2.Status) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: st}, nil
	}
	id, st := requireClient(ctx)
	if st != nil {
		return answer(st)
	}
	if st := s.authorize(ctx, req); st != nil {
		return answer(st)
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if st := checkGroupTopic(group, topic); st != nil {
		return answer(st)
	}
	ei, err := ParseReceiptHandle(req.GetReceiptHandle())
	if err != nil {
		return answer(NewStatus(v2.Code_INVALID_RECEIPT_HANDLE, err.Error()))
	}
	if !ei.HasCommitLogOffset || ei.CommitLogOffset < 0 {
		return answer(NewStatus(v2.Code_INVALID_RECEIPT_HANDLE, "the receipt handle carries no commit-log offset"))
	}
	_, err = await(ctx, func(done func(struct{}, error)) {
		s.core.SendBack(broker.SendBackRequest{ConsumerSendMsgBackRequestHeader: codec.ConsumerSendMsgBackRequestHeader{
			Offset: ei.CommitLogOffset, Group: group, DelayLevel: -1, OriginMsgID: req.GetMessageId(),
			OriginTopic: topic, MaxReconsumeTimes: 0, HasMaxReconsumeTimes: true, BrokerName: s.core.Cfg.BrokerName,
		}, ClientVersion: clientVersionOrdinal}, func(err error) {
			if err != nil {
				done(struct{}{}, err)
				return
			}
			s.ackOne(id, group, topic, req.GetReceiptHandle(), func(err error) { done(struct{}{}, err) })
		})
	})
	if err != nil {
		return answer(entryStatus(OpForwardDLQ, err))
	}
	return answer(StatusOK())
}
