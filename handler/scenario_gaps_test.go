package handler_test

// Scenario tests (docs/SCENARIOS.md) for cases the other
// suites covered only in part: retry copies on named queues and under tag
// filters, CHANGE of a retry copy, stale handles after CHANGE and revive,
// mixed single/batch ACKs, failed CHANGE and BATCH_ACK writes, and the
// retry topic's offset across a restart.

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestPOLL05_RetryViaNamedQueue: a revived message also comes back to a
// POP that names a queueId (the Java client pops assigned queues), and to a
// long poll parked on that queueId.
func TestPOLL05_RetryViaNamedQueue(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 5000})
	require.Len(t, ms, 1)
	h.advance(6 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 5000}, 1)
	require.Equal(t, []string{"m"}, bodies(got), "queueId 0 POP must see the retry copy")
	require.EqualValues(t, 1, got[0].m.ReconsumeTimes)

	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 1, max: 1, invisible: 5000, poll: 15000})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "poll parked")
	h.advance(6 * time.Second)
	h.reviveNow()
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	got = parsePop(t, r)
	require.Equal(t, []string{"m"}, bodies(got))
	require.EqualValues(t, 2, got[0].m.ReconsumeTimes)
}

// TestCHG02_ChangeOnRetryCopyKeepsCounting: CHANGE of a redelivered message (header
// topic = retry topic) keeps counting: the next redelivery has
// reconsumeTimes 2 and the first 1ST_POP_TIME; an ACK with the changed
// handle ends it.
func TestCHG02_ChangeOnRetryCopyKeepsCounting(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{tag: "A"}, 3000)
	p1 := ms[0].handle.PopTime
	h.advance(4 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 3000}, 1)
	require.Len(t, got, 1)
	require.Equal(t, codec.RetryFlagV2, got[0].handle.RetryFlag)

	req := changeReq("G", "T", got[0], 8000)
	require.Equal(t, codec.PopRetryTopicV2("G", "T"), req.ExtFields["topic"])
	resp, _ := change(t, c, "G", "T", got[0], 8000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)

	h.advance(4 * time.Second) // past the old deadline, before the new one
	h.reviveNow()
	early := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 3000}, 1)
	require.Empty(t, bodies(early), "redelivered before the changed deadline")

	h.advance(5 * time.Second)
	h.reviveNow()
	again := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 3000}, 2)
	require.Equal(t, []string{"m"}, bodies(again))
	require.EqualValues(t, 2, again[0].m.ReconsumeTimes)
	fp, _ := again[0].m.Property(codec.PropertyFirstPopTime)
	require.Equal(t, strconv.FormatInt(p1, 10), fp)
	tag, _ := again[0].m.Property(codec.PropertyTags)
	require.Equal(t, "A", tag)

	// Changed handle of the second redelivery, then ACK with it.
	resp, np := change(t, c, "G", "T", again[0], 8000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", np))
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 20*time.Second)))
}

// TestRET_TagFilterOnRetryCopy: a consumer subscribed to tag A gets its
// revived tag-A message back; a tag-B message revived for the same group is
// not delivered to an A-only POP.
func TestRET_TagFilterOnRetryCopy(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "a", sendOpts{tag: "A"})
	send(t, c, "T", 0, "b", sendOpts{tag: "B"})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 3000})
	require.Len(t, ms, 2)
	h.advance(4 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000, exp: "A"}, 5)
	require.Equal(t, []string{"a"}, bodies(got))
}

// TestACK04_MixedSingleAndBatchAck (ACK-04): the same pop acked partly by
// single ACKs and partly by one BATCH_ACK: exactly the rest comes back.
func TestACK04_MixedSingleAndBatchAck(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 8, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 8, invisible: 10000})
	require.Len(t, ms, 8)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[2]))
	r := call(t, c, batchAckReq(t, "G", "T", []popped{ms[4], ms[6]}))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	got := redeliveries(t, h, "G", "T", 11*time.Second)
	require.ElementsMatch(t, []string{"m-1", "m-3", "m-5", "m-7"}, bodies(got))
}

