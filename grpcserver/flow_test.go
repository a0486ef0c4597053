package grpcserver

import (
	"context"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// Send, receive with a tag filter, ack one, change one and let it come
// back with delivery attempt 2, leave one until its invisible time ends.
func TestSendReceiveAckChange(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("flow"), unique("cg")
	f.createTopic(topic, 2, "")
	sent := map[string]string{}
	for i, tag := range []string{"TagA", "TagB", "TagA", "TagA"} {
		m := message(topic, "body "+tag+string(rune('0'+i)), tag)
		r := f.send("p@1", m)
		e := r.GetEntries()[0]
		if e.GetMessageId() != m.GetSystemProperties().GetMessageId() || e.GetStatus().GetCode() != v2.Code_OK {
			t.Fatalf("entry %v", e)
		}
		sent[e.GetMessageId()] = string(m.GetBody())
	}
	req := simpleReceive(group, topic, 5*time.Second)
	req.FilterExpression.Expression = "TagA"
	got := f.receiveN("c@1", req, 3, 5)
	for _, m := range got {
		sp := m.GetSystemProperties()
		if sent[sp.GetMessageId()] != string(m.GetBody()) || sp.GetTag() != "TagA" || sp.GetDeliveryAttempt() != 1 ||
			m.GetTopic().GetName() != topic || m.GetUserProperties()["idx"] != "7" || len(sp.GetKeys()) != 2 ||
			sp.GetBodyDigest().GetChecksum() != md5Upper(m.GetBody()) {
			t.Errorf("message %v", m)
		}
	}
	acked, changed, left := got[0], got[1], got[2]
	if st := f.ack("c@1", group, topic, acked, handleOf(acked)); st.GetCode() != v2.Code_OK {
		t.Fatalf("ack: %v", st)
	}
	cr, err := f.c.ChangeInvisibleDuration(f.ctx("c@1"), &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group},
		Topic: &v2.Resource{Name: topic}, ReceiptHandle: handleOf(changed), InvisibleDuration: durationpb.New(0),
		MessageId: changed.GetSystemProperties().GetMessageId()})
	if err != nil || cr.GetStatus().GetCode() != v2.Code_OK || cr.GetReceiptHandle() == handleOf(changed) ||
		len(strings.Fields(cr.GetReceiptHandle())) != 9 {
		t.Fatalf("change: %v %v", cr, err)
	}
	// The changed one comes back at once (invisible 0), as a second delivery.
	back := f.receiveN("c@1", req, 1, 10)
	if back[0].GetSystemProperties().GetMessageId() != changed.GetSystemProperties().GetMessageId() ||
		back[0].GetSystemProperties().GetDeliveryAttempt() != 2 {
		t.Fatalf("changed message back: %v", back[0])
	}
	if st := f.ack("c@1", group, topic, back[0], handleOf(back[0])); st.GetCode() != v2.Code_OK {
		t.Fatalf("ack of the redelivery: %v", st)
	}
	// The change's old handle is stale now: INVALID_RECEIPT_HANDLE, the handle echoed.
	cr, _ = f.c.ChangeInvisibleDuration(f.ctx("c@1"), &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group},
		Topic: &v2.Resource{Name: topic}, ReceiptHandle: handleOf(changed), InvisibleDuration: durationpb.New(time.Minute)})
	if cr.GetStatus().GetCode() != v2.Code_INVALID_RECEIPT_HANDLE || cr.GetReceiptHandle() != handleOf(changed) {
		t.Errorf("stale change: %v", cr)
	}
	// The un-acked one comes back after its invisible time (the core clock jumps over it).
	f.core.Broker.AdvanceClock(11_000)
	back = f.receiveN("c@1", req, 1, 10)
	if back[0].GetSystemProperties().GetMessageId() != left.GetSystemProperties().GetMessageId() {
		t.Fatalf("left message back: %v", back[0])
	}
	f.ack("c@1", group, topic, back[0], handleOf(back[0]))
	// Nothing else: the TagB message was never for this filter, the rest is acked.
	f.core.Broker.AdvanceClock(11_000)
	if r := f.receive(f.ctx("c@1"), simpleReceive(group, topic, 0)); r.status.GetCode() != v2.Code_MESSAGE_NOT_FOUND ||
		len(r.msgs) != 0 || r.stamps != 1 || r.status.GetMessage() != "no new message" {
		t.Errorf("final receive: %+v", r)
	}
}

