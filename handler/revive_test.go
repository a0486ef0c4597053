package handler_test

// Revive scenarios (docs/SCENARIOS.md REV-*) and the revive rules of
// RocketMQ's KV path (at-least-once, backoff, cap; PopConsumerService.java).

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// TestREV01_AckOnlyBurstThenRevive: after a burst of pops that were all
// acked, one un-acked message is still revived.
func TestREV01_AckOnlyBurstThenRevive(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendBatch(t, c, "T", 0, "m", 0, 500, "")
	popAndAckAll(t, h, "G", "T", 500)
	send(t, c, "T", 0, "last", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 10000})
	require.Equal(t, []string{"last"}, bodies(ms))
	require.Equal(t, []string{"last"}, bodies(redeliveries(t, h, "G", "T", 11*time.Second)))
}

// TestREV02_NoEarlyRevive: a message is never revived before its deadline.
func TestREV02_NoEarlyRevive(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 2, "m", sendOpts{})
	_, a := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 5000})
	_, b := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 60000})
	require.Equal(t, []string{"m-0"}, bodies(a))
	require.Equal(t, []string{"m-1"}, bodies(b))
	require.Equal(t, []string{"m-0"}, bodies(redeliveries(t, h, "G", "T", 6*time.Second)))
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 50*time.Second)), "b is due at 60 s")
	require.Equal(t, []string{"m-1"}, bodies(redeliveries(t, h, "G", "T", 5*time.Second)))
}

// TestREV04_FailedReviveStillRedelivers: when the revive write fails the
// checkpoint stays and a later pass redelivers the message with all its
// attributes (compressed body and sysFlag included).
func TestREV04_FailedReviveStillRedelivers(t *testing.T) {
	f := &faultHook{}
	h := startHookedHarness(t, f.hook)
	h.createTopic("T", 1)
	c := h.dial()
	body := "compressed-bytes-as-sent"
	send(t, c, "T", 0, body, sendOpts{sysFlag: codec.SysFlagCompressed | 3<<8, flag: 7, props: map[string]string{"k": "v"}})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 3000})
	require.Len(t, ms, 1)
	f.failNext.Store(2)
	h.advance(4 * time.Second)
	eventually(t, func() bool {
		h.reviveNow()
		cks, err := h.b().Store.ScanCheckpoints(0, 1<<62, 10)
		require.NoError(t, err)
		return len(cks) == 0
	}, "checkpoint not revived")
	require.EqualValues(t, 2, f.failed.Load(), "two revive writes were refused")
	got := redeliveries(t, h, "G", "T", 0)
	require.Len(t, got, 1)
	m := got[0].m
	require.Equal(t, body, string(m.Body))
	require.Equal(t, codec.SysFlagCompressed|3<<8, m.SysFlag&^(codec.SysFlagBornHostV6|codec.SysFlagStoreHostV6))
	require.EqualValues(t, 7, m.Flag)
	require.EqualValues(t, 1, m.ReconsumeTimes)
	v, _ := m.Property("k")
	require.Equal(t, "v", v)
}

// TestREV06_ClockStepBack: a checkpoint whose popTime is earlier than the
// message's store time (clock stepped back) is revived all the same.
func TestREV06_ClockStepBack(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	h.advance(-2 * time.Second)
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 3000})
	require.Len(t, ms, 1)
	require.Less(t, ms[0].handle.PopTime, ms[0].m.StoreTimestamp)
	require.Equal(t, []string{"m"}, bodies(redeliveries(t, h, "G", "T", 12*time.Second)))
}

// TestREV07_TopicDeletedAndRecreated: checkpoints of a deleted topic never
// revive the new messages that reuse their queue offsets.
func TestREV07_TopicDeletedAndRecreated(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 5, "old", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 5, invisible: 5000})
	require.Len(t, ms, 5)
	resp := call(t, c, codec.NewRequest(codec.RequestDeleteTopicInBroker, 0, map[string]string{"topic": "T"}, nil))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	h.createTopic("T", 1)
	sendN(t, c, "T", 0, 10, "n", sendOpts{})
	h.advance(6 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 100)
	want := make([]string, 10)
	for i := range want {
		want[i] = "n-" + strconv.Itoa(i)
	}
	require.ElementsMatch(t, want, bodies(got))
	for _, m := range got {
		require.Equal(t, codec.RetryFlagNormal, m.handle.RetryFlag, "%s resurrected as retry", m.body())
		require.EqualValues(t, 0, m.m.ReconsumeTimes)
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
}

