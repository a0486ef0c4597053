package handler_test

// INVOKE_BROKER_TO_RESET_OFFSET (222), as mqadmin resetOffsetByTime sends
// it: a POP consumer that consumed everything receives the messages again
// after a reset to a time before the first one, and nothing old after a
// reset to now.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// resetByTimeReq builds the request mqadmin resetOffsetByTime sends
// (offset -1, every queue unless queueID ≥ 0).
func resetByTimeReq(group, topic string, queueID int32, timestamp int64) *codec.Command {
	req := codec.NewRequest(codec.RequestInvokeBrokerToResetOffset, 0, nil, nil)
	codec.ResetOffsetRequestHeader{Group: group, Topic: topic, QueueID: queueID, Timestamp: timestamp, IsForce: true}.Encode(req)
	if queueID < 0 {
		delete(req.ExtFields, "queueId") // the admin client leaves it out
	}
	return req
}

// resetBody is the ResetOffsetBody expected for offsets of queues 0.. of
// topic on the harness broker.
func resetBody(topic string, offsets ...int64) string {
	s := `{"offsetTable":{`
	for q, off := range offsets {
		if q > 0 {
			s += ","
		}
		s += `{"brokerName":"` + testBrokerName + `","queueId":` + strconv.Itoa(q) + `,"topic":"` + topic + `"}:` + strconv.FormatInt(off, 10)
	}
	return s + "}}"
}

// popAckAll pops from every queue of topic until n messages came, acks
// each, and returns them.
func popAckAll(t *testing.T, c *client.Conn, group, topic string, n int) []popped {
	t.Helper()
	ms := popAll(t, c, popArgs{group: group, topic: topic, queueID: -1, max: 32, invisible: 60000}, n)
	for _, m := range ms {
		require.Equal(t, codec.Success, ack(t, c, group, topic, m))
	}
	return ms
}

func TestResetOffsetByTimeRewindsPop(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TR", 2)
	c := h.dial()
	before := time.Now().UnixMilli() - 1000
	sendN(t, c, "TR", 0, 4, "a", sendOpts{})
	sendN(t, c, "TR", 1, 4, "b", sendOpts{})
	first := popAckAll(t, c, "GR", "TR", 8)
	require.Len(t, first, 8)
	require.Empty(t, popAll(t, c, popArgs{group: "GR", topic: "TR", queueID: -1, max: 32, invisible: 60000}, 1))

	resp := call(t, c, resetByTimeReq("GR", "TR", -1, before))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, resetBody("TR", 0, 0), string(resp.Body))
	assert.EqualValues(t, 0, committedOffset(h, "GR", "TR", 0))
	assert.EqualValues(t, 0, committedOffset(h, "GR", "TR", 1))

	again := popAckAll(t, c, "GR", "TR", 8)
	assert.ElementsMatch(t, bodies(first), bodies(again))
	for _, m := range again {
		assert.EqualValues(t, 0, m.m.ReconsumeTimes, "%s: read again from the queue, not a retry copy", m.body())
		assert.Equal(t, "TR", m.m.Topic)
	}

	// A reset to now lands at the end: nothing old comes back.
	time.Sleep(5 * time.Millisecond)
	resp = call(t, c, resetByTimeReq("GR", "TR", -1, time.Now().UnixMilli()))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, resetBody("TR", 4, 4), string(resp.Body))
	assert.Empty(t, popAll(t, c, popArgs{group: "GR", topic: "TR", queueID: -1, max: 32, invisible: 60000}, 1))

	// The reset is durable: it survives a restart.
	resp = call(t, c, resetByTimeReq("GR", "TR", 1, before))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, `{"offsetTable":{{"brokerName":"`+testBrokerName+`","queueId":1,"topic":"TR"}:0}}`, string(resp.Body))
	h.restart()
	assert.EqualValues(t, 4, committedOffset(h, "GR", "TR", 0))
	assert.EqualValues(t, 0, committedOffset(h, "GR", "TR", 1))
	got := popAckAll(t, h.dial(), "GR", "TR", 4)
	assert.Equal(t, []string{"b-0", "b-1", "b-2", "b-3"}, bodies(got))
}

// A POP parked on a drained queue is woken by the reset and answers with
// the rewound messages long before its poll time ends.
func TestResetOffsetWakesParkedPop(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TW", 1)
	c := h.dial()
	before := time.Now().UnixMilli() - 1000
	sendN(t, c, "TW", 0, 3, "m", sendOpts{})
	require.Len(t, popAckAll(t, c, "GW", "TW", 3), 3)

	parked := h.dial()
	type answer struct {
		resp *codec.Command
		err  error
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		resp, err := parked.Invoke(ctx, popArgs{group: "GW", topic: "TW", queueID: -1, max: 32, invisible: 60000, poll: 15000}.request())
		done <- answer{resp, err}
	}()
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "POP parked")

	resp := call(t, c, resetByTimeReq("GW", "TW", -1, before))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	a := <-done
	require.NoError(t, a.err)
	require.Equal(t, codec.Success, a.resp.Code, a.resp.Remark)
	assert.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(parsePop(t, a.resp)))
	assert.Less(t, time.Since(start), 10*time.Second, "the parked POP waited for its poll time instead of the wake-up")
}

