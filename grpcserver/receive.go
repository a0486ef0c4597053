package grpcserver

import (
	"context"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// ReceiveMessage (the proxy's ReceiveMessageActivity and
// ReceiveMessageResponseStreamWriter): one POP of the core
// (broker.Broker.Pop) per call, written as a server stream.
//
// Request → POP: group, topic (of message_queue), queueId -1 (every queue
// of this broker, whatever queue the client names, as the proxy pops),
// maxMsgNums = batch_size (0: the Settings' receive_batch_size; above 32:
// 32), invisibleTime (ReceivePolicy.invisibleOf; auto_renew: the lease
// invisible time, 60 s, then renewed, see leases.go), pollTime
// (ReceivePolicy.pollTime: ends before the call's deadline), initMode MIN
// (a new group starts at the first message still stored, so "produce,
// then start a new consumer group" delivers everything, on every broker
// age; the proxy's MAX depends on whether the queue's first message is
// still in the Java broker's memory), TAG or SQL92 filter, order = the
// group's consumeMessageOrderly (FIFO) with the request's attempt_id, and
// a connection id of this stream: a client that cancels the call releases
// its parked POP at once.
//
// Stream: found ⇒ Status OK, one item per message (MessageOf; FIFO
// messages carry delivery_attempt from the POP's orderCountInfo), one
// delivery_timestamp item; nothing found or the poll ended ⇒ Status
// MESSAGE_NOT_FOUND "no new message" (what the proxy sends; Java returns
// an empty list, Go an error), delivery_timestamp; any refusal ⇒ its
// Status (statusOfCore with OpReceive: TOPIC_NOT_FOUND,
// CONSUMER_GROUP_NOT_FOUND, FORBIDDEN, TOO_MANY_REQUESTS "polling full",
// ILLEGAL_FILTER_EXPRESSION for a TAG or SQL92 expression that does not
// parse, …), delivery_timestamp.
// Validation codes: CLIENT_ID_REQUIRED, ILLEGAL_CONSUMER_GROUP,
// ILLEGAL_TOPIC, ILLEGAL_INVISIBLE_TIME. Errors never travel as gRPC
// errors (the Go client would report DEADLINE_EXCEEDED), except when the
// stream itself is gone.
//
// Nothing popped is lost: messages that cannot be written (the client
// went, a write failed, a record could not be converted) and messages a
// POP delivers after the call was abandoned are made visible again at
// once with a CHANGE to invisible time 0 (the proxy does the same with
// its NACK), through the writer, durably.
func (s *service) ReceiveMessage(req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	ctx := stream.Context()
	rw := &receiveWriter{stream: stream}
	id, st := requireClient(ctx)
	if st != nil {
		return rw.finish(st)
	}
	if st := s.authorize(ctx, req); st != nil {
		return rw.finish(st)
	}
	group := req.GetGroup().GetName()
	if err := validateGroup(group); err != nil {
		return rw.finish(NewStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error()))
	}
	topic := req.GetMessageQueue().GetTopic().GetName()
	if err := validateTopic(topic); err != nil {
		return rw.finish(NewStatus(v2.Code_ILLEGAL_TOPIC, err.Error()))
	}
	invisible, st := s.receive.invisibleOf(req, s.leases.pol.Invisible)
	if st != nil {
		return rw.finish(st)
	}
	settings, _ := s.clients.Settings(id)
	batch := req.GetBatchSize()
	if batch <= 0 {
		batch = s.policy.ReceiveBatchSize
	}
	batch = max(1, min(batch, broker.MaxPopBatch))
	poll := s.receive.pollTime(ctx, req, settings.GetRequestTimeout().AsDuration(), time.Now())
	orderly := false
	if g, ok := s.core.Groups.Get(group); ok {
		orderly = g.ConsumeMessageOrderly
	}
	expType, exp := filterOf(req.GetFilterExpression())
	pr := broker.PopRequest{PopMessageRequestHeader: codec.PopMessageRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: -1, MaxMsgNums: batch,
		InvisibleTime: invisible.Milliseconds(), PollTime: poll.Milliseconds(), BornTime: s.core.Now(),
		InitMode: codec.ConsumeInitModeMin, ExpType: expType, Exp: exp, Order: orderly,
		AttemptID: req.GetAttemptId(), BrokerName: s.core.Cfg.BrokerName,
	}, ConnID: newConnID(), Records: true}
	res, err, ok := s.pop(ctx, pr)
	if !ok {
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
		return rw.finish(StatusOf(OpReceive, codec.PollingTimeout, "")) // the server is stopping
	}
	if err != nil {
		return rw.finish(statusOfCore(OpReceive, err))
	}
	return s.deliver(rw, id, group, topic, req.GetAutoRenew(), res)
}

