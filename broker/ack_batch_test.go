package broker_test

import (
	"strings"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// batchEntry is the BATCH_ACK entry a client folds p's receipt into,
// acking the queue offsets of ps (all from p's checkpoint).
func batchEntry(t *testing.T, group, topic string, ps ...popped) codec.BatchAck {
	t.Helper()
	h := ps[0].handle
	a := codec.BatchAck{ConsumerGroup: group, Topic: topic, RetryFlag: h.RetryFlag, StartOffset: h.CkQueueOffset,
		QueueID: h.QueueID, ReviveQueueID: h.ReviveQid, PopTime: h.PopTime, InvisibleTime: h.InvisibleTime}
	for _, p := range ps {
		if err := a.SetAcked(p.handle.QueueOffset); err != nil {
			t.Fatalf("set acked: %v", err)
		}
	}
	return a
}

// batchAck runs r and returns what it completed with.
func batchAck(t *testing.T, f *brokertest.Fixture, r broker.BatchAckRequest) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) { f.Broker.BatchAck(r, done) })
}

// TestCoreBatchAckSeveral acks two of three popped messages in one
// BATCH_ACK (with an entry of an unknown topic, skipped): exactly their
// checkpoints are gone, durably; the refusals (no entries, an entry that
// names no possible checkpoint) delete nothing.
func TestCoreBatchAckSeveral(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicB", 1)
	appendBodies(t, f, "TopicB", 0, "b0", "b1", "b2")
	_, ms := popMessages(t, f, popReq("GroupB", "TopicB", 32))
	if len(ms) != 3 {
		t.Fatalf("popped %d, want 3", len(ms))
	}

	if err := batchAck(t, f, broker.BatchAckRequest{}); errCode(t, err) != codec.NoMessage {
		t.Fatalf("empty batch ack: %v, want NO_MESSAGE", err)
	}
	bad := batchEntry(t, "GroupB", "TopicB", ms[0])
	bad.PopTime = 0
	err := batchAck(t, f, broker.BatchAckRequest{Acks: []codec.BatchAck{batchEntry(t, "GroupB", "TopicB", ms[1]), bad}})
	if errCode(t, err) != codec.MessageIllegal || !strings.Contains(err.Error(), "invalid batch ack entry 1") {
		t.Fatalf("batch ack with a bad entry: %v, want MESSAGE_ILLEGAL naming entry 1", err)
	}
	if n := len(checkpoints(t, f)); n != 3 {
		t.Fatalf("a refused batch ack deleted checkpoints: %d left", n)
	}

	unknown := batchEntry(t, "GroupB", "NoSuchTopic", ms[1])
	err = batchAck(t, f, broker.BatchAckRequest{Acks: []codec.BatchAck{batchEntry(t, "GroupB", "TopicB", ms[0], ms[2]), unknown}})
	if err != nil {
		t.Fatalf("batch ack: %v", err)
	}
	if cks := checkpoints(t, f); len(cks) != 1 || cks[0].Key.QueueOffset != ms[1].m.QueueOffset {
		t.Fatalf("checkpoints after batch ack %+v, want only offset %d", cks, ms[1].m.QueueOffset)
	}
	f.Restart()
	if cks := checkpoints(t, f); len(cks) != 1 || cks[0].Key.QueueOffset != ms[1].m.QueueOffset {
		t.Fatalf("checkpoints after restart %+v, want only offset %d", cks, ms[1].m.QueueOffset)
	}
}

// TestCoreOrderlyAckAndChange runs the orderly receipts (reviveQid 999) of
// an order=true POP through ACK, CHANGE and BATCH_ACK: an offset no lease
// holds is MESSAGE_ILLEGAL; a CHANGE to 0 answers the receipt's popTime
// and reviveQid 999 and frees that offset; ACKs move the consume offset,
// which survives a restart.
func TestCoreOrderlyAckAndChange(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicO", 1)
	appendBodies(t, f, "TopicO", 0, "o0", "o1", "o2")
	orderReq := popReq("GroupO", "TopicO", 2)
	orderReq.Order = true
	res, ms := popMessages(t, f, orderReq)
	if res.ReviveQid != codec.PopOrderReviveQueue || len(ms) != 2 || ms[0].m.QueueOffset != 0 || ms[1].m.QueueOffset != 1 {
		t.Fatalf("orderly pop: reviveQid %d, %d messages", res.ReviveQid, len(ms))
	}
	if _, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(orderReq, done) }); errCode(t, err) != codec.PollingTimeout {
		t.Fatalf("orderly pop of a held queue: %v, want POLLING_TIMEOUT", err)
	}

	unheld := ms[1]
	unheld.handle.QueueOffset = 2
	unheld.raw = unheld.handle.String()
	if err := ack(t, f, ackReq("GroupO", "TopicO", unheld)); errCode(t, err) != codec.MessageIllegal {
		t.Fatalf("orderly ack of an offset no lease holds: %v, want MESSAGE_ILLEGAL", err)
	}

	cres, err := change(t, f, changeReq("GroupO", "TopicO", ms[1], 0))
	if err != nil {
		t.Fatalf("orderly change: %v", err)
	}
	ei, err := codec.ParseExtraInfo(cres.ExtraInfo)
	if err != nil || cres.ReviveQid != codec.PopOrderReviveQueue || cres.PopTime != ms[1].handle.PopTime ||
		cres.InvisibleTime < 0 || ei.PopTime != cres.PopTime || ei.InvisibleTime != cres.InvisibleTime || !ei.IsOrder() {
		t.Fatalf("orderly change result %+v, handle %+v (%v)", cres, ei, err)
	}

	if err := ack(t, f, ackReq("GroupO", "TopicO", ms[0])); err != nil {
		t.Fatalf("orderly ack: %v", err)
	}
	if off, ok := f.Store.ConsumerOffset("GroupO", "TopicO", 0); !ok || off != 1 {
		t.Fatalf("consume offset after acking offset 0: %d %v, want 1", off, ok)
	}
	if err := ack(t, f, ackReq("GroupO", "TopicO", ms[0])); err != nil {
		t.Fatalf("orderly re-ack: %v", err)
	}

	// Offset 1 was made visible by the CHANGE and offset 0 is acked: the
	// queue is free and delivers from offset 1 again.
	_, again := popMessages(t, f, orderReq)
	if len(again) != 2 || again[0].m.QueueOffset != 1 || again[1].m.QueueOffset != 2 {
		t.Fatalf("orderly pop after change and ack: %d messages", len(again))
	}
	err = batchAck(t, f, broker.BatchAckRequest{Acks: []codec.BatchAck{batchEntry(t, "GroupO", "TopicO", again...)}})
	if err != nil {
		t.Fatalf("orderly batch ack: %v", err)
	}
	f.Restart()
	if off, ok := f.Store.ConsumerOffset("GroupO", "TopicO", 0); !ok || off != 3 {
		t.Fatalf("consume offset after restart: %d %v, want 3", off, ok)
	}
}