// A receive that finds nothing ends before the call's deadline, also
// when the deadline is shorter than the proxy's 5 s minimum poll.
func TestReceiveShortDeadline(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic := unique("short")
	f.createTopic(topic, 1, "")
	req := simpleReceive("cg_short", topic, 0)
	req.LongPollingTimeout = nil // the Go SimpleConsumer sends none
	ctx, cancel := context.WithTimeout(withClient(t.Context(), "c@1"), 2*time.Second)
	defer cancel()
	r := f.receive(ctx, req)
	if r.status.GetCode() != v2.Code_MESSAGE_NOT_FOUND || r.stamps != 1 {
		t.Fatalf("%+v", r)
	}
}

// Refusals of ReceiveMessage: every one a Status item, never a gRPC error.
func TestReceiveRefusals(t *testing.T) {
	f := newFixture(t, func(c *conf.Config) { c.AutoCreateSubscriptionGroup = false }, nil)
	topic := unique("refuse")
	f.createTopic(topic, 1, "")
	f.createOrderlyGroup("cg_known")
	cases := []struct {
		name string
		edit func(*v2.ReceiveMessageRequest)
		id   string
		want []v2.Code
	}{
		{"no client id", nil, "", []v2.Code{v2.Code_CLIENT_ID_REQUIRED}},
		{"bad group", func(r *v2.ReceiveMessageRequest) { r.Group.Name = "bad group" }, "c@1", []v2.Code{v2.Code_ILLEGAL_CONSUMER_GROUP}},
		{"unknown group", func(r *v2.ReceiveMessageRequest) { r.Group.Name = "cg_unknown" }, "c@1", []v2.Code{v2.Code_CONSUMER_GROUP_NOT_FOUND}},
		{"bad topic", func(r *v2.ReceiveMessageRequest) { r.MessageQueue.Topic.Name = "a b" }, "c@1", []v2.Code{v2.Code_ILLEGAL_TOPIC}},
		{"unknown topic", func(r *v2.ReceiveMessageRequest) { r.MessageQueue.Topic.Name = "nope" }, "c@1", []v2.Code{v2.Code_TOPIC_NOT_FOUND}},
		{"invisible too short", func(r *v2.ReceiveMessageRequest) { r.InvisibleDuration = durationpb.New(time.Second) }, "c@1",
			[]v2.Code{v2.Code_ILLEGAL_INVISIBLE_TIME}},
		{"invisible too long", func(r *v2.ReceiveMessageRequest) { r.InvisibleDuration = durationpb.New(13 * time.Hour) }, "c@1",
			[]v2.Code{v2.Code_ILLEGAL_INVISIBLE_TIME}},
		{"no invisible time", func(r *v2.ReceiveMessageRequest) { r.InvisibleDuration = nil }, "c@1", []v2.Code{v2.Code_ILLEGAL_INVISIBLE_TIME}},
		{"sql filter", func(r *v2.ReceiveMessageRequest) {
			r.FilterExpression = &v2.FilterExpression{Type: v2.FilterType_SQL, Expression: "a >"}
		}, "c@1", []v2.Code{v2.Code_UNSUPPORTED, v2.Code_ILLEGAL_FILTER_EXPRESSION}},
	}
	for _, tc := range cases {
		req := simpleReceive("cg_known", topic, 0)
		if tc.edit != nil {
			tc.edit(req)
		}
		r := f.receive(f.ctx(tc.id), req)
		ok := false
		for _, w := range tc.want {
			ok = ok || r.status.GetCode() == w
		}
		if !ok || r.stamps != 1 || len(r.msgs) != 0 {
			t.Errorf("%s: %+v, want %v", tc.name, r, tc.want)
		}
	}
}

