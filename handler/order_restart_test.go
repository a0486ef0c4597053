package handler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestOrder_RestartKeepsBlock: the lease is durable with the POP's reply;
// a restart neither unblocks early nor skips or reorders.
func TestOrder_RestartKeepsBlock(t *testing.T) {
	h, c := orderSetup(t, 3)
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 60000}
	_, ms, _ := orderPop(t, c, a, "A")
	require.Equal(t, []string{"m-0", "m-1"}, bodies(ms))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	h.restart()
	c = h.dial()
	code, _, _ := orderPop(t, c, a, "B")
	require.Equal(t, codec.PollingTimeout, code, "blocked after the restart")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[1]), "the old receipt is still valid")
	_, next, _ := orderPop(t, c, a, "B")
	require.Equal(t, []string{"m-2"}, bodies(next))
}

// TestOrder_KillBetweenPopAndAck: kill -9 of a child popshim after an
// orderly POP; the restarted broker keeps the block until the deadline,
// then redelivers the same offsets in order, counted.
func TestOrder_KillBetweenPopAndAck(t *testing.T) {
	dir := t.TempDir()
	child := startChild(t, dir)
	c := dialAddr(t, child.addr)
	createTopicRemote(t, c, "T", 1)
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 60000}
	_, ms, _ := orderPop(t, c, a, "A")
	require.Equal(t, []string{"m-0", "m-1"}, bodies(ms))
	child.kill(t)

	h := startHarnessIn(t, dir)
	c = h.dial()
	code, _, _ := orderPop(t, c, a, "B")
	require.Equal(t, codec.PollingTimeout, code, "kill -9 must not unblock the queue")
	h.advance(61 * time.Second)
	_, again, counts := orderPop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 60000}, "C")
	require.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(again))
	require.Equal(t, []int32{1, 1, 0}, []int32{reconsumeTimes(counts, again[0]), reconsumeTimes(counts, again[1]), reconsumeTimes(counts, again[2])})
}
