package handler_test

// ACK scenarios (docs/SCENARIOS.md ACK-*).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// redeliveries advances the clock past every invisible time used by the
// test (by d), runs revive and pops everything that comes back.
func redeliveries(t *testing.T, h *harness, group, topic string, d time.Duration) []popped {
	t.Helper()
	h.advance(d)
	h.reviveNow()
	return popAll(t, h.dial(), popArgs{group: group, topic: topic, queueID: -1, max: 32, invisible: 600000}, 1<<20)
}

// TestACK01_AckedNeverRedelivered: messages acked one by one while time
// passes (well inside their invisible time) never come back.
func TestACK01_AckedNeverRedelivered(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 32, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
	require.Len(t, ms, 32)
	for _, m := range ms {
		h.advance(300 * time.Millisecond)
		h.reviveNow()
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 61*time.Second)))
}

// TestACK02_LateButInTimeAck: an ACK arriving shortly before the deadline
// always beats revive.
func TestACK02_LateButInTimeAck(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	for i := range 20 {
		send(t, c, "T", 0, "m"+strconv.Itoa(i), sendOpts{})
		_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000})
		require.Len(t, ms, 1)
		h.advance(time.Duration(29000+i*40) * time.Millisecond) // 29.0 s … 29.76 s of 30 s
		h.reviveNow()
		require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
		h.advance(2 * time.Second)
		h.reviveNow()
		resp, got := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 30000})
		require.Equal(t, codec.PollingTimeout, resp.Code, "iteration %d: redelivered %v", i, bodies(got))
	}
}

// TestACK03_DuplicateAndExpiredAcks: repeated ACKs and an ACK after the
// deadline all answer SUCCESS; the late-acked message comes back once, and
// later revives are unaffected.
func TestACK03_DuplicateAndExpiredAcks(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 2, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 5000})
	require.Len(t, ms, 2)
	for range 3 {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	}
	h.advance(6 * time.Second)
	h.reviveNow()
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[1]), "ack after revive")
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 10)
	require.Equal(t, []string{"m-1"}, bodies(got))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", got[0]))

	send(t, c, "T", 0, "m3", sendOpts{})
	_, ms = pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 5000})
	require.Equal(t, []string{"m3"}, bodies(ms))
	require.Equal(t, []string{"m3"}, bodies(redeliveries(t, h, "G", "T", 6*time.Second)))
}

// TestACK04_PartialAcksExactRedelivery: exactly the un-acked offsets of one
// pop come back.
func TestACK04_PartialAcksExactRedelivery(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 8, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 8, invisible: 10000})
	require.Len(t, ms, 8)
	for i := 0; i < 8; i += 2 {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[i]))
	}
	got := redeliveries(t, h, "G", "T", 11*time.Second)
	require.ElementsMatch(t, []string{"m-1", "m-3", "m-5", "m-7"}, bodies(got))
}

// TestACK05_FailedWritesNeverReportSuccess: with the store refusing a
// write, POP answers an error and delivers nothing, ACK answers an error
// and the message is redelivered after its invisible time.
func TestACK05_FailedWritesNeverReportSuccess(t *testing.T) {
	f := &faultHook{}
	h := startHookedHarness(t, f.hook)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	// The group's configuration and retry topic exist (as after its first
	// heartbeat), so the injected fault hits the POP's own write.
	h.b().Groups.Find("G")
	_, err := h.b().Topics.EnsureRetryTopic("G", meta.RetryQueueNums)
	require.NoError(t, err)
	eventually(t, func() bool {
		_, ok := h.b().Store.Group("G")
		return ok && slices.ContainsFunc(h.b().Store.Topics(), func(m popstore.TopicMeta) bool { return m.TopicName == "%RETRY%G" })
	}, "group and retry topic stored")

	f.failNext.Store(1)
	resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 10000})
	require.Equal(t, codec.SystemError, resp.Code)
	require.Empty(t, ms)
	require.Empty(t, resp.Body)
	require.Zero(t, h.b().Svc.HeldLocks())

	_, ms = pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 10000})
	require.Equal(t, []string{"m"}, bodies(ms), "the failed pop consumed nothing")

	f.failNext.Store(1)
	require.Equal(t, codec.SystemError, ack(t, c, "G", "T", ms[0]))
	require.EqualValues(t, 2, f.failed.Load())
	require.Equal(t, []string{"m"}, bodies(redeliveries(t, h, "G", "T", 11*time.Second)))
}

