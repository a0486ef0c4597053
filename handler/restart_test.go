package handler_test

// Durability across restarts: offsets, checkpoints and pending
// redeliveries survive a clean restart and a kill -9.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// TestRestart_CheckpointsSurvive: un-acked messages popped before a clean
// restart come back after it; acked ones do not.
func TestRestart_CheckpointsSurvive(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 4, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 60000})
	require.Len(t, ms, 4)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	h.restart()
	require.ElementsMatch(t, []string{"m-1", "m-2", "m-3"}, bodies(redeliveries(t, h, "G", "T", 61*time.Second)))
}

// TestRestart_CheckpointsSurviveKill: the same across kill -9 of a child.
func TestRestart_CheckpointsSurviveKill(t *testing.T) {
	dir := t.TempDir()
	child := startChild(t, dir)
	c := dialAddr(t, child.addr)
	createTopicRemote(t, c, "T", 1)
	sendN(t, c, "T", 0, 4, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 60000})
	require.Len(t, ms, 4)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	child.kill(t)

	h := startHarnessIn(t, dir)
	require.ElementsMatch(t, []string{"m-1", "m-2", "m-3"}, bodies(redeliveries(t, h, "G", "T", 61*time.Second)))
	require.EqualValues(t, 4, committedOffset(h, "G", "T", 0))
}

// TestRestart_PendingRedeliveriesSurviveKill: retry copies written by
// revive before a kill -9 are delivered after the restart, with their
// reconsumeTimes.
func TestRestart_PendingRedeliveriesSurviveKill(t *testing.T) {
	dir := t.TempDir()
	child := startChild(t, dir)
	c := dialAddr(t, child.addr)
	createTopicRemote(t, c, "T", 1)
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 200})
	require.Len(t, ms, 3)
	retry := codec.PopRetryTopicV2("G", "T")
	eventually(t, func() bool { return maxOffsetRemote(t, c, retry) == 3 }, "child revived the messages")
	child.kill(t)

	h := startHarnessIn(t, dir)
	got := popAll(t, h.dial(), popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 10)
	require.ElementsMatch(t, []string{"m-0", "m-1", "m-2"}, bodies(got))
	for _, m := range got {
		require.EqualValues(t, 1, m.m.ReconsumeTimes)
	}
}

// TestRestart_PendingRedeliveriesSurvive: the same across a clean restart.
func TestRestart_PendingRedeliveriesSurvive(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 1000})
	require.Len(t, ms, 3)
	h.advance(2 * time.Second)
	h.reviveNow()
	require.EqualValues(t, 3, h.b().Store.MaxOffset(codec.PopRetryTopicV2("G", "T"), 0))
	h.restart()
	got := popAll(t, h.dial(), popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 10)
	require.ElementsMatch(t, []string{"m-0", "m-1", "m-2"}, bodies(got))
}

// maxOffsetRemote asks GET_MAX_OFFSET (30) for queue 0 of topic.
func maxOffsetRemote(t *testing.T, c *client.Conn, topic string) int64 {
	t.Helper()
	req := codec.NewRequest(codec.RequestGetMaxOffset, 0, map[string]string{"topic": topic, "queueId": "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	resp, err := c.Invoke(ctx, req)
	require.NoError(t, err)
	if resp.Code != codec.Success {
		return -1
	}
	n, err := strconv.ParseInt(resp.ExtFields["offset"], 10, 64)
	require.NoError(t, err)
	return n
}

// TestSyncWriteMode_PopAckChangeRevive: the same POP flow works with the
// baseline writer (--pop-write-mode=sync: each op written by one of several
// workers, completions not ordered across ops).
func TestSyncWriteMode_PopAckChangeRevive(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.PopWriteMode = "sync"; c.SyncWorkers = 4 })
	h.createTopic("T", 2)
	c := h.dial()
	for q := range int32(2) {
		sendN(t, c, "T", q, 10, "q"+strconv.Itoa(int(q)), sendOpts{})
	}
	ms := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 4, invisible: 10000}, 20)
	require.Len(t, ms, 20)
	var want []string
	for i, m := range ms {
		switch i % 3 {
		case 0:
			require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
		case 1:
			resp, np := change(t, c, "G", "T", m, 30000)
			require.Equal(t, codec.Success, resp.Code)
			require.Equal(t, codec.Success, ack(t, c, "G", "T", np))
		default:
			want = append(want, m.body())
		}
	}
	require.ElementsMatch(t, want, bodies(redeliveries(t, h, "G", "T", 31*time.Second)))
}
