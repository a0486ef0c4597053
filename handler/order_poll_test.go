package handler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestOrder_ParkedPopWokenByAckNotByAppends is POLL-03.
func TestOrder_ParkedPopWokenByAckNotByAppends(t *testing.T) {
	h, c := orderSetup(t, 1)
	a := popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 30000}
	_, ms, _ := orderPop(t, c, a, "A")
	require.Len(t, ms, 1)
	parked := a
	parked.poll = 20000
	p := asyncCall(t, h.dial(), orderPopReq(parked, "B"))
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "orderly POP parked")
	before := h.b().Polls.Stats().PopRuns
	sendBatch(t, c, "T", 0, "n", 0, 1000, "")
	runs := h.b().Polls.Stats().PopRuns - before
	require.LessOrEqual(t, runs, uint64(2), "appends to a blocked queue re-ran the parked POP %d times", runs)
	_, ok := p.answered()
	require.False(t, ok, "answered while the queue is blocked")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	got, err := codec.DecodeMessages(r.Body)
	require.NoError(t, err)
	require.Equal(t, "n-0", string(got[0].Body))
}

// TestOrder_ParkedPopWokenWhenLeaseEnds: the deadline passing wakes it.
func TestOrder_ParkedPopWokenWhenLeaseEnds(t *testing.T) {
	h, c := orderSetup(t, 1)
	_, ms, _ := orderPop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 300}, "A")
	require.Len(t, ms, 1)
	p := asyncCall(t, h.dial(), orderPopReq(popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 10000, poll: 20000}, "B"))
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	got, err := codec.DecodeMessages(r.Body)
	require.NoError(t, err)
	require.Equal(t, "m-0", string(got[0].Body))
}

// TestOrder_Notification is POLL-04 item 4.
func TestOrder_Notification(t *testing.T) {
	_, c := orderSetup(t, 2)
	_, ms, _ := orderPop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000}, "A")
	require.Len(t, ms, 1)
	notify := func(attempt string) bool {
		h := codec.NotificationRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: -1, Order: true, AttemptID: attempt}
		req := codec.NewRequest(codec.RequestNotification, 0, nil, nil)
		h.Encode(req)
		resp := call(t, c, req)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		rh, err := codec.DecodeNotificationResponseHeader(resp.ExtFields)
		require.NoError(t, err)
		return rh.HasMsg
	}
	require.False(t, notify("B"), "a blocked queue has no message for another attempt")
	require.True(t, notify("A"), "re-entrant attempt")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	require.True(t, notify("B"))
}

// TestOrder_ParkedPopIgnoresAppendsToBlockedQueues: with queueId -1, a
// parked orderly POP waits on the queues it can read and on lease ends:
// appends to a queue blocked for it do not re-run it; an append to a
// readable queue wakes it.
func TestOrder_ParkedPopIgnoresAppendsToBlockedQueues(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	send(t, c, "T", 0, "a-0", sendOpts{})
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000}
	_, ms, _ := orderPop(t, c, a, "A")
	require.Equal(t, []string{"a-0"}, bodies(ms))
	p := asyncCall(t, h.dial(), orderPopReq(popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 30000, poll: 20000}, "B"))
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "orderly POP parked")
	before := h.b().Polls.Stats().PopRuns
	sendN(t, c, "T", 0, 20, "q0", sendOpts{}) // 20 appends, each a wake-up of queue 0
	runs := h.b().Polls.Stats().PopRuns - before
	require.LessOrEqual(t, runs, uint64(2), "appends to the blocked queue re-ran the parked POP %d times", runs)
	_, ok := p.answered()
	require.False(t, ok)
	send(t, c, "T", 1, "b-0", sendOpts{})
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	got, err := codec.DecodeMessages(r.Body)
	require.NoError(t, err)
	require.Equal(t, "b-0", string(got[0].Body))
}
