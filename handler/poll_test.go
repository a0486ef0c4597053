package handler_test

// Long polling and NOTIFICATION scenarios (docs/SCENARIOS.md POLL-*), plus the
// registry bound and the wake-up sources.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// TestPOLL01_SelectiveFilterNoPark: with many non-matching messages ahead
// of the match, a long-polling POP keeps scanning instead of parking.
func TestPOLL01_SelectiveFilterNoPark(t *testing.T) {
	h := startHarness(t, nil)
	h.b().Settings.MaxScanPerQueue = 500
	h.createTopic("T", 1)
	c := h.dial()
	sendBatch(t, c, "T", 0, "b", 0, 5000, "B")
	send(t, c, "T", 0, "a", sendOpts{tag: "A"})
	parks := h.b().Polls.Stats().Parks
	resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: 60000, exp: "A"})
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, []string{"a"}, bodies(ms))
	require.Equal(t, parks, h.b().Polls.Stats().Parks, "the request was parked")
}

// TestPOLL_ParkedPopWokenBySend: an empty long poll is answered by the
// message sent while it waits; an expired one answers POLLING_TIMEOUT.
func TestPOLL_ParkedPopWokenBySend(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: -1, max: 4, invisible: 30000, poll: 30000})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "poll parked")
	_, early := p.answered()
	require.False(t, early)
	send(t, c, "T", 1, "m", sendOpts{})
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"m"}, bodies(parsePop(t, r)))
	require.Zero(t, h.b().Polls.ParkedCount())

	// Short poll on an empty queue: answered POLLING_TIMEOUT by the timer.
	r = call(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, poll: 100}.request())
	require.Equal(t, codec.PollingTimeout, r.Code)
	require.Zero(t, h.b().Polls.ParkedCount())
}

// TestPOLL_PollingFull: beyond --max-parked-polls a POP is answered
// POLLING_FULL at once; NOTIFICATION answers SUCCESS with pollingFull.
func TestPOLL_PollingFull(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.MaxParkedPolls = 1 })
	h.createTopic("T", 1)
	first := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: 30000})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "first poll parked")
	c := h.dial()
	r := call(t, c, popArgs{group: "G2", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: 30000}.request())
	require.Equal(t, codec.PollingFull, r.Code)
	n := notify(t, c, "G3", "T", 0, 30000)
	require.Equal(t, codec.Success, n.Code)
	hdr, _ := codec.DecodeNotificationResponseHeader(n.ExtFields)
	require.Equal(t, codec.NotificationResponseHeader{HasMsg: false, PollingFull: true}, hdr)
	send(t, c, "T", 0, "m", sendOpts{})
	require.Equal(t, codec.Success, first.wait(t).Code)
}

func notifyReq(group, topic string, queueID int32, poll int64) *codec.Command {
	req := codec.NewRequest(codec.RequestNotification, 0, nil, nil)
	codec.NotificationRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: queueID, PollTime: poll}.Encode(req)
	return req
}

func notify(t *testing.T, c *client.Conn, group, topic string, queueID int32, poll int64) *codec.Command {
	t.Helper()
	return call(t, c, notifyReq(group, topic, queueID, poll))
}

func hasMsg(t *testing.T, r *codec.Command) bool {
	t.Helper()
	require.Equal(t, codec.Success, r.Code, r.Remark)
	hdr, err := codec.DecodeNotificationResponseHeader(r.ExtFields)
	require.NoError(t, err)
	return hdr.HasMsg
}

// TestPOLL04_Notification: hasMsg false after an empty poll, true when a
// message arrives during the poll or a revive fills the retry topic.
func TestPOLL04_Notification(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	require.False(t, hasMsg(t, notify(t, c, "G", "T", -1, 100)), "empty topic")

	p := asyncCall(t, h.dial(), notifyReq("G", "T", -1, 30000))
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "notification parked")
	send(t, c, "T", 1, "m", sendOpts{})
	require.True(t, hasMsg(t, p.wait(t)))

	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 5000})
	require.Len(t, ms, 1)
	require.False(t, hasMsg(t, notify(t, c, "G", "T", -1, 0)), "everything popped")
	p = asyncCall(t, h.dial(), notifyReq("G", "T", -1, 30000))
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "notification parked")
	h.advance(6 * time.Second)
	h.reviveNow()
	require.True(t, hasMsg(t, p.wait(t)), "revive into the retry topic wakes the notification")

	r := notify(t, c, "G", "T", 5, 0)
	require.Equal(t, codec.InvalidParameter, r.Code)
	r = notify(t, c, "G", "NOPE", -1, 0)
	require.Equal(t, codec.TopicNotExist, r.Code)
}

// TestPOLL05_ParkedPopGetsRevivedMessage: an un-acked message comes back to
// the long poll that is parked when it is revived, each time with a higher
// reconsumeTimes.
func TestPOLL05_ParkedPopGetsRevivedMessage(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 10000})
	require.Len(t, ms, 1)
	for round := int32(1); round <= 2; round++ {
		p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 10000, poll: 15000})
		eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "poll parked")
		h.advance(11 * time.Second)
		h.reviveNow()
		r := p.wait(t)
		require.Equal(t, codec.Success, r.Code, r.Remark)
		got := parsePop(t, r)
		require.Equal(t, []string{"m"}, bodies(got))
		require.Equal(t, round, got[0].m.ReconsumeTimes)
	}
}

// TestPOLL_ContendedQueueWakesWaiter: a POP that skipped a queue because
// another POP held its lock is not left parked when messages remain.
func TestPOLL_ContendedQueueWakesWaiter(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 2, "m", sendOpts{})
	require.True(t, h.b().Svc.TryLockQueue("G", "T", 0)) // stands in for a POP in flight
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: 30000})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "poll parked behind the lock")
	h.b().Svc.UnlockQueue("G", "T", 0)
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"m-0"}, bodies(parsePop(t, r)))
}