// TestACK07_RedeliveryCounters: each redelivery carries reconsumeTimes + 1,
// the original body, properties and msgId, and 1ST_POP_TIME of the first
// pop; an ACK of the retry copy with the retry topic ends it.
func TestACK07_RedeliveryCounters(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sent := send(t, c, "T", 0, "body", sendOpts{props: map[string]string{"k": "v"}, tag: "TG"})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 3000})
	require.Len(t, ms, 1)
	first := ms[0]
	require.EqualValues(t, 0, first.m.ReconsumeTimes)
	p1 := first.handle.PopTime
	uniq := first.m.MsgID()

	cur := first
	for round := int32(1); round <= 2; round++ {
		h.advance(4 * time.Second)
		h.reviveNow()
		resp, got := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 3000})
		require.Equal(t, codec.Success, resp.Code, "round %d: %s", round, resp.Remark)
		require.Len(t, got, 1)
		cur = got[0]
		require.Equal(t, "body", cur.body())
		require.Equal(t, round, cur.m.ReconsumeTimes)
		require.Equal(t, uniq, cur.m.MsgID())
		require.Equal(t, "T", cur.m.Topic, "retry messages are returned under the original topic")
		v, _ := cur.m.Property("k")
		require.Equal(t, "v", v)
		tag, _ := cur.m.Property(codec.PropertyTags)
		require.Equal(t, "TG", tag)
		fp, _ := cur.m.Property(codec.PropertyFirstPopTime)
		require.Equal(t, strconv.FormatInt(p1, 10), fp)
		require.Equal(t, codec.RetryFlagV2, cur.handle.RetryFlag)
	}
	require.NotEqual(t, sent.MsgID, "")
	req := ackReq("G", "T", cur)
	require.Equal(t, codec.PopRetryTopicV2("G", "T"), req.ExtFields["topic"])
	require.Equal(t, codec.Success, call(t, c, req).Code)
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 4*time.Second)))
}

// TestACK08_UndecodableHandle: malformed or foreign handles get a
// definite answer (MESSAGE_ILLEGAL / NO_MESSAGE), never touch another
// message, and leave the connection usable.
func TestACK08_UndecodableHandle(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 2, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 10000})
	require.Len(t, ms, 2)
	good := ms[0]
	e := good.handle
	mk := func(s string) popped { p := good; p.raw = s; return p }
	cases := []struct {
		name  string
		p     popped
		queue int32
		off   int64
		code  int32
	}{
		{"three fields", mk("0 1 2"), 0, e.QueueOffset, codec.MessageIllegal},
		{"non-numeric popTime", mk(strings.Replace(good.raw, strconv.FormatInt(e.PopTime, 10), "abc", 1)), 0, e.QueueOffset, codec.MessageIllegal},
		{"other broker", mk(strings.Replace(good.raw, testBrokerName, "broker-x", 1)), 0, e.QueueOffset, codec.MessageIllegal},
		{"reviveQid 5", mk(fmt.Sprintf("%d %d %d 5 0 %s 0 %d", e.CkQueueOffset, e.PopTime, e.InvisibleTime, testBrokerName, e.QueueOffset)), 0, e.QueueOffset, codec.MessageIllegal},
		{"empty", mk(""), 0, e.QueueOffset, codec.MessageIllegal},
		{"queueId out of range", good, 1, e.QueueOffset, codec.MessageIllegal},
		{"offset above max", good, 0, 3, codec.NoMessage},
		{"handle names another offset", good, 0, 1, codec.MessageIllegal},
	}
	for _, tc := range cases {
		for _, isChange := range []bool{false, true} {
			var req *codec.Command
			if isChange {
				req = changeReq("G", "T", tc.p, 1000)
			} else {
				req = ackReq("G", "T", tc.p)
			}
			req.ExtFields["queueId"] = strconv.Itoa(int(tc.queue))
			req.ExtFields["offset"] = strconv.FormatInt(tc.off, 10)
			resp := call(t, c, req)
			require.Equal(t, tc.code, resp.Code, "%s (change=%v): %s", tc.name, isChange, resp.Remark)
			require.NotEmpty(t, resp.Remark)
		}
	}
	// The connection still works and nothing was acked: both come back.
	require.ElementsMatch(t, []string{"m-0", "m-1"}, bodies(redeliveries(t, h, "G", "T", 11*time.Second)))
}

// TestACK10_AckOnAnotherConnection: ACK, CHANGE and BATCH_ACK work on a
// fresh connection that never sent a heartbeat.
func TestACK10_AckOnAnotherConnection(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	a := h.dial()
	sendN(t, a, "T", 0, 3, "m", sendOpts{})
	_, ms := pop(t, a, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 10000})
	require.Len(t, ms, 3)
	require.NoError(t, a.Close())

	b := h.dial()
	require.Equal(t, codec.Success, ack(t, b, "G", "T", ms[0]))
	resp, changed := change(t, b, "G", "T", ms[1], 20000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, codec.Success, ack(t, b, "G", "T", changed))
	resp = call(t, b, batchAckReq(t, "G", "T", []popped{ms[2]}))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 25*time.Second)))
}
