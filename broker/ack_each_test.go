package broker_test

import (
	"sync"
	"testing"
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// ackEach runs AckEach of rs and returns each request's outcome.
func ackEach(t *testing.T, f *brokertest.Fixture, rs []broker.AckRequest) []error {
	t.Helper()
	var (
		mu   sync.Mutex
		errs = make([]error, len(rs))
		got  = make([]int, len(rs))
		left = len(rs)
		all  = make(chan struct{})
	)
	f.Broker.AckEach(rs, func(i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs[i] = err
		got[i]++
		if left--; left == 0 {
			close(all)
		}
	})
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatal("AckEach did not answer every request")
	}
	time.Sleep(10 * time.Millisecond) // a second answer would come now
	mu.Lock()
	defer mu.Unlock()
	for i, n := range got {
		if n != 1 {
			t.Fatalf("request %d answered %d times", i, n)
		}
	}
	return errs
}

// TestCoreAckEach acks three popped messages, a refused request in the
// middle and a re-ACK with AckEach: each request gets Ack's answer, the
// three deletes go to the writer as one op, are durable across a restart,
// and only the message left un-acked comes back after revive.
func TestCoreAckEach(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicE", 1)
	appendBodies(t, f, "TopicE", 0, "e0", "e1", "e2", "e3")
	_, ms := popMessages(t, f, popReq("GroupE", "TopicE", 32))
	if len(ms) != 4 {
		t.Fatalf("popped %d, want 4", len(ms))
	}
	unknown := ackReq("GroupE", "TopicE", ms[1])
	unknown.Topic = "NoSuchTopic"
	before := f.Broker.Writer.Accepted(batch.LaneForeground)
	errs := ackEach(t, f, []broker.AckRequest{ackReq("GroupE", "TopicE", ms[0]), unknown,
		ackReq("GroupE", "TopicE", ms[2]), ackReq("GroupE", "TopicE", ms[3]), ackReq("GroupE", "TopicE", ms[0])})
	if errs[0] != nil || errCode(t, errs[1]) != codec.TopicNotExist || errs[2] != nil || errs[3] != nil || errs[4] != nil {
		t.Fatalf("answers %v, want nil, TOPIC_NOT_EXIST, nil, nil, nil", errs)
	}
	if n := f.Broker.Writer.Accepted(batch.LaneForeground) - before; n != 1 {
		t.Fatalf("AckEach submitted %d writer ops, want 1", n)
	}
	f.Restart()
	if cks := checkpoints(t, f); len(cks) != 1 || cks[0].Key.QueueOffset != ms[1].m.QueueOffset {
		t.Fatalf("checkpoints after AckEach and a restart %+v, want only offset %d", cks, ms[1].m.QueueOffset)
	}
	f.Broker.AdvanceClock(61_000)
	reviveNow(t, f)
	_, again := popMessages(t, f, popReq("GroupE", "TopicE", 32))
	if len(again) != 1 || string(again[0].m.Body) != "e1" {
		t.Fatalf("redelivered %d messages, want only e1", len(again))
	}
}

// TestCoreAckEachOrderly: orderly receipts in an AckEach move the consume
// offset as Ack does.
func TestCoreAckEachOrderly(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicEO", 1)
	appendBodies(t, f, "TopicEO", 0, "o0", "o1")
	r := popReq("GroupEO", "TopicEO", 2)
	r.Order = true
	_, ms := popMessages(t, f, r)
	if len(ms) != 2 {
		t.Fatalf("popped %d, want 2", len(ms))
	}
	errs := ackEach(t, f, []broker.AckRequest{ackReq("GroupEO", "TopicEO", ms[0]), ackReq("GroupEO", "TopicEO", ms[1])})
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("orderly answers %v", errs)
	}
	if off, ok := f.Store.ConsumerOffset("GroupEO", "TopicEO", 0); !ok || off != 2 {
		t.Fatalf("consume offset after acking both: %d %v, want 2", off, ok)
	}
}

// A receipt the adapter parsed (AckRequest.HasReceipt) is checked as the
// text would be: a good one deletes its checkpoint through Ack and
// AckEach; one naming another broker, or another offset than the
// request's, is MESSAGE_ILLEGAL and deletes nothing.
func TestCoreAckParsedReceipt(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicP", 1)
	appendBodies(t, f, "TopicP", 0, "p0", "p1", "p2")
	_, ms := popMessages(t, f, popReq("GroupP", "TopicP", 32))
	if len(ms) != 3 {
		t.Fatalf("popped %d, want 3", len(ms))
	}
	parsed := func(p popped) broker.AckRequest {
		r := ackReq("GroupP", "TopicP", p)
		r.Receipt, r.HasReceipt = p.handle, true
		return r
	}
	otherBroker := parsed(ms[1])
	otherBroker.Receipt.BrokerName = "another-broker"
	otherOffset := parsed(ms[2])
	otherOffset.Offset = ms[1].m.QueueOffset
	errs := ackEach(t, f, []broker.AckRequest{otherBroker, otherOffset})
	for i, err := range errs {
		if errCode(t, err) != codec.MessageIllegal {
			t.Fatalf("request %d: %v, want MESSAGE_ILLEGAL", i, err)
		}
	}
	if n := len(checkpoints(t, f)); n != 3 {
		t.Fatalf("refused parsed receipts deleted checkpoints: %d left, want 3", n)
	}
	if err := ack(t, f, parsed(ms[0])); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if errs := ackEach(t, f, []broker.AckRequest{parsed(ms[1]), parsed(ms[2])}); errs[0] != nil || errs[1] != nil {
		t.Fatalf("AckEach: %v", errs)
	}
	if n := len(checkpoints(t, f)); n != 0 {
		t.Fatalf("%d checkpoints left after acking every parsed receipt", n)
	}
}
