package grpcserver

import (
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/conf"
)

// recall calls RecallMessage as client id.
func (f *fixture) recall(id, topic, handle string) *v2.RecallMessageResponse {
	f.t.Helper()
	r, err := f.c.RecallMessage(f.ctx(id), &v2.RecallMessageRequest{Topic: &v2.Resource{Name: topic}, RecallHandle: handle})
	if err != nil {
		f.t.Fatalf("RecallMessage: %v", err)
	}
	return r
}

// runTimers lets the core's timer loop make two passes (delivering what
// is due on the core's clock).
func (f *fixture) runTimers() {
	f.t.Helper()
	tl := f.core.Broker.Timers
	start := tl.Passes()
	for i := 0; tl.Passes() < start+2; i++ {
		if i > 5000 {
			f.t.Fatal("timer passes did not run")
		}
		tl.Trigger()
		time.Sleep(2 * time.Millisecond)
	}
}

// A delayed message's SendResultEntry carries a recall handle; RecallMessage
// with it answers the message id and the message is never delivered,
// while another delayed message of the topic is. A normal message has no
// handle.
func TestRecallMessage(t *testing.T) {
	f := newFixture(t, func(c *conf.Config) { c.RecallMessageEnable = true }, nil)
	topic, group := unique("delay"), unique("cg_delay")
	f.createTopic(topic, 1, "DELAY")
	at := timestamppb.New(nowOf(f.core.Broker).Add(5 * time.Second))
	gone, kept := message(topic, "gone", "T"), message(topic, "kept", "T")
	gone.SystemProperties.DeliveryTimestamp, kept.SystemProperties.DeliveryTimestamp = at, at
	r := f.send("p@1", gone, kept)
	handle := r.GetEntries()[0].GetRecallHandle()
	if h, ok := broker.DecodeRecallHandle(handle); !ok || h.Topic != topic || h.MessageID != gone.GetSystemProperties().GetMessageId() ||
		r.GetEntries()[1].GetRecallHandle() == "" {
		t.Fatalf("entries %v", r.GetEntries())
	}
	rr := f.recall("p@1", topic, handle)
	if rr.GetStatus().GetCode() != v2.Code_OK || rr.GetMessageId() != gone.GetSystemProperties().GetMessageId() {
		t.Fatalf("recall: %v", rr)
	}
	f.core.Broker.AdvanceClock(6_000)
	f.runTimers()
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 5)
	if string(got[0].GetBody()) != "kept" {
		t.Fatalf("delivered %q", got[0].GetBody())
	}
	f.checkNoMessage(group, topic)
	// Once due, the kept message's handle no longer recalls anything.
	if rr := f.recall("p@1", topic, r.GetEntries()[1].GetRecallHandle()); rr.GetStatus().GetCode() != v2.Code_BAD_REQUEST {
		t.Errorf("recall of a delivered message: %v", rr)
	}
	normal := unique("normal")
	f.createTopic(normal, 1, "")
	if e := f.send("p@1", message(normal, "n", "T")).GetEntries()[0]; e.GetRecallHandle() != "" {
		t.Errorf("a normal message got a recall handle: %v", e)
	}
}

// RecallMessage refusals: an undecodable handle, another topic's, an
// unknown topic, a bad name, no client id; and FORBIDDEN while
// --recall-message-enable is off.
func TestRecallMessageRefusals(t *testing.T) {
	f := newFixture(t, func(c *conf.Config) { c.RecallMessageEnable = true }, nil)
	topic, other := unique("delay"), unique("delay_other")
	f.createTopic(topic, 1, "DELAY")
	f.createTopic(other, 1, "DELAY")
	m := message(topic, "x", "T")
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(nowOf(f.core.Broker).Add(time.Minute))
	handle := f.send("p@1", m).GetEntries()[0].GetRecallHandle()
	cases := []struct {
		name, client, topic, handle string
		want                        v2.Code
	}{
		{"handle that does not decode", "p@1", topic, "not-a-handle", v2.Code_BAD_REQUEST},
		{"empty handle", "p@1", topic, "", v2.Code_BAD_REQUEST},
		{"another topic's handle", "p@1", other, handle, v2.Code_BAD_REQUEST},
		{"another broker's handle", "p@1", topic, broker.EncodeRecallHandle(topic, "elsewhere", "9999999999999", "id"), v2.Code_BAD_REQUEST},
		{"unknown topic", "p@1", unique("nowhere"), handle, v2.Code_TOPIC_NOT_FOUND},
		{"bad topic name", "p@1", "bad topic", handle, v2.Code_ILLEGAL_TOPIC},
		{"no client id", "", topic, handle, v2.Code_CLIENT_ID_REQUIRED},
	}
	for _, c := range cases {
		if r := f.recall(c.client, c.topic, c.handle); r.GetStatus().GetCode() != c.want || r.GetMessageId() != "" {
			t.Errorf("%s: %v, want %s", c.name, r, c.want)
		}
	}

	off := newFixture(t, nil, nil)
	off.createTopic(topic, 1, "DELAY")
	h := broker.EncodeRecallHandle(topic, brokertest.BrokerName, "9999999999999", "id")
	if r := off.recall("p@1", topic, h); r.GetStatus().GetCode() != v2.Code_FORBIDDEN {
		t.Errorf("recall switched off: %v", r)
	}
}
