package grpcserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// AckMessage and ChangeInvisibleDuration (the proxy's AckMessageActivity
// and ChangeInvisibleDurationActivity) on the core's Ack and
// ChangeInvisible. A v5 receipt handle is the remoting receipt plus the
// commit-log offset (receipt.go); the core takes it as it is, with the
// real topic from its retry flag (codec.ExtraInfo.RealTopic), queue id and
// queue offset from its fields 6 and 7. When the client holds the message
// under auto-renew, the handle the endpoint renewed last replaces the
// client's (leases.take) and the lease ends.
//
// AckMessage: each entry is acked on its own, all at once (the core's
// AckEach: the deletes of all entries in one writer op, each entry
// answered as its own ACK would be; ackHandles); one
// AckMessageResultEntry per entry in request order (message_id and the
// client's receipt_handle echoed, the entry's Status), top-level Status as
// SendMessage's. Entry codes: OK once the checkpoint's delete is durable
// (also for an ACK of a handle acked, revived or changed before whose
// invisible time has not passed: the core's ACK is blind and idempotent);
// INVALID_RECEIPT_HANDLE "receipt handle is expired" for a handle (the
// lease's newest, when leased) whose pop time + invisible time is not
// after now, as the proxy (the message comes back; until 2026-12-06
// popshim acked it); INVALID_RECEIPT_HANDLE for a handle that
// does not parse or that the core calls invalid (another broker's, fields
// that name no checkpoint); TOO_MANY_REQUESTS when the writer is full;
// INTERNAL_SERVER_ERROR "ack failed: status is abnormal (…)" for a failed
// write. Request codes: CLIENT_ID_REQUIRED, ILLEGAL_CONSUMER_GROUP,
// ILLEGAL_TOPIC, BAD_REQUEST (no entries).
//
// ChangeInvisibleDuration: invisible_duration must lie in [0, 12 h]
// (ReceivePolicy.MaxInvisible; else ILLEGAL_INVISIBLE_TIME); suspend
// marks the new checkpoint so its revive does not count a redelivery.
// OK carries the new handle. Every failure echoes the handle the change
// was attempted with, because both the Go and the Java client overwrite
// the message's handle with the reply's before they look at the Status
// (the proxy answers broker failures without one). An expired handle is
// INVALID_RECEIPT_HANDLE "receipt handle is expired", as for AckMessage; a
// handle the core finds stale (acked, revived, changed already) is
// INVALID_RECEIPT_HANDLE.

