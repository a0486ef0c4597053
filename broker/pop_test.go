package broker_test

import (
	"errors"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// TestCorePopReturnsDurableCheckpoints pops through the core (no socket):
// the messages come back with receipt handles, and the in-flight
// checkpoints are in the store when done runs.
func TestCorePopReturnsDurableCheckpoints(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicA", 2)
	appendBodies(t, f, "TopicA", 0, "a0", "a1")
	appendBodies(t, f, "TopicA", 1, "b0")

	r, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(popReq("GroupA", "TopicA", 32), done) })
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	msgs, err := codec.DecodeMessages(r.Body)
	if err != nil {
		t.Fatalf("decode body: %v", err)
	}
	if r.Found != 3 || len(msgs) != 3 {
		t.Fatalf("found %d, decoded %d, want 3", r.Found, len(msgs))
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		ck, ok := m.Property(codec.PropertyPopCK)
		if !ok {
			t.Fatalf("message %s/%d has no POP_CK", m.Topic, m.QueueOffset)
		}
		if _, err := codec.ParseExtraInfo(ck); err != nil {
			t.Fatalf("POP_CK %q: %v", ck, err)
		}
		seen[string(m.Body)] = true
	}
	if !seen["a0"] || !seen["a1"] || !seen["b0"] {
		t.Fatalf("bodies %v, want a0 a1 b0", seen)
	}
	if r.PopTime <= 0 || r.InvisibleTime != 60_000 || r.ReviveQid != 0 {
		t.Fatalf("header popTime %d invisibleTime %d reviveQid %d", r.PopTime, r.InvisibleTime, r.ReviveQid)
	}
	counts, _ := f.Store.InflightCheckpoints(100)
	if n := counts[popstore.GroupTopic{Group: "GroupA", Topic: "TopicA"}]; n != 3 {
		t.Fatalf("in-flight checkpoints after pop = %d (%v), want 3", n, counts)
	}
}

// TestCorePopRefusals checks the core's refusals carry RocketMQ's codes
// as *broker.Error and the POP header fields.
func TestCorePopRefusals(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicR", 1)
	cases := []struct {
		name string
		mod  func(r *broker.PopRequest)
		code int32
	}{
		{"unknown topic", func(r *broker.PopRequest) { r.Topic = "NoSuchTopic" }, codec.TopicNotExist},
		{"batch too large", func(r *broker.PopRequest) { r.MaxMsgNums = broker.MaxPopBatch + 1 }, codec.InvalidParameter},
		{"queue out of range", func(r *broker.PopRequest) { r.QueueID = 5 }, codec.InvalidParameter},
		{"negative invisibleTime", func(r *broker.PopRequest) { r.InvisibleTime = -1 }, codec.InvalidParameter},
		{"illegal group name", func(r *broker.PopRequest) { r.ConsumerGroup = "bad group!" }, codec.SubscriptionGroupNotExist},
		{"sql92 that does not compile", func(r *broker.PopRequest) { r.ExpType, r.Exp = "SQL92", "a >" }, codec.SubscriptionParseFailed},
		{"empty, no poll", func(r *broker.PopRequest) {}, codec.PollingTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := popReq("GroupR", "TopicR", 4)
			tc.mod(&r)
			res, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(r, done) })
			var e *broker.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Fatalf("err = %v, want code %d", err, tc.code)
			}
			if res.PopTime <= 0 || res.InvisibleTime != r.InvisibleTime || res.Body != nil {
				t.Fatalf("refusal header %+v", res)
			}
		})
	}
}

// TestCorePopLongPollWokenByAppend parks a POP with a poll time and wakes
// it with an append, calling OnPark once before the wake.
func TestCorePopLongPollWokenByAppend(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicL", 1)
	parked := make(chan struct{}, 4)
	r := popReq("GroupL", "TopicL", 1)
	r.PollTime, r.ConnID = 20_000, 7
	r.OnPark = func() { parked <- struct{}{} }
	got := make(chan error, 1)
	var body []byte
	f.Broker.Pop(r, func(res broker.PopResult, err error) { body = res.Body; got <- err })
	<-parked
	appendBodies(t, f, "TopicL", 0, "late")
	if err := <-got; err != nil {
		t.Fatalf("woken pop: %v", err)
	}
	msgs, err := codec.DecodeMessages(body)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "late" {
		t.Fatalf("woken pop body %v %v", msgs, err)
	}
}
