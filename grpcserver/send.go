package grpcserver

import (
	"context"
	"fmt"
	"slices"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/broker"
)

// SendMessage (the proxy's SendMessageActivity). The request is validated
// whole first (SendInputs: the proxy's checks and codes; transactional
// messages UNSUPPORTED until popshim serves transactions); then each
// message's type is checked against the topic's message.type attribute
// when SettingsPolicy.ValidateMessageType is on (NORMAL when absent, MIXED
// takes every type; a mismatch is MESSAGE_PROPERTY_CONFLICT_WITH_TYPE), as
// the proxy's topic message-type check. Each message is then stored by the
// core's Send (broker.Broker.Send: auto-created topic, delivery timestamp
// → timer, one durable write per message), all at once:
//   - NORMAL and DELAY: a queue the core picks (the client's queue_id is
//     ignored, as by the proxy);
//   - FIFO (message_group set): the queue at hash(message group) mod the
//     topic's write queue count (Java's String.hashCode, as the proxy's
//     selectByMessageGroup), so one group always lands in one queue and
//     stays in send order.
//
// The answer has one SendResultEntry per message in request order
// (message_id = the client's, offset = queue offset, 0 for a delayed
// message until it is due) and the entries' common status, or
// MULTIPLE_RESULTS when they differ. An entry is OK only once its message
// is durable.
func (s *service) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
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
	if s.policy.ValidateMessageType {
		accept := acceptTypes(meta.Attributes)
		for _, in := range ins {
			if t := storedType(in); !slices.Contains(accept, t) {
				return &v2.SendMessageResponse{Status: NewStatus(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
					fmt.Sprintf("current message type %s is not the topic's message type %v", t, accept))}, nil
			}
		}
	}
	if !known {
		// A FIFO queue choice needs the queue count; the core's Send would
		// create the topic the same way.
		if m, err := s.core.Topics.GetOrCreate(topic); err == nil {
			meta, known = m, true
		}
	}
	results := awaitAll(ctx, len(ins), func(i int, done func(broker.SendResult, error)) {
		in := &ins[i]
		qid := int32(-1)
		if in.MessageGroup != "" && known && meta.WriteQueueNums > 0 {
			qid = javaStringHash(in.MessageGroup) % meta.WriteQueueNums
			if qid < 0 {
				qid += meta.WriteQueueNums // Guava's IntMath.mod
			}
		}
		h := &in.Header
		s.core.Send(broker.SendRequest{ProducerGroup: h.ProducerGroup, Topic: h.Topic, QueueID: qid,
			SysFlag: h.SysFlag, BornTimestamp: h.BornTimestamp, Flag: h.Flag, Properties: h.Properties,
			ClientVersion: clientVersionOrdinal, BornHost: in.BornHost, Body: in.Body}, done)
	})
	resp := &v2.SendMessageResponse{Entries: make([]*v2.SendResultEntry, len(ins))}
	for i, r := range results {
		e := &v2.SendResultEntry{MessageId: ins[i].MessageID}
		if r.err != nil {
			e.Status = statusOfCore(OpSend, r.err)
		} else {
			e.Status, e.Offset = StatusOK(), r.v.QueueOffset
		}
		resp.Entries[i] = e
	}
	resp.Status = commonStatus(resp.Entries)
	return resp, nil
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
// TopicMessageType.parseFromMessageProperty sees it: FIFO with a message
// group, DELAY with a delivery timestamp, else NORMAL (transactional
// messages are refused before).
func storedType(in SendInput) v2.MessageType {
	switch {
	case in.DeliverAtMillis > 0:
		return v2.MessageType_DELAY
	case in.MessageGroup != "":
		return v2.MessageType_FIFO
	}
	return v2.MessageType_NORMAL
}

// javaStringHash is java.lang.String.hashCode over the UTF-16 code units
// of s.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