// Refusals of SendMessage, each with its code; nothing is stored.
func TestSendRefusalsThroughCore(t *testing.T) {
	f := newFixture(t, func(c *conf.Config) { c.AutoCreateTopic = false }, nil)
	normal, fifo := unique("normal"), unique("fifo")
	f.createTopic(normal, 2, "")
	f.createTopic(fifo, 2, "FIFO")
	grouped := message(normal, "x", "T")
	grouped.SystemProperties.MessageGroup = ptr("g1")
	plain := message(fifo, "x", "T")
	delayed := message(normal, "x", "T")
	delayed.SystemProperties.DeliveryTimestamp = timestamppb.New(time.Now().Add(time.Hour))
	tx := message(normal, "x", "T")
	tx.SystemProperties.MessageType = v2.MessageType_TRANSACTION
	empty := message(normal, "", "T")
	// A __SHARDINGKEY user property makes a FIFO message, as the proxy
	// derives the type from the stored properties (it was stored as
	// NORMAL until 2026-12-07, found side by side with rocketmq-proxy).
	sharded := message(normal, "x", "T")
	sharded.UserProperties = map[string]string{codec.PropertyShardingKey: "v"}
	cases := []struct {
		name string
		m    *v2.Message
		want v2.Code
	}{
		{"FIFO message to a NORMAL topic", grouped, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"__SHARDINGKEY user property to a NORMAL topic", sharded, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"NORMAL message to a FIFO topic", plain, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"DELAY message to a NORMAL topic", delayed, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"TRANSACTION message to a NORMAL topic", tx, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"empty body", empty, v2.Code_MESSAGE_BODY_EMPTY},
		{"unknown topic", message("nowhere", "x", "T"), v2.Code_TOPIC_NOT_FOUND},
	}
	for _, tc := range cases {
		r, err := f.c.SendMessage(f.ctx("p@1"), &v2.SendMessageRequest{Messages: []*v2.Message{tc.m}})
		if err != nil || r.GetStatus().GetCode() != tc.want {
			t.Errorf("%s: %v %v, want %v", tc.name, r, err, tc.want)
		}
	}
	r, _ := f.c.SendMessage(f.ctx(""), &v2.SendMessageRequest{Messages: []*v2.Message{message(normal, "x", "T")}})
	if r.GetStatus().GetCode() != v2.Code_CLIENT_ID_REQUIRED {
		t.Errorf("no client id: %v", r)
	}
	for _, q := range []int32{0, 1} {
		if n, _ := f.core.Broker.MaxOffset(normal, q); n != 0 {
			t.Errorf("%s queue %d holds %d messages", normal, q, n)
		}
	}
}

// Several messages in one SendMessage: one entry each, in order, all
// stored; FIFO messages of one group land in one queue.
func TestSendBatchAndFifoQueue(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic := unique("fifo")
	f.createTopic(topic, 4, "FIFO")
	var msgs []*v2.Message
	for i := 0; i < 6; i++ {
		m := message(topic, "m"+string(rune('0'+i)), "T")
		m.SystemProperties.MessageGroup = ptr("order-42")
		msgs = append(msgs, m)
	}
	r := f.send("p@1", msgs...)
	if len(r.GetEntries()) != 6 {
		t.Fatalf("%v", r)
	}
	for i, e := range r.GetEntries() {
		if e.GetMessageId() != msgs[i].GetSystemProperties().GetMessageId() {
			t.Errorf("entry %d: %v", i, e)
		}
	}
	const q = 3 // rocketmq-proxy 5.5.0's queue for group order-42 among 4
	if n, _ := f.core.Broker.MaxOffset(topic, q); n != 6 {
		t.Errorf("queue %d holds %d messages, want all 6", q, n)
	}
}

// AckMessage with several entries: per-entry results, MULTIPLE_RESULTS on
// top when they differ; a handle that does not parse or names another
// broker is INVALID_RECEIPT_HANDLE.
func TestAckEntries(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("acks"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "a", "T"), message(topic, "b", "T"))
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 2, 5)
	ei, _ := codec.ParseExtraInfo(handleOf(got[1]))
	ei.BrokerName = "another-broker"
	r, err := f.c.AckMessage(f.ctx("c@1"), &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
		Entries: []*v2.AckMessageEntry{
			{MessageId: "1", ReceiptHandle: handleOf(got[0])},
			{MessageId: "2", ReceiptHandle: "not a handle"},
			{MessageId: "3", ReceiptHandle: ei.String()},
		}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_MULTIPLE_RESULTS || len(r.GetEntries()) != 3 {
		t.Fatalf("%v %v", r, err)
	}
	want := []v2.Code{v2.Code_OK, v2.Code_INVALID_RECEIPT_HANDLE, v2.Code_INVALID_RECEIPT_HANDLE}
	for i, e := range r.GetEntries() {
		if e.GetStatus().GetCode() != want[i] || e.GetMessageId() != r.GetEntries()[i].GetMessageId() {
			t.Errorf("entry %d: %v, want %v", i, e, want[i])
		}
	}
	for _, tc := range []struct {
		req  *v2.AckMessageRequest
		want v2.Code
	}{
		{&v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic}}, v2.Code_BAD_REQUEST},
		{&v2.AckMessageRequest{Group: &v2.Resource{Name: "a b"}, Topic: &v2.Resource{Name: topic}}, v2.Code_ILLEGAL_CONSUMER_GROUP},
		{&v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: ""}}, v2.Code_ILLEGAL_TOPIC},
	} {
		if r, _ := f.c.AckMessage(f.ctx("c@1"), tc.req); r.GetStatus().GetCode() != tc.want {
			t.Errorf("%v: %v, want %v", tc.req, r, tc.want)
		}
	}
	// The acked one never comes back; the other does after its invisible time.
	f.core.Broker.AdvanceClock(11_000)
	back := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 10)
	if string(back[0].GetBody()) != "b" {
		t.Errorf("redelivered %q, want b", back[0].GetBody())
	}
}