// In-flight checkpoints survive a reset, as in Java: an ACK of a receipt
// taken before the reset succeeds, and an unacked one is revived to the
// retry topic when its invisible time ends.
func TestResetOffsetKeepsInflightCheckpoints(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TK", 1)
	c := h.dial()
	before := time.Now().UnixMilli() - 1000
	sendN(t, c, "TK", 0, 2, "m", sendOpts{})
	_, old := pop(t, c, popArgs{group: "GK", topic: "TK", queueID: 0, max: 2, invisible: 60000})
	require.Equal(t, []string{"m-0", "m-1"}, bodies(old))

	resp := call(t, c, resetByTimeReq("GK", "TK", -1, before))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	// A checkpoint's key is its visibility instant and the message, as in
	// RocketMQ's POP KV store (PopConsumerRecord.getKeyBytes): a second POP
	// of m-1 in the same millisecond with the same invisibleTime would
	// replace the first one's checkpoint (this test failed about one run in
	// four on a fast machine).
	h.advance(10 * time.Millisecond)
	again := popAckAll(t, c, "GK", "TK", 2)
	require.Equal(t, []string{"m-0", "m-1"}, bodies(again))
	require.Equal(t, codec.Success, ack(t, c, "GK", "TK", old[0]), "ACK of a receipt taken before the reset")

	back := redeliveries(t, h, "GK", "TK", 61*time.Second)
	require.Equal(t, []string{"m-1"}, bodies(back), "the unacked pre-reset checkpoint is revived")
	assert.EqualValues(t, 1, back[0].m.ReconsumeTimes)
}

func TestResetOffsetRefusals(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TE", 2)
	c := h.dial()
	sendN(t, c, "TE", 0, 3, "m", sendOpts{})
	popAckAll(t, c, "GE", "TE", 3)

	resp := call(t, c, resetByTimeReq("GE", "nope", -1, 0))
	assert.Equal(t, codec.TopicNotExist, resp.Code)
	assert.Equal(t, "Topic nope does not exist", resp.Remark)
	resp = call(t, c, resetByTimeReq("nobody", "TE", -1, 0))
	assert.Equal(t, codec.SubscriptionGroupNotExist, resp.Code)
	assert.Equal(t, "Group nobody does not exist", resp.Remark)
	resp = call(t, c, resetByTimeReq("GE", "TE", 7, 0))
	assert.Equal(t, codec.InvalidParameter, resp.Code, resp.Remark)
	req := resetByTimeReq("GE", "TE", -1, 0)
	delete(req.ExtFields, "timestamp")
	resp = call(t, c, req)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "timestamp")

	// An explicit offset for one queue, checked against [min, max+1].
	offReq := func(off int64) *codec.Command {
		req := codec.NewRequest(codec.RequestInvokeBrokerToResetOffset, 0, nil, nil)
		codec.ResetOffsetRequestHeader{Group: "GE", Topic: "TE", QueueID: 0, Offset: off, HasOffset: true, Timestamp: 0}.Encode(req)
		return req
	}
	resp = call(t, c, offReq(5))
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "Target offset 5 not in consume queue range [0-3]", resp.Remark)
	resp = call(t, c, offReq(1))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.EqualValues(t, 1, committedOffset(h, "GE", "TE", 0))
	got := popAckAll(t, c, "GE", "TE", 2)
	assert.Equal(t, []string{"m-1", "m-2"}, bodies(got))

	// A negative timestamp means the max offset of every queue.
	resp = call(t, c, resetByTimeReq("GE", "TE", -1, -1))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, resetBody("TE", 3, 0), string(resp.Body))
}

// A running push consumer (PULL) keeps committing its old position; an
// admin reset by time must survive that, as a 5.x broker's server-side
// reset does: UPDATE_CONSUMER_OFFSET and the PULL's piggy-backed commit
// of the queue are ignored until the queue's next PULL, which answers
// PULL_OFFSET_MOVED (21) with nextBeginOffset = the reset offset; then
// commits count again. Found with rocketmq-client 4.9.8: the consumer's
// commit 5 s after the reset undid it and nothing was consumed again.
func TestResetOffsetSurvivesPushConsumerCommits(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TP", 1)
	c := h.dial()
	before := time.Now().UnixMilli() - 1000
	sendN(t, c, "TP", 0, 5, "p", sendOpts{})
	r := pull(t, c, pullReq("GP", "TP", 0, 0, 32, 0, ""))
	require.Len(t, r.msgs, 5)
	require.Equal(t, codec.Success, call(t, c, resetReq("GP", "TP", 0, 5)).Code)
	eventually(t, func() bool { return committedOffset(h, "GP", "TP", 0) == 5 }, "the consumer's commit")

	resp := call(t, c, resetByTimeReq("GP", "TP", -1, before))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.EqualValues(t, 0, committedOffset(h, "GP", "TP", 0))

	// The consumer's periodic commit and a PULL carrying its position as
	// commitOffset: both ignored while the reset waits.
	require.Equal(t, codec.Success, call(t, c, resetReq("GP", "TP", 0, 5)).Code)
	req := pullCmd("GP", "TP", 0, 5, 32, 0, codec.PullSysFlagCommitOffset|codec.PullSysFlagSubscription, "*")
	req.ExtFields["commitOffset"] = "5"
	r = pull(t, c, req)
	require.Equal(t, codec.PullOffsetMoved, r.code, "the reset is told to the next PULL")
	require.EqualValues(t, 0, r.hdr.NextBeginOffset)
	require.EqualValues(t, 5, r.hdr.MaxOffset)
	require.EqualValues(t, 0, committedOffset(h, "GP", "TP", 0), "neither commit undid the reset")

	// Told once: the client commits the new position and pulls from it.
	require.Equal(t, codec.Success, call(t, c, resetReq("GP", "TP", 0, 0)).Code)
	r = pull(t, c, pullReq("GP", "TP", 0, 0, 32, 0, ""))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 5, "consumed again from the reset offset")
	require.Equal(t, codec.Success, call(t, c, resetReq("GP", "TP", 0, 5)).Code)
	eventually(t, func() bool { return committedOffset(h, "GP", "TP", 0) == 5 }, "commits count again")
}
