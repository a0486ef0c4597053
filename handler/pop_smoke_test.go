package handler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/popshim/popshim/codec"
)

// TestPopStack_NoGoroutineLeak: a stack that served pops, parked polls,
// revives and pulls leaves no goroutine behind once closed; parked
// requests are answered at Close.
func TestPopStack_NoGoroutineLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{tag: "a"})
	resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 1000})
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(ms))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	h.advance(2 * time.Second)
	h.reviveNow()
	parkedPop := asyncPop(t, h.dial(), popArgs{group: "G2", topic: "T", queueID: 1, max: 1, invisible: 1000, poll: 60000})
	parkedPull := asyncCall(t, h.dial(), pullReq("G", "T", 1, 0, 32, 60000, ""))
	parkedNotify := asyncCall(t, h.dial(), notifyReq("G3", "T", 1, 60000))
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 3 }, "three requests parked")
	h.stop()
	require.Equal(t, codec.PollingTimeout, parkedPop.wait(t).Code)
	require.Equal(t, codec.PullNotFound, parkedPull.wait(t).Code)
	require.False(t, hasMsg(t, parkedNotify.wait(t)))
	c.Close()
}