// ChangeInvisibleDuration refusals echo the handle the client sent.
func TestChangeRefusals(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("chg"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "a", "T"))
	m := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 5)[0]
	for _, tc := range []struct {
		handle string
		d      *durationpb.Duration
		want   v2.Code
	}{
		{handleOf(m), durationpb.New(-time.Second), v2.Code_ILLEGAL_INVISIBLE_TIME},
		{handleOf(m), durationpb.New(13 * time.Hour), v2.Code_ILLEGAL_INVISIBLE_TIME},
		{"garbage", durationpb.New(time.Minute), v2.Code_INVALID_RECEIPT_HANDLE},
		{"garbage", nil, v2.Code_INVALID_RECEIPT_HANDLE},
	} {
		r, err := f.c.ChangeInvisibleDuration(f.ctx("c@1"), &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group},
			Topic: &v2.Resource{Name: topic}, ReceiptHandle: tc.handle, InvisibleDuration: tc.d})
		if err != nil || r.GetStatus().GetCode() != tc.want || r.GetReceiptHandle() != tc.handle {
			t.Errorf("%q %v: %v %v, want %v", tc.handle, tc.d, r, err, tc.want)
		}
	}
}

// A ChangeInvisibleDuration without invisible_duration is a change to 0,
// as the proxy reads it: the message comes back at once.
func TestChangeWithoutDurationIsZero(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("chg0"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "a", "T"))
	m := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 5)[0]
	r, err := f.c.ChangeInvisibleDuration(f.ctx("c@1"), &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group},
		Topic: &v2.Resource{Name: topic}, ReceiptHandle: handleOf(m)})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK || r.GetReceiptHandle() == handleOf(m) {
		t.Fatalf("%v %v", r, err)
	}
	back := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 10)[0]
	if string(back.GetBody()) != "a" {
		t.Fatalf("got %q", back.GetBody())
	}
}

// A change with suspend does not count as a redelivery: the message
// comes back with delivery attempt 1.
func TestChangeSuspend(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("susp"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "a", "T"))
	m := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 5)[0]
	r, err := f.c.ChangeInvisibleDuration(f.ctx("c@1"), &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group},
		Topic: &v2.Resource{Name: topic}, ReceiptHandle: handleOf(m), InvisibleDuration: durationpb.New(0), Suspend: ptr(true)})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("%v %v", r, err)
	}
	back := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 10)[0]
	if back.GetSystemProperties().GetDeliveryAttempt() != 1 {
		t.Errorf("delivery attempt %d after a suspended change, want 1", back.GetSystemProperties().GetDeliveryAttempt())
	}
}

// A delayed message is not delivered before its delivery time and is
// delivered (as DELAY) after it.
func TestDelayMessage(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("delay"), unique("cg")
	f.createTopic(topic, 1, "DELAY")
	m := message(topic, "later", "T")
	at := time.UnixMilli(f.core.Broker.Now()).Add(30 * time.Second)
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(at)
	m.SystemProperties.MessageType = v2.MessageType_DELAY
	f.send("p@1", m)
	if r := f.receive(f.ctx("c@1"), simpleReceive(group, topic, 0)); r.status.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
		t.Fatalf("delivered early: %+v", r)
	}
	f.core.Broker.AdvanceClock(31_000)
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 10)[0]
	sp := got.GetSystemProperties()
	if sp.GetMessageType() != v2.MessageType_DELAY || sp.GetDeliveryTimestamp().AsTime().UnixMilli() != at.UnixMilli() {
		t.Errorf("delayed message: %v", got)
	}
}

// checkNoMessage asserts that group has nothing to receive now.
func (f *fixture) checkNoMessage(group, topic string) {
	f.t.Helper()
	if r := f.receive(f.ctx("check@1"), simpleReceive(group, topic, 0)); r.status.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
		f.t.Errorf("expected nothing for %s, got %+v", group, r)
	}
}