// pop runs the POP and waits for it, the call's end or the server's stop.
// ok is false when the call was abandoned first: the parked POP is
// released (ConnClosed of the stream's id) and whatever a POP already
// running delivers later is made visible again.
func (s *service) pop(ctx context.Context, pr broker.PopRequest) (popped, error, bool) {
	var (
		mu   sync.Mutex
		gone bool
	)
	ch := make(chan outcome[popped], 1)
	group, topic := pr.ConsumerGroup, pr.Topic
	s.core.Pop(pr, func(r broker.PopResult, err error) {
		mu.Lock()
		defer mu.Unlock() // the send too: pop must not give up between them
		if gone {
			if err == nil {
				s.releasePopped(group, topic, r.Records)
			}
			return
		}
		// Counted before the core gives the read's reply room back.
		p := popped{PopResult: r, held: poppedBytes(r.Records)}
		s.holdBytes(p.held)
		ch <- outcome[popped]{p, err}
	})
	select {
	case o := <-ch:
		return o.v, o.err, true
	case <-ctx.Done():
	case <-s.stopping:
	}
	mu.Lock()
	select {
	case o := <-ch: // answered meanwhile: deliver it (writes may still fail)
		mu.Unlock()
		return o.v, o.err, true
	default:
	}
	gone = true
	mu.Unlock()
	s.abandoned.Add(1)
	s.core.ConnClosed(pr.ConnID)
	return popped{}, nil, false
}

// popped is a POP's answer to a ReceiveMessage call and the bytes its
// callback counted as held for it (poppedBytes), which deliver takes over.
type popped struct {
	broker.PopResult
	held int64
}

// deliver converts and writes the messages of a successful POP. Messages
// not written are made visible again.
func (s *service) deliver(rw *receiveWriter, clientID, group, topic string, autoRenew bool, res popped) error {
	counts := orderCounts(res.OrderCountInfo)
	opt := DeliveryOptions{Now: nowOf(s.core), MaxInflatedBytes: s.receive.MaxInflatedBytes}
	msgs := make([]*v2.Message, 0, len(res.Records))
	for i := range res.Records {
		r := &res.Records[i]
		applyOrderCount(&r.Msg, counts)
		msgs = append(msgs, ReceivedMessageOf(&r.Msg, r.ExtraInfo, opt))
	}
	if len(msgs) == 0 {
		s.holdBytes(-res.held)
		return rw.finish(StatusOf(OpReceive, codec.PollingTimeout, ""))
	}
	if autoRenew {
		s.leases.track(clientID, group, topic, msgs)
	}
	hold := s.holdReplies(connOf(rw.stream.Context()), msgs, res.held)
	defer hold.end()
	if err := rw.send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: StatusOK()}}); err != nil {
		s.releaseMessages(clientID, group, topic, msgs)
		return err
	}
	for i, vm := range msgs {
		if err := rw.send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: vm}}); err != nil {
			s.releaseMessages(clientID, group, topic, msgs[i:])
			return err
		}
		hold.sent()
	}
	return rw.deliveryTimestamp()
}

// receiveWriter writes one ReceiveMessage stream.
type receiveWriter struct {
	stream v2.MessagingService_ReceiveMessageServer
}

func (w *receiveWriter) send(r *v2.ReceiveMessageResponse) error { return w.stream.Send(r) }

func (w *receiveWriter) deliveryTimestamp() error {
	return w.stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_DeliveryTimestamp{
		DeliveryTimestamp: timestamppb.Now()}})
}

// finish writes st and the delivery timestamp; the stream then ends. A
// write error is returned (the stream is gone).
func (w *receiveWriter) finish(st *v2.Status) error {
	if err := w.send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}}); err != nil {
		return err
	}
	return w.deliveryTimestamp()
}

// orderCounts parses an orderly POP's orderCountInfo; nil when empty or
// malformed (the counts only set delivery attempts).
func orderCounts(info string) map[codec.OrderCountKey]int32 {
	if info == "" {
		return nil
	}
	m, err := codec.ParseOrderCountInfo(info)
	if err != nil {
		return nil
	}
	return m
}

// applyOrderCount sets the reconsume times of an orderly delivery from its
// POP's orderCountInfo, as the Java client does
// (MQClientAPIImpl.processPopResponse): the count of its offset, else of
// its queue, when positive.
func applyOrderCount(m *codec.MessageExt, counts map[codec.OrderCountKey]int32) {
	if counts == nil {
		return
	}
	var flag codec.RetryFlag
	if ck, ok := m.Property(codec.PropertyPopCK); ok {
		if ei, err := codec.ParseExtraInfo(ck); err == nil {
			flag = ei.RetryFlag
		}
	}
	c, ok := counts[codec.OrderCountKey{Flag: flag, QueueID: m.QueueID, QueueOffset: m.QueueOffset, HasOffset: true}]
	if !ok {
		c, ok = counts[codec.OrderCountKey{Flag: flag, QueueID: m.QueueID}]
	}
	if ok && c > 0 {
		m.ReconsumeTimes = c
	}
}
