package broker_test

import (
	"errors"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// TestCoreAckDeletesCheckpointDurably acks one of two popped messages: its
// checkpoint is gone when done runs and stays gone across a restart, a
// re-ACK (before and after the restart) is SUCCESS, and once the invisible
// time has passed only the un-acked message comes back.
func TestCoreAckDeletesCheckpointDurably(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicA", 1)
	appendBodies(t, f, "TopicA", 0, "a0", "a1")
	_, ms := popMessages(t, f, popReq("GroupA", "TopicA", 32))
	if len(ms) != 2 || len(checkpoints(t, f)) != 2 {
		t.Fatalf("popped %d, checkpoints %d, want 2 and 2", len(ms), len(checkpoints(t, f)))
	}
	if err := ack(t, f, ackReq("GroupA", "TopicA", ms[0])); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if cks := checkpoints(t, f); len(cks) != 1 || cks[0].Key.QueueOffset != ms[1].m.QueueOffset {
		t.Fatalf("checkpoints after ack %+v, want only offset %d", cks, ms[1].m.QueueOffset)
	}
	if err := ack(t, f, ackReq("GroupA", "TopicA", ms[0])); err != nil {
		t.Fatalf("re-ack: %v", err)
	}

	f.Restart()
	if cks := checkpoints(t, f); len(cks) != 1 || cks[0].Key.QueueOffset != ms[1].m.QueueOffset {
		t.Fatalf("checkpoints after restart %+v, want only offset %d", cks, ms[1].m.QueueOffset)
	}
	if err := ack(t, f, ackReq("GroupA", "TopicA", ms[0])); err != nil {
		t.Fatalf("re-ack after restart: %v", err)
	}
	f.Broker.AdvanceClock(61_000)
	reviveNow(t, f)
	_, again := popMessages(t, f, popReq("GroupA", "TopicA", 32))
	if len(again) != 1 || string(again[0].m.Body) != "a1" {
		t.Fatalf("redelivered %d messages, want only a1", len(again))
	}
}

// TestCoreAckRefusals checks each refusal's code, and that a refused ACK
// deletes nothing.
func TestCoreAckRefusals(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicR", 1)
	appendBodies(t, f, "TopicR", 0, "r0", "r1")
	_, ms := popMessages(t, f, popReq("GroupR", "TopicR", 32))
	if len(ms) != 2 {
		t.Fatalf("popped %d, want 2", len(ms))
	}
	cases := []struct {
		name string
		mod  func(r *broker.AckRequest)
		code int32
	}{
		{"unknown topic", func(r *broker.AckRequest) { r.Topic = "NoSuchTopic" }, codec.TopicNotExist},
		{"queue out of range", func(r *broker.AckRequest) { r.QueueID = 3 }, codec.MessageIllegal},
		{"offset above maxOffset", func(r *broker.AckRequest) { r.Offset = 100 }, codec.NoMessage},
		{"negative offset", func(r *broker.AckRequest) { r.Offset = -1 }, codec.NoMessage},
		{"bad group", func(r *broker.AckRequest) { r.ConsumerGroup = "bad group!" }, codec.InvalidParameter},
		{"handle does not parse", func(r *broker.AckRequest) { r.ExtraInfo = "not a handle" }, codec.MessageIllegal},
		{"handle of another message", func(r *broker.AckRequest) { r.ExtraInfo = ms[1].raw }, codec.MessageIllegal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ackReq("GroupR", "TopicR", ms[0])
			tc.mod(&r)
			if got := errCode(t, ack(t, f, r)); got != tc.code {
				t.Fatalf("code %d, want %d", got, tc.code)
			}
			if n := len(checkpoints(t, f)); n != 2 {
				t.Fatalf("checkpoints after a refused ack: %d, want 2", n)
			}
		})
	}
}

