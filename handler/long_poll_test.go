package handler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// TestPOLL_WakeProportional: with many POPs of one group long-polling one
// topic, each sent message costs a bounded number of POP executions
// instead of one per parked consumer, and every message is delivered.
func TestPOLL_WakeProportional(t *testing.T) {
	const consumers, msgs = 40, 10
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "first", sendOpts{}) // the queue is known to the listener
	_, got := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 30000})
	require.Len(t, got, 1)

	var pend []pending
	for range consumers {
		pend = append(pend, asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 30000, poll: 30000}))
	}
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == consumers }, "polls parked")
	before := h.b().Polls.Stats().PopRuns
	for i := range msgs {
		send(t, c, "T", 0, "m", sendOpts{})
		eventually(t, func() bool { return h.b().Polls.ParkedCount() == int64(consumers-i-1) }, "message %d not delivered", i)
	}
	runs := h.b().Polls.Stats().PopRuns - before
	t.Logf("%d POP executions for %d messages with %d parked consumers", runs, msgs, consumers)
	require.LessOrEqual(t, runs, uint64(3*msgs), "POP executions per delivered message")
	delivered := 0
	eventually(t, func() bool {
		for _, p := range pend {
			if r, ok := p.answered(); ok {
				require.Equal(t, codec.Success, r.Code, r.Remark)
				delivered += len(parsePop(t, r))
			}
		}
		return delivered == msgs
	}, "delivered %d of %d", delivered, msgs)
}

// A POP asking to long-poll for an hour is parked with a deadline at most
// maxPollMillis away.
func TestPOLL_PollTimeCapped(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	before := h.b().Now()
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: 3_600_000})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "poll parked")
	var deadline int64
	r := h.b().Polls
	for _, d := range r.Deadlines() {
		deadline = d
	}
	require.LessOrEqual(t, deadline, h.b().Now()+longpoll.MaxPollMillis)
	require.GreaterOrEqual(t, deadline, before+longpoll.MaxPollMillis)
	r.Close()
	require.Equal(t, codec.PollingTimeout, p.wait(t).Code)
}