// TestREV08_FailuresNeverLoseMessages: refused revive writes are retried;
// every message comes back and the scan cursor never passes an unfinished
// checkpoint.
func TestREV08_FailuresNeverLoseMessages(t *testing.T) {
	f := &faultHook{}
	h := startHookedHarness(t, f.hook)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 3000})
	require.Len(t, ms, 3)
	f.failNext.Store(2)
	h.advance(4 * time.Second)
	eventually(t, func() bool {
		h.reviveNow()
		cks, err := h.b().Store.ScanCheckpoints(0, 1<<62, 10)
		require.NoError(t, err)
		return len(cks) == 0
	}, "checkpoints not revived")
	require.EqualValues(t, 2, f.failed.Load())
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 10)
	require.ElementsMatch(t, []string{"m-0", "m-1", "m-2"}, bodies(got))
}

// TestReviveToDLQAfterMaxReconsume: once a message was delivered
// MAX_RECONSUME_TIMES more times, revive moves it to %DLQ%<group>.
func TestReviveToDLQAfterMaxReconsume(t *testing.T) {
	h, c, _ := oneInFlight(t, sendOpts{props: map[string]string{codec.PropertyMaxReconsumeTimes: "2"}}, 1000)
	redeliverUntilDLQ(t, h, c, 2)
	dlq := codec.DLQTopic("G")
	_, ok := h.b().Topics.Get(dlq)
	require.True(t, ok)
	recs, _, err := h.b().Store.ReadMessages(dlq, 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	m, _, err := codec.DecodeMessage(recs[0])
	require.NoError(t, err)
	require.Equal(t, "m", string(m.Body))
	origin, _ := m.Property(codec.PropertyDLQOriginTopic)
	require.Equal(t, "T", origin)
	// The DLQ counter names the original topic, not the pop retry topic the
	// last delivery came from (Java labels the origin topic).
	require.Equal(t, 1.0, testutil.ToFloat64(h.b().Metrics.SendToDLQ.WithLabelValues("T", "G", "false")))
	require.Equal(t, 1, testutil.CollectAndCount(h.b().Metrics.SendToDLQ), "one series")
}

// redeliverUntilDLQ expects the one message of G on T, popped with a 1 s
// invisibleTime, to be redelivered rounds times (reconsumeTimes 1..rounds)
// and then no more.
func redeliverUntilDLQ(t *testing.T, h *harness, c *client.Conn, rounds int) {
	t.Helper()
	for round := 1; round <= rounds; round++ {
		got := redeliveries(t, h, "G", "T", 2*time.Second)
		require.Len(t, got, 1, "round %d", round)
		require.EqualValues(t, round, got[0].m.ReconsumeTimes)
		// redeliveries pops with a long invisible time: shorten it again.
		resp, _ := change(t, c, "G", "T", got[0], 1000)
		require.Equal(t, codec.Success, resp.Code)
	}
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 2*time.Second)))
}

// TestReviveToDLQAfterFlagMaxReconsume: without a MAX_RECONSUME_TIMES
// property, --max-reconsume-times is the limit of a group that POP
// auto-created (it stores it as the group's retryMaxTimes).
func TestReviveToDLQAfterFlagMaxReconsume(t *testing.T) {
	h := startHarness(t, func(cfg *conf.Config) { cfg.MaxReconsumeTimes = 2 })
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 1000})
	require.Len(t, ms, 1)
	eventually(t, func() bool { g, ok := h.b().Store.Group("G"); return ok && g.RetryMaxTimes == 2 },
		"auto-created group stores retryMaxTimes from the flag")
	redeliverUntilDLQ(t, h, c, 2)
	recs, _, err := h.b().Store.ReadMessages(codec.DLQTopic("G"), 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 1, "moved to the DLQ after --max-reconsume-times redeliveries")
}
