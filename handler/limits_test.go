package handler_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/revive"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler"
)

// TestCHG_InvisibleTimeOutOfRange: a CHANGE whose invisibleTime would
// overflow visibleAt (or is negative) is INVALID_PARAMETER naming the field,
// and the original checkpoint is untouched: the ACK of the old handle still
// ends the delivery.
func TestCHG_InvisibleTimeOutOfRange(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 60000)
	for _, inv := range []int64{math.MaxInt64, broker.MaxInvisibleTimeMillis + 1, -1} {
		resp, _ := change(t, c, "G", "T", ms[0], inv)
		require.Equal(t, codec.InvalidParameter, resp.Code, "invisibleTime %d", inv)
		require.Contains(t, resp.Remark, "invisibleTime")
	}
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	require.Empty(t, redeliveries(t, h, "G", "T", 61*time.Second), "the acked message must not come back")
}

// TestOversizedBodiesAreRefusedOnTheLoop: BATCH_ACK and HEART_BEAT bodies
// over their caps are INVALID_PARAMETER with a remark giving the size, and
// the connection keeps working.
func TestOversizedBodiesAreRefusedOnTheLoop(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	big := bytes.Repeat([]byte(" "), handler.MaxBatchAckBodyBytes+1)
	resp := call(t, c, codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, big))
	require.Equal(t, codec.InvalidParameter, resp.Code)
	require.Contains(t, resp.Remark, "batch ack body")

	big = bytes.Repeat([]byte(" "), handler.MaxHeartbeatBodyBytes+1)
	resp = call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, big))
	require.Equal(t, codec.InvalidParameter, resp.Code)
	require.Contains(t, resp.Remark, "heartbeat body")

	resp = call(t, c, codec.NewRequest(codec.RequestGetBrokerClusterInfo, 0, nil, nil))
	require.Equal(t, codec.Success, resp.Code, "connection still serves requests")
}

// TestPOP_InvisibleTimeOutOfRange: a POP whose invisibleTime would overflow
// the checkpoint's visibleAt is INVALID_PARAMETER and pops nothing.
func TestPOP_InvisibleTimeOutOfRange(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	req := popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: math.MaxInt64}.request()
	resp := call(t, c, req)
	require.Equal(t, codec.InvalidParameter, resp.Code, resp.Remark)
	require.Contains(t, resp.Remark, "invisibleTime")
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 60000})
	require.Len(t, ms, 1, "the refused POP consumed nothing")
}

// TestREV_LargePassIsWrittenInChunks: a revive pass of 200 checkpoints is
// written as several small writer ops (so an ACK never waits behind the
// whole pass), and every message still comes back exactly once.
func TestREV_LargePassIsWrittenInChunks(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	const n = 200
	sendN(t, c, "T", 0, n, "m", sendOpts{})
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 5000}, n)
	require.Len(t, got, n)
	require.Less(t, revive.ChunkItems, n, "the pass must be larger than one chunk for this test to mean anything")
	before := h.b().Revive.Ops()
	h.advance(6 * time.Second)
	h.reviveNow()
	ops := h.b().Revive.Ops() - before
	require.GreaterOrEqual(t, ops, uint64((n+revive.ChunkItems-1)/revive.ChunkItems), "revive written in chunks of %d", revive.ChunkItems)
	back := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 600000}, 1<<20)
	require.Len(t, back, n, "every un-acked message is revived once")
	seen := map[string]bool{}
	for _, m := range back {
		require.False(t, seen[m.body()], "duplicate redelivery of %s", m.body())
		seen[m.body()] = true
	}
}

// TestPOP_InvalidGroupNotExist: a POP whose consumerGroup is not a legal
// name (a character outside [%|a-zA-Z0-9_-], longer than 255) is answered
// SUBSCRIPTION_GROUP_NOT_EXIST (26), as a Java broker, whose
// findSubscriptionGroupConfig returns null for such a name
// (SubscriptionGroupManager.java, validateGroup), with a remark naming the
// field. ACK and CHANGE refuse the same names with INVALID_PARAMETER (29):
// popshim only, a Java broker does not check the name there.
func TestPOP_InvalidGroupNotExist(t *testing.T) {
	_, c, ms := oneInFlight(t, sendOpts{}, 60000)
	for _, g := range []string{"a b", string(bytes.Repeat([]byte("g"), 300)), "x@y"} {
		resp := call(t, c, popArgs{group: g, topic: "T", queueID: 0, max: 1, invisible: 60000}.request())
		require.Equal(t, codec.SubscriptionGroupNotExist, resp.Code, "POP group %q: %s", g, resp.Remark)
		require.Contains(t, resp.Remark, "consumerGroup")
		resp = call(t, c, ackReq(g, "T", ms[0]))
		require.Equal(t, codec.InvalidParameter, resp.Code, "ACK group %q: %s", g, resp.Remark)
		require.Contains(t, resp.Remark, "group")
		resp, _ = change(t, c, g, "T", ms[0], 10000)
		require.Equal(t, codec.InvalidParameter, resp.Code, "CHANGE group %q: %s", g, resp.Remark)
	}
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
}
