package handler_test

// changeInvisibleTime scenarios (docs/SCENARIOS.md CHG-*) and the CHANGE
// rules of RocketMQ's KV path (broker/.../pop/PopConsumerService.java).

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestCHG01_ChangeRejectsMaxOffset: CHANGE of offset == maxOffset or a
// negative offset is NO_MESSAGE and creates nothing; ACK allows
// offset == maxOffset.
func TestCHG01_ChangeRejectsMaxOffset(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 5, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 5, invisible: 10000})
	require.Len(t, ms, 5)
	m4 := ms[4]
	for _, off := range []int64{5, -1} {
		p := m4
		p.handle.QueueOffset = off
		p.raw = p.handle.String()
		resp, _ := change(t, c, "G", "T", p, 10000)
		require.Equal(t, codec.NoMessage, resp.Code, "offset %d: %s", off, resp.Remark)
	}
	p := m4
	p.handle.QueueOffset = 5
	p.raw = p.handle.String()
	require.Equal(t, codec.Success, ack(t, c, "G", "T", p), "ACK accepts offset == maxOffset")
	for _, m := range ms {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	send(t, c, "T", 0, "m-5", sendOpts{})
	got := redeliveries(t, h, "G", "T", 11*time.Second)
	require.Equal(t, []string{"m-5"}, bodies(got))
	require.Equal(t, codec.RetryFlagNormal, got[0].handle.RetryFlag, "offset 5 never became a retry copy")
	require.EqualValues(t, 0, got[0].m.ReconsumeTimes)
}

// TestCHG02_ChangeRedeliversOnceViaRetry: a changed, un-acked message comes
// back once through the retry topic with reconsumeTimes 1; the ACK with the
// retry topic ends it.
func TestCHG02_ChangeRedeliversOnceViaRetry(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 5000)
	resp, h1 := change(t, c, "G", "T", ms[0], 6000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.NotEqual(t, ms[0].raw, h1.raw)
	h.advance(7 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 5000}, 5)
	require.Equal(t, []string{"m"}, bodies(got), "exactly one redelivery")
	require.NotEqual(t, codec.RetryFlagNormal, got[0].handle.RetryFlag)
	require.EqualValues(t, 1, got[0].m.ReconsumeTimes)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", got[0]))
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 7*time.Second)))
}

// TestCHG_SameDeadlineKeepsRecord: a CHANGE whose new deadline equals the
// old one (same key) leaves the record in place (RocketMQ #10276): the
// message still comes back.
func TestCHG_SameDeadlineKeepsRecord(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 10000)
	// Rewind the clock so that now + 5000 == popTime + 10000.
	deadline := ms[0].handle.PopTime + 10000
	var resp *codec.Command
	var np popped
	for {
		h.b().AdvanceClock(deadline - 5000 - h.b().Now())
		resp, np = change(t, c, "G", "T", ms[0], 5000)
		require.Equal(t, codec.Success, resp.Code)
		if np.handle.PopTime+np.handle.InvisibleTime == deadline {
			break
		}
		ms[0] = np // a millisecond passed between setting the clock and the request: retry
		deadline = np.handle.PopTime + np.handle.InvisibleTime
	}
	require.Equal(t, []string{"m"}, bodies(redeliveries(t, h, "G", "T", 11*time.Second)))
}

// TestCHG_AckWithChangedHandle: the handle built from a CHANGE response acks
// the message (RocketMQ proxy bug #9583); the old handle no longer matters.
func TestCHG_AckWithChangedHandle(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 10000})
	resp, np := change(t, c, "G", "T", ms[0], 30000)
	require.Equal(t, codec.Success, resp.Code)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", np))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]), "stale handle: blind SUCCESS")
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 31*time.Second)))
}

// TestCHG06_MassChangesAllRedelivered: many messages changed at once all
// come back, each once.
func TestCHG06_MassChangesAllRedelivered(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 4)
	c := h.dial()
	const n = 1000
	for q := range int32(4) {
		sendBatch(t, c, "T", q, "q"+strconv.Itoa(int(q)), 0, n/4, "")
	}
	all := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, n)
	require.Len(t, all, n)
	done := make(chan int32, n)
	for _, m := range all {
		require.NoError(t, c.InvokeAsync(changeReq("G", "T", m, 5000), func(r *codec.Command, err error) {
			if err != nil {
				done <- -1
				return
			}
			done <- r.Code
		}))
	}
	for range n {
		require.Equal(t, codec.Success, <-done)
	}
	got := redeliveries(t, h, "G", "T", 6*time.Second)
	require.Len(t, got, n)
	seen := map[string]bool{}
	for _, m := range got {
		require.False(t, seen[m.body()], "%s twice", m.body())
		seen[m.body()] = true
		require.EqualValues(t, 1, m.m.ReconsumeTimes)
	}
}

// TestCHG_Proxy55HeaderFields: the 5.5 proxy's CHANGE_MESSAGE_INVISIBLETIME
// carries suspend=false and liteTopic="" (new 5.5 header fields); they are
// ignored and the change works as without them.
func TestCHG_Proxy55HeaderFields(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 60000)
	req := changeReq("G", "T", ms[0], 1000)
	req.SetExt("suspend", "false")
	req.SetExt("liteTopic", "")
	resp := call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	got := redeliveries(t, h, "G", "T", 2*time.Second)
	require.Len(t, got, 1)
	require.EqualValues(t, 1, got[0].m.ReconsumeTimes)
}
