package grpcserver

import (
	"context"
	"fmt"
	"slices"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"

	"github.com/popshim/popshim/broker"
)

// SendMessage (the proxy's SendMessageActivity). The request is validated
// whole first (SendInputs: the proxy's checks and codes); then each
// message's type is checked against the topic's message.type attribute
// when SettingsPolicy.ValidateMessageType is on (NORMAL when absent, MIXED
// takes every type; a mismatch is MESSAGE_PROPERTY_CONFLICT_WITH_TYPE), as
// the proxy's topic message-type check. An unknown topic is auto-created
// first when allowed (TopicTable.GetOrCreateTyped), with the first
// message's type as its message.type (none for NORMAL), since its route
// was answered accepting every type (route.go). Each message is then
// stored by the core's Send (broker.Broker.Send: delivery timestamp →
// timer, one durable write per message), all at once:
//   - NORMAL and DELAY: a queue the core picks (the client's queue_id is
//     ignored, as by the proxy);
//   - FIFO (message_group set): the queue the proxy picks for the group
//     (fifoQueueID: Guava's consistent hash of the group's String.hashCode
//     over the topic's write queue count), so one group always lands in one
//     queue and stays in send order, with or without a proxy in front. The
//     proxy does so only for a request of one message and sends a batch to
//     a round-robin queue; popshim places a batch's messages by their
//     groups too;
//   - TRANSACTION: a half message (broker/transaction.go), its producer
//     group (header and PGROUP) the topic name, as the proxy's; it stays
//     invisible until EndTransaction or a check's answer commits it.
//
// The answer has one SendResultEntry per message in request order and the
// entries' common status, or MULTIPLE_RESULTS when they differ. An entry
// is OK only once its message is durable. Entry fields: message_id = the
// client's; offset = queue offset (0 for a delayed message until it is
// due; a half's sequence number for a transactional one); transaction_id =
// for a half its broker.TransactionHandle (commit-log offset and sequence
// number, what EndTransaction needs, so the endpoint keeps no table of
// transactions and the id outlives a restart), else the UNIQ_KEY as the
// proxy passes on the broker's; recall_handle = the handle RecallMessage
// takes, for a message stored as a timer entry (broker/recall.go).
//
// Before anything else the request's decoded size (proto.Size) must fit
// the endpoint's budget (Config.MaxSendInflightBytes), held until the
// call returns; else TOO_MANY_REQUESTS at once.
func (s *service) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	size := int64(proto.Size(req))
	if !s.sendHeld.acquire(size) {
		return &v2.SendMessageResponse{Status: NewStatus(v2.Code_TOO_MANY_REQUESTS,
			fmt.Sprintf("too many send bytes in flight on the gRPC port (bound %d bytes), retry later", s.sendHeld.limit))}, nil
	}
	defer s.sendHeld.release(size)
	if _, st := requireClient(ctx); st != nil {
		return &v2.SendMessageResponse{Status: st}, nil
	}
	if st := s.authorize(ctx, req); st != nil {
		return &v2.SendMessageResponse{Status: st}, nil
	}
	ins, st := SendInputs(req, peerOf(ctx), nowOf(s.core), s.send)
	if st != nil {
		return &v2.SendMessageResponse{Status: st}, nil
	}
	topic := req.GetMessages()[0].GetTopic().GetName()
	meta, known := s.core.Topics.Get(topic)
	if !known {
		// Auto-creation: the first message fixes the topic's type, which
		// the route answered before accepted whatever it was; a FIFO
		// queue choice needs the queue count.
		if m, err := s.core.Topics.GetOrCreateTyped(topic, storedType(ins[0]).String()); err == nil {
			meta, known = m, true
		}
	}
	if s.policy.ValidateMessageType {
		accept := acceptTypes(meta.Attributes)
		for _, in := range ins {
			if t := storedType(in); !slices.Contains(accept, t) {
				return &v2.SendMessageResponse{Status: NewStatus(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
					fmt.Sprintf("current message type %s is not the topic's message type %v", t, accept))}, nil
			}
		}
	}
	results := awaitAll(ctx, len(ins), func(i int, done func(broker.SendResult, error)) {
		in := &ins[i]
		qid := int32(-1)
		if in.MessageGroup != "" && known && meta.WriteQueueNums > 0 {
			qid = fifoQueueID(in.MessageGroup, meta.WriteQueueNums)
		}
		h := &in.Header
		s.core.Send(broker.SendRequest{ProducerGroup: h.ProducerGroup, Topic: h.Topic, QueueID: qid,
			SysFlag: h.SysFlag, BornTimestamp: h.BornTimestamp, Flag: h.Flag, Properties: h.Properties,
			ClientVersion: clientVersionOrdinal, BornHost: in.BornHost, Body: in.Body}, done)
	})
	resp := &v2.SendMessageResponse{Entries: make([]*v2.SendResultEntry, len(ins))}
	for i, r := range results {
		resp.Entries[i] = sendEntry(&ins[i], r.v, r.err)
	}
	resp.Status = commonStatus(resp.Entries)
	return resp, nil
}

// sendEntry is the SendResultEntry of one message: in converted, r and
// err its SEND's outcome.
func sendEntry(in *SendInput, r broker.SendResult, err error) *v2.SendResultEntry {
	e := &v2.SendResultEntry{MessageId: in.MessageID}
	if err != nil {
		e.Status = statusOfCore(OpSend, err)
		return e
	}
	e.Status, e.Offset, e.TransactionId, e.RecallHandle = StatusOK(), r.QueueOffset, r.TransactionID, r.RecallHandle
	if in.Type == v2.MessageType_TRANSACTION {
		h, herr := broker.HalfHandle(r)
		if herr != nil {
			// Stored, but not as a half (a core fault): the client cannot end
			// it; the check still reaches it.
			e.Status = NewStatus(v2.Code_INTERNAL_SERVER_ERROR, msgInternalPrefix+"no transaction handle: "+herr.Error())
			return e
		}
		e.TransactionId = h.String()
	}
	return e
}

// commonStatus is the top-level Status of per-entry results: the entries'
// status when they all share one code, else MULTIPLE_RESULTS (the proxy's
// rule for SendMessage and AckMessage).
func commonStatus[E interface{ GetStatus() *v2.Status }](entries []E) *v2.Status {
	if len(entries) == 0 {
		return StatusOK()
	}
	first := entries[0].GetStatus()
	for _, e := range entries[1:] {
		if e.GetStatus().GetCode() != first.GetCode() {
			return NewStatus(v2.Code_MULTIPLE_RESULTS, "the entries have different results")
		}
	}
	return first
}

// nowOf is the core's clock as a time.Time.
func nowOf(b *broker.Broker) time.Time { return time.UnixMilli(b.Now()) }

// storedType is the message type of a converted message as the proxy's
// TopicMessageType.parseFromMessageProperty sees it: TRANSACTION for a
// half (TRAN_MSG), else DELAY with a delivery timestamp, else FIFO with a
// message group, else NORMAL.
func storedType(in SendInput) v2.MessageType {
	switch {
	case in.Type == v2.MessageType_TRANSACTION:
		return v2.MessageType_TRANSACTION
	case in.DeliverAtMillis > 0:
		return v2.MessageType_DELAY
	case in.MessageGroup != "":
		return v2.MessageType_FIFO
	}
	return v2.MessageType_NORMAL
}
