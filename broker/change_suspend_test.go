package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker/brokertest"
)

// TestCoreChangeSuspend: a CHANGE with Suspend marks the new checkpoint,
// durably (across a restart), so its revive does not count a redelivery;
// a plain CHANGE's revive does.
func TestCoreChangeSuspend(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicS", 1)
	appendBodies(t, f, "TopicS", 0, "s0", "s1")
	_, ms := popMessages(t, f, popReq("GroupS", "TopicS", 2))
	if len(ms) != 2 {
		t.Fatalf("popped %d, want 2", len(ms))
	}
	r := changeReq("GroupS", "TopicS", ms[0], 60_000)
	r.Suspend = true
	if _, err := change(t, f, r); err != nil {
		t.Fatalf("suspended change: %v", err)
	}
	if _, err := change(t, f, changeReq("GroupS", "TopicS", ms[1], 60_000)); err != nil {
		t.Fatalf("plain change: %v", err)
	}
	f.Restart()
	suspended := 0
	for _, ck := range checkpoints(t, f) {
		if ck.Suspend {
			suspended++
		}
	}
	if suspended != 1 {
		t.Fatalf("%d suspended checkpoints after restart, want 1", suspended)
	}
	f.Broker.AdvanceClock(61_000)
	reviveNow(t, f)
	_, back := popMessages(t, f, popReq("GroupS", "TopicS", 2))
	if len(back) != 2 {
		t.Fatalf("redelivered %d, want 2", len(back))
	}
	for _, p := range back {
		want := int32(1)
		if string(p.m.Body) == "s0" {
			want = 0
		}
		if p.m.ReconsumeTimes != want {
			t.Errorf("%s: reconsumeTimes %d, want %d", p.m.Body, p.m.ReconsumeTimes, want)
		}
	}
}
