package handler_test

// Retry-topic scenarios (docs/SCENARIOS.md RET-*).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// TestRET01_RetryTopicsDoNotCollide: (g_a, t) and (g, a_t) would share the
// V1 retry topic %RETRY%g_a_t; popshim writes V2 names, so each group gets
// only its own message back.
func TestRET01_RetryTopicsDoNotCollide(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("t", 1)
	h.createTopic("a_t", 1)
	c := h.dial()
	send(t, c, "t", 0, "x", sendOpts{})
	send(t, c, "a_t", 0, "y", sendOpts{})
	_, x := pop(t, c, popArgs{group: "g_a", topic: "t", queueID: 0, max: 1, invisible: 3000})
	_, y := pop(t, c, popArgs{group: "g", topic: "a_t", queueID: 0, max: 1, invisible: 3000})
	require.Equal(t, []string{"x"}, bodies(x))
	require.Equal(t, []string{"y"}, bodies(y))
	h.advance(4 * time.Second)
	h.reviveNow()
	_, ok1 := h.b().Topics.Get("%RETRY%g_a+t")
	_, ok2 := h.b().Topics.Get("%RETRY%g+a_t")
	require.True(t, ok1 && ok2, "distinct V2 retry topics")
	for _, tc := range []struct{ group, topic, want string }{{"g_a", "t", "x"}, {"g", "a_t", "y"}} {
		var got []popped
		for range 5 {
			resp, ms := pop(t, c, popArgs{group: tc.group, topic: tc.topic, queueID: -1, max: 32, invisible: 60000, poll: 50})
			require.Contains(t, []int32{codec.Success, codec.PollingTimeout}, resp.Code)
			got = append(got, ms...)
		}
		require.Equal(t, []string{tc.want}, bodies(got), "group %s", tc.group)
	}
}

// TestRET01_RetryTopicV1Accepted: handles of messages from a V1 retry topic
// (%RETRY%group_topic) pop and ack like V2 ones.
func TestRET01_RetryTopicV1Accepted(t *testing.T) {
	h := startHarness(t, nil)
	h.b().Settings.Revive.RetryTopicV2 = false
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 3000})
	require.Len(t, ms, 1)
	got := redeliveries(t, h, "G", "T", 4*time.Second)
	require.Len(t, got, 1)
	require.Equal(t, codec.RetryFlagV1, got[0].handle.RetryFlag)
	req := ackReq("G", "T", got[0])
	require.Equal(t, "%RETRY%G_T", req.ExtFields["topic"])
	require.Equal(t, codec.Success, call(t, c, req).Code)
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 61*time.Minute)))
}

// TestRET04_ChangeHonoursExactDuration: CHANGE to 10 s brings the message
// back after 10 s, not after a rounded delay level.
func TestRET04_ChangeHonoursExactDuration(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 60000})
	resp, _ := change(t, c, "G", "T", ms[0], 10000)
	require.Equal(t, codec.Success, resp.Code)
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 9*time.Second)))
	require.Equal(t, []string{"m"}, bodies(redeliveries(t, h, "G", "T", 2*time.Second)))
}

// TestRET05_DeleteTopicRemovesRetryTopics: deleting a topic also deletes
// the pop retry topics made for it.
func TestRET05_DeleteTopicRemovesRetryTopics(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 1000})
	h.advance(2 * time.Second)
	h.reviveNow()
	_, ok := h.b().Topics.Get(codec.PopRetryTopicV2("G", "T"))
	require.True(t, ok)
	resp := call(t, c, codec.NewRequest(codec.RequestDeleteTopicInBroker, 0, map[string]string{"topic": "T"}, nil))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	_, ok = h.b().Topics.Get(codec.PopRetryTopicV2("G", "T"))
	require.False(t, ok)
	require.Zero(t, h.b().Store.MaxOffset(codec.PopRetryTopicV2("G", "T"), 0))
}

// TestRET06_PopNeedsNoRetryTopicRoute: POP and ACK of a group that never
// sent a heartbeat (no %RETRY%<group> topic) work.
func TestRET06_PopNeedsNoRetryTopicRoute(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ok := h.b().Topics.Get(codec.RetryGroupTopic("G"))
	require.False(t, ok)
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 3000})
	require.Len(t, ms, 1)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
}

// TestRET07_PrefixGroupsIsolated: group g1 never receives the retry copy of
// group g10 (whose name it prefixes), even while both are parked.
func TestRET07_PrefixGroupsIsolated(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, m1 := pop(t, c, popArgs{group: "g1", topic: "T", queueID: 0, max: 1, invisible: 60000})
	require.Equal(t, codec.Success, ack(t, c, "g1", "T", m1[0]))
	_, m10 := pop(t, c, popArgs{group: "g10", topic: "T", queueID: 0, max: 1, invisible: 2000})
	require.Len(t, m10, 1)

	g1 := asyncPop(t, h.dial(), popArgs{group: "g1", topic: "T", queueID: -1, max: 1, invisible: 60000, poll: 1500})
	g10 := asyncPop(t, h.dial(), popArgs{group: "g10", topic: "T", queueID: -1, max: 1, invisible: 60000, poll: 15000})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 2 }, "both polls parked")
	h.advance(3 * time.Second)
	h.reviveNow()
	r10 := g10.wait(t)
	require.Equal(t, codec.Success, r10.Code, r10.Remark)
	require.Equal(t, []string{"m"}, bodies(parsePop(t, r10)))
	r1 := g1.wait(t)
	require.Equal(t, codec.PollingTimeout, r1.Code, "g1 must not get g10's message")
}

// pending is an in-flight request whose answer arrives later.
type pending struct{ ch chan *codec.Command }

// asyncPop sends a POP without waiting.
func asyncPop(t *testing.T, c *client.Conn, a popArgs) pending {
	t.Helper()
	return asyncCall(t, c, a.request())
}

func asyncCall(t *testing.T, c *client.Conn, req *codec.Command) pending {
	t.Helper()
	p := pending{ch: make(chan *codec.Command, 1)}
	require.NoError(t, c.InvokeAsync(req, func(r *codec.Command, err error) {
		if err != nil {
			r = codec.NewResponse(req, -1, err.Error())
		}
		p.ch <- r
	}))
	return p
}

// wait returns the answer (bounded).
func (p pending) wait(t *testing.T) *codec.Command {
	t.Helper()
	select {
	case r := <-p.ch:
		return r
	case <-time.After(waitFor):
		t.Fatal("no answer")
		return nil
	}
}

// answered reports whether the answer is already there (without taking it
// out when it is not).
func (p pending) answered() (*codec.Command, bool) {
	select {
	case r := <-p.ch:
		return r, true
	default:
		return nil, false
	}
}