// TestORD_OrderlyPopHoldsNoLockAndOrderlyBatchAckNeedsALease: an orderly
// POP answers with reviveQid 999 and holds no queue lock afterwards; an
// orderly BATCH_ACK entry (rq 999) for offsets below the group's consume
// offset (here a normal POP's handles) acks nothing and answers SUCCESS, as
// Java's ackOrderlyNew.
func TestORD_OrderlyPopHoldsNoLockAndOrderlyBatchAckNeedsALease(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	resp, om := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 10000, order: true})
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, []string{"m-0"}, bodies(om))
	require.Zero(t, h.b().Svc.HeldLocks())
	_, ms := pop(t, c, popArgs{group: "G2", topic: "T", queueID: 0, max: 3, invisible: 10000})
	require.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(ms))
	body := `{"brokerName":"` + testBrokerName + `","acks":[{"c":"G2","t":"T","r":"0","so":0,"q":0,"rq":999,"pt":` +
		itoa(ms[0].handle.PopTime) + `,"it":10000,"b":"Bw=="}]}`
	r := call(t, c, codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, []byte(body)))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	got := redeliveries(t, h, "G2", "T", 11*time.Second)
	require.ElementsMatch(t, []string{"m-0", "m-1", "m-2"}, bodies(got))
}

// TestACK03_StaleHandleAfterChange (ACK by exact key): an ACK carrying the
// handle from before a CHANGE answers SUCCESS but leaves the changed record:
// the message still comes back after the new deadline, once.
func TestACK03_StaleHandleAfterChange(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 10000)
	resp, _ := change(t, c, "G", "T", ms[0], 20000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]), "stale ACK is blind SUCCESS")
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 11*time.Second)), "nothing before the changed deadline")
	got := redeliveries(t, h, "G", "T", 10*time.Second)
	require.Equal(t, []string{"m"}, bodies(got), "the changed record must survive the stale ACK")
}

// TestACK03_StaleHandleOfRetryCopy (ACK by exact key): after a revive, ACKing
// the first delivery's handle does not cancel the retry copy's lease.
func TestACK03_StaleHandleOfRetryCopy(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 3000)
	h.advance(4 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 3000}, 1)
	require.Len(t, got, 1)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]), "late ACK of the first handle")
	again := redeliveries(t, h, "G", "T", 4*time.Second)
	require.Equal(t, []string{"m"}, bodies(again))
	require.EqualValues(t, 2, again[0].m.ReconsumeTimes)
}

// TestPOP01_RetryOffsetSurvivesRestart (POP-01 for the retry topic): acked
// retry copies are not delivered again after a restart.
func TestPOP01_RetryOffsetSurvivesRestart(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 1000})
	require.Len(t, ms, 3)
	h.advance(2 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 3)
	require.Len(t, got, 3)
	for _, m := range got {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	h.restart()
	c = h.dial()
	resp, after := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000})
	require.Equal(t, codec.PollingTimeout, resp.Code, "redelivered after restart: %v", bodies(after))
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 61*time.Second)))
}

// TestACK05_FailedChangeAndBatchAck (ACK-05 for CHANGE and BATCH_ACK): a
// failed write answers non-zero and leaves the old lease in force: the
// message comes back at the OLD deadline; a failed BATCH_ACK acks nothing.
func TestACK05_FailedChangeAndBatchAck(t *testing.T) {
	f := &faultHook{}
	h := startHookedHarness(t, f.hook)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 10000})
	require.Len(t, ms, 3)

	f.failNext.Store(1)
	resp, _ := change(t, c, "G", "T", ms[0], 60000)
	require.NotEqual(t, codec.Success, resp.Code, "CHANGE reported success for a failed write")
	f.failNext.Store(1)
	r := call(t, c, batchAckReq(t, "G", "T", ms[1:]))
	require.NotEqual(t, codec.Success, r.Code, "BATCH_ACK reported success for a failed write")
	require.EqualValues(t, 2, f.failed.Load())

	got := redeliveries(t, h, "G", "T", 11*time.Second)
	require.ElementsMatch(t, []string{"m-0", "m-1", "m-2"}, bodies(got), "old leases still in force")
}

// TestPOLL05_FilteredParkedPopWokenByRevive (POLL-05 with a tag filter): a
// long poll with exp "A" parked when the tag-A message is revived gets it.
func TestPOLL05_FilteredParkedPopWokenByRevive(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "a", sendOpts{tag: "A"})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 5000, exp: "A"})
	require.Len(t, ms, 1)
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 5000, poll: 15000, exp: "A"})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "poll parked")
	h.advance(6 * time.Second)
	h.reviveNow()
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"a"}, bodies(parsePop(t, r)))
}