// errHandleExpired is the proxy's refusal of a handle whose invisible
// time has passed (HandleExpired), for AckMessage and
// ChangeInvisibleDuration: INVALID_RECEIPT_HANDLE "receipt handle is
// expired" (proxy/.../processor/AbstractProcessor.java,
// EXPIRED_HANDLE_PROXY_EXCEPTION).
var errHandleExpired = &statusError{NewStatus(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is expired")}

// statusError carries a Status decided by the endpoint (not the core)
// through an operation's completion.
type statusError struct{ st *v2.Status }

// Error returns the status's message.
func (e *statusError) Error() string { return e.st.GetMessage() }

// entryStatus is the Status of one completed entry.
func entryStatus(op Op, err error) *v2.Status {
	if se := (*statusError)(nil); errors.As(err, &se) {
		return se.st
	}
	return statusOfCore(op, err)
}

// checkGroupTopic validates the group and topic of an ack-like request.
func checkGroupTopic(group, topic string) *v2.Status {
	if err := validateGroup(group); err != nil {
		return NewStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error())
	}
	if err := validateTopic(topic); err != nil {
		return NewStatus(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	return nil
}

// AckMessage implements v2.MessagingServiceServer; see above.
func (s *service) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	id, st := requireClient(ctx)
	if st != nil {
		return &v2.AckMessageResponse{Status: st}, nil
	}
	if st := s.authorize(ctx, req); st != nil {
		return &v2.AckMessageResponse{Status: st}, nil
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if st := checkGroupTopic(group, topic); st != nil {
		return &v2.AckMessageResponse{Status: st}, nil
	}
	entries := req.GetEntries()
	if len(entries) == 0 {
		return &v2.AckMessageResponse{Status: NewStatus(v2.Code_BAD_REQUEST, "no entry to ack")}, nil
	}
	results := awaitEach(ctx, len(entries), func(done func(int, struct{}, error)) {
		s.ackHandles(id, group, topic, true, len(entries), func(i int) string { return entries[i].GetReceiptHandle() },
			func(i int, err error) { done(i, struct{}{}, err) })
	})
	resp := &v2.AckMessageResponse{Entries: make([]*v2.AckMessageResultEntry, len(entries))}
	each := make([]v2.AckMessageResultEntry, len(entries))
	var ok *v2.Status // one OK Status for every entry that has it
	for i, r := range results {
		e := &each[i]
		e.MessageId, e.ReceiptHandle = entries[i].GetMessageId(), entries[i].GetReceiptHandle()
		if r.err == nil {
			if ok == nil {
				ok = StatusOK()
			}
			e.Status = ok
		} else {
			e.Status = entryStatus(OpAck, r.err)
		}
		resp.Entries[i] = e
	}
	resp.Status = commonStatus(resp.Entries)
	return resp, nil
}

// ackHandles acks n receipt handles (handle(i) for i in 0..n-1), each the
// lease's newest handle when client id holds the message under
// auto-renew, with the core's AckEach: the deletes of all handles at hand
// go to the writer as one op; a handle whose lease is being renewed is
// acked on its own once the renewal completes. done(i, err) once per
// handle i, with the core's outcome or a statusError
// (INVALID_RECEIPT_HANDLE for one that does not parse, or with
// refuseExpired for one whose invisible time has passed: errHandleExpired).
func (s *service) ackHandles(id, group, topic string, refuseExpired bool, n int, handle func(i int) string, done func(int, error)) {
	reqs := make([]broker.AckRequest, 0, n)
	at := make([]int, 0, n)
	for i := range n {
		text := handle(i)
		ei, err := ParseReceiptHandle(text)
		if err != nil {
			done(i, &statusError{NewStatus(v2.Code_INVALID_RECEIPT_HANDLE, err.Error())})
			continue
		}
		h, hei, now := s.leases.takeOrWait(id, group, topic, ei, text, func(h string, hei codec.ExtraInfo) {
			if refuseExpired && HandleExpired(hei, s.core.Now()) {
				done(i, errHandleExpired)
				return
			}
			s.core.Ack(ackRequestOf(group, topic, h, hei), func(err error) { done(i, err) })
		})
		if !now {
			continue
		}
		if refuseExpired && HandleExpired(hei, s.core.Now()) {
			done(i, errHandleExpired)
			continue
		}
		reqs, at = append(reqs, ackRequestOf(group, topic, h, hei)), append(at, i)
	}
	if len(reqs) > 0 {
		s.core.AckEach(reqs, func(j int, err error) { done(at[j], err) })
	}
}

// ackOne is ackHandles of one handle, expired or not: the ACK that ends
// ForwardMessageToDeadLetterQueue (the proxy ignores that ACK's outcome;
// acking an expired handle still stops a redelivery the revive has not
// made yet, so the DLQ copy is the only one).
func (s *service) ackOne(id, group, topic, handle string, done func(error)) {
	s.ackHandles(id, group, topic, false, 1, func(int) string { return handle }, func(_ int, err error) { done(err) })
}

// ackRequestOf is the core's ACK of handle h (parsed: hei, passed on so
// the core does not parse h again) for group and the request's topic.
func ackRequestOf(group, topic, h string, hei codec.ExtraInfo) broker.AckRequest {
	return broker.AckRequest{ConsumerGroup: group, Topic: hei.RealTopic(topic, group),
		QueueID: hei.QueueID, Offset: hei.QueueOffset, ExtraInfo: h, Receipt: hei, HasReceipt: true}
}

// ChangeInvisibleDuration implements v2.MessagingServiceServer; see above.
func (s *service) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	handle := req.GetReceiptHandle()
	refuse := func(st *v2.Status) (*v2.ChangeInvisibleDurationResponse, error) {
		return &v2.ChangeInvisibleDurationResponse{Status: st, ReceiptHandle: handle}, nil
	}
	id, st := requireClient(ctx)
	if st != nil {
		return refuse(st)
	}
	if st := s.authorize(ctx, req); st != nil {
		return refuse(st)
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if st := checkGroupTopic(group, topic); st != nil {
		return refuse(st)
	}
	// A missing invisible_duration is 0 (the proxy validates its long
	// value, 0 when unset): the message turns visible at once.
	d := req.GetInvisibleDuration().AsDuration()
	if d < 0 || d > s.receive.MaxInvisible {
		return refuse(NewStatus(v2.Code_ILLEGAL_INVISIBLE_TIME,
			fmt.Sprintf("the invisible time %v is out of range [0, %v]", d, s.receive.MaxInvisible)))
	}
	ei, err := ParseReceiptHandle(handle)
	if err != nil {
		return refuse(NewStatus(v2.Code_INVALID_RECEIPT_HANDLE, err.Error()))
	}
	type changed struct {
		res  broker.ChangeResult
		used string
	}
	o, err := await(ctx, func(done func(changed, error)) {
		s.leases.take(id, group, topic, ei, handle, func(h string, hei codec.ExtraInfo) {
			if HandleExpired(hei, s.core.Now()) {
				done(changed{used: h}, errHandleExpired)
				return
			}
			s.core.ChangeInvisible(broker.ChangeRequest{ConsumerGroup: group, Topic: hei.RealTopic(topic, group),
				QueueID: hei.QueueID, Offset: hei.QueueOffset, ExtraInfo: h, InvisibleTime: d.Milliseconds(),
				Suspend: req.GetSuspend()}, func(r broker.ChangeResult, err error) { done(changed{r, h}, err) })
		})
	})
	if err != nil {
		if o.used != "" {
			handle = o.used
		}
		return refuse(entryStatus(OpChangeInvisible, err))
	}
	return &v2.ChangeInvisibleDurationResponse{Status: StatusOK(), ReceiptHandle: o.res.ExtraInfo}, nil
}

// changeTo changes the invisible time of handle (real topic, group) to d
// without a client: lease renewals, releases and the return of messages a
// receive could not deliver. done gets the core's outcome.
func (s *service) changeTo(group, topic string, ei codec.ExtraInfo, handle string, d time.Duration, done func(broker.ChangeResult, error)) {
	changeHandle(s.core, group, topic, ei, handle, d, done)
}

// changeHandle is changeTo for callers without a service (leases).
func changeHandle(core *broker.Broker, group, topic string, ei codec.ExtraInfo, handle string, d time.Duration, done func(broker.ChangeResult, error)) {
	core.ChangeInvisible(broker.ChangeRequest{ConsumerGroup: group, Topic: ei.RealTopic(topic, group),
		QueueID: ei.QueueID, Offset: ei.QueueOffset, ExtraInfo: handle, InvisibleTime: d.Milliseconds()}, done)
}

// releasePopped makes popped records (PopResult.Records) visible again
// (CHANGE to 0): the POP answered a call that was gone.
func (s *service) releasePopped(group, topic string, recs []broker.PoppedRecord) {
	for i := range recs {
		ei := recs[i].ExtraInfo
		s.release(group, topic, ei, ei.String())
	}
}

// releaseMessages makes converted messages that were not written visible
// again, ending their leases.
func (s *service) releaseMessages(clientID, group, topic string, msgs []*v2.Message) {
	for _, m := range msgs {
		h := m.GetSystemProperties().GetReceiptHandle()
		ei, err := ParseReceiptHandle(h)
		if err != nil {
			continue
		}
		s.leases.take(clientID, group, topic, ei, h, func(cur string, cei codec.ExtraInfo) { s.release(group, topic, cei, cur) })
	}
}

// release changes one handle's invisible time to 0; a failure is logged
// (the message then comes back when its invisible time ends).
func (s *service) release(group, topic string, ei codec.ExtraInfo, handle string) {
	s.changeTo(group, topic, ei, handle, 0, func(_ broker.ChangeResult, err error) {
		s.metrics.released(err == nil)
		if err != nil {
			s.log.Warn().Err(err).Str("group", group).Str("topic", topic).
				Msg("grpc receive: an undelivered message could not be released; it comes back after its invisible time")
		}
	})
}