// TestCoreChangeGivesNewHandle changes a popped message's invisible time:
// the result is a new handle (its fields as the client rebuilds them) whose
// checkpoint replaced the old one; the old handle is stale for CHANGE, its
// ACK deletes nothing, and past its deadline it revives nothing; the new
// handle acks the message for good.
func TestCoreChangeGivesNewHandle(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicC", 1)
	appendBodies(t, f, "TopicC", 0, "c0")
	_, ms := popMessages(t, f, popReq("GroupC", "TopicC", 1))
	if len(ms) != 1 {
		t.Fatalf("popped %d, want 1", len(ms))
	}
	old := ms[0]
	res, err := change(t, f, changeReq("GroupC", "TopicC", old, 120_000))
	if err != nil {
		t.Fatalf("change: %v", err)
	}
	ei, err := codec.ParseExtraInfo(res.ExtraInfo)
	if err != nil {
		t.Fatalf("new handle %q: %v", res.ExtraInfo, err)
	}
	if res.ReviveQid != 0 || res.InvisibleTime != 120_000 || res.PopTime < old.handle.PopTime ||
		ei.PopTime != res.PopTime || ei.InvisibleTime != res.InvisibleTime ||
		ei.QueueOffset != old.handle.QueueOffset || ei.CkQueueOffset != old.handle.QueueOffset {
		t.Fatalf("change result %+v, handle %+v (old %+v)", res, ei, old.handle)
	}
	cks := checkpoints(t, f)
	if len(cks) != 1 || cks[0].Key.VisibleAtMillis != res.PopTime+120_000 {
		t.Fatalf("checkpoints after change %+v, want one visible at %d", cks, res.PopTime+120_000)
	}
	_, err = change(t, f, changeReq("GroupC", "TopicC", old, 5_000))
	var e *broker.Error
	if !errors.As(err, &e) || e.Code != codec.NoMessage {
		t.Fatalf("change of the old handle: %v, want NO_MESSAGE", err)
	}
	if err := ack(t, f, ackReq("GroupC", "TopicC", old)); err != nil {
		t.Fatalf("ack of the old handle: %v", err)
	}
	if n := len(checkpoints(t, f)); n != 1 {
		t.Fatalf("the old handle's ack touched the new checkpoint: %d left", n)
	}

	f.Broker.AdvanceClock(90_000) // past the old deadline, before the new one
	reviveNow(t, f)
	if _, err := brokertest.Await(t, func(done func(broker.PopResult, error)) {
		f.Broker.Pop(popReq("GroupC", "TopicC", 1), done)
	}); errCode(t, err) != codec.PollingTimeout {
		t.Fatalf("pop after the old deadline: %v, want nothing (POLLING_TIMEOUT)", err)
	}
	cur := popped{m: old.m, handle: ei, raw: res.ExtraInfo}
	if err := ack(t, f, ackReq("GroupC", "TopicC", cur)); err != nil {
		t.Fatalf("ack of the new handle: %v", err)
	}
	if n := len(checkpoints(t, f)); n != 0 {
		t.Fatalf("checkpoints after acking the new handle: %d", n)
	}
}

// TestCoreChangeRefusals checks the CHANGE-only refusals: offset ==
// maxOffset is NO_MESSAGE and an invisibleTime out of range is
// INVALID_PARAMETER; nothing changes.
func TestCoreChangeRefusals(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicCR", 1)
	appendBodies(t, f, "TopicCR", 0, "x")
	_, ms := popMessages(t, f, popReq("GroupCR", "TopicCR", 1))
	before := checkpoints(t, f)
	r := changeReq("GroupCR", "TopicCR", ms[0], -1)
	if _, err := change(t, f, r); errCode(t, err) != codec.InvalidParameter {
		t.Fatalf("negative invisibleTime: %v", err)
	}
	r = changeReq("GroupCR", "TopicCR", ms[0], broker.MaxInvisibleTimeMillis+1)
	if _, err := change(t, f, r); errCode(t, err) != codec.InvalidParameter {
		t.Fatalf("invisibleTime over the bound: %v", err)
	}
	r = changeReq("GroupCR", "TopicCR", ms[0], 1_000)
	r.Offset = f.Store.MaxOffset("TopicCR", 0)
	if _, err := change(t, f, r); errCode(t, err) != codec.NoMessage {
		t.Fatalf("offset == maxOffset: %v", err)
	}
	if after := checkpoints(t, f); len(after) != 1 || after[0].Key != before[0].Key {
		t.Fatalf("checkpoints changed by refused changes: %+v → %+v", before, after)
	}
}
