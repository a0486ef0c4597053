package handler_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Orderly (FIFO) POP: docs/SCENARIOS.md ORD-01, ORD-02,
// CHG-05, BAT-02, POLL-03, POLL-04.

// orderPopReq is an orderly POP of a with attemptId attempt ("" none).
func orderPopReq(a popArgs, attempt string) *codec.Command {
	a.order = true
	req := a.request()
	if attempt != "" {
		req.ExtFields["attemptId"] = attempt
	}
	return req
}

// orderPop sends an orderly POP and parses a SUCCESS answer; it checks the
// answer carries reviveQid 999 and returns the orderCountInfo parsed.
func orderPop(t *testing.T, c *client.Conn, a popArgs, attempt string) (int32, []popped, map[codec.OrderCountKey]int32) {
	t.Helper()
	resp := call(t, c, orderPopReq(a, attempt))
	if resp.Code != codec.Success {
		return resp.Code, nil, nil
	}
	hdr, err := codec.DecodePopMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	require.EqualValues(t, codec.PopOrderReviveQueue, hdr.ReviveQid)
	counts, err := codec.ParseOrderCountInfo(hdr.OrderCountInfo)
	require.NoError(t, err)
	ms := parsePop(t, resp)
	for _, m := range ms {
		require.True(t, m.handle.IsOrder(), "orderly receipt without reviveQid 999")
		// The Java client keeps the record's reconsumeTimes when POP_CK is
		// present: it must equal the orderCountInfo count.
		require.Equal(t, reconsumeTimes(counts, m), m.m.ReconsumeTimes, "record reconsumeTimes of %s", m.body())
	}
	return resp.Code, ms, counts
}

// reconsumeTimes is what the Java client sets on m from counts
// (MQClientAPIImpl.processPopResponse).
func reconsumeTimes(counts map[codec.OrderCountKey]int32, m popped) int32 {
	if n, ok := counts[codec.OrderCountKey{QueueID: m.m.QueueID, QueueOffset: m.m.QueueOffset, HasOffset: true}]; ok {
		return n
	}
	return counts[codec.OrderCountKey{QueueID: m.m.QueueID}]
}

func orderSetup(t *testing.T, n int) (*harness, *client.Conn) {
	t.Helper()
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, n, "m", sendOpts{})
	return h, c
}

var q0 = popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 10000}

func TestOrder_BlockedUntilAllAckedThenNextInOrder(t *testing.T) {
	h, c := orderSetup(t, 5)
	code, ms, counts := orderPop(t, c, q0, "A")
	require.Equal(t, codec.Success, code)
	require.Equal(t, []string{"m-0", "m-1"}, bodies(ms))
	require.Zero(t, reconsumeTimes(counts, ms[0]))
	require.EqualValues(t, 0, committedOffset(h, "G", "T", 0), "consume offset stays at the first leased message")

	code, _, _ = orderPop(t, c, q0, "B")
	require.Equal(t, codec.PollingTimeout, code, "a different attempt must see the queue blocked")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	require.EqualValues(t, 1, committedOffset(h, "G", "T", 0), "the ACK commits past the acked prefix")
	code, _, _ = orderPop(t, c, q0, "B")
	require.Equal(t, codec.PollingTimeout, code, "m-1 is still leased")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[1]))
	require.EqualValues(t, 2, committedOffset(h, "G", "T", 0))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[1]), "re-ACK below the consume offset")

	code, ms, _ = orderPop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 10000}, "B")
	require.Equal(t, codec.Success, code)
	require.Equal(t, []string{"m-2", "m-3", "m-4"}, bodies(ms))
}

func TestOrder_ExpiryRedeliversSameOffsetsCounted(t *testing.T) {
	h, c := orderSetup(t, 3)
	_, first, _ := orderPop(t, c, q0, "A")
	require.Len(t, first, 2)
	h.advance(11 * time.Second)
	code, again, counts := orderPop(t, c, q0, "B")
	require.Equal(t, codec.Success, code)
	require.Equal(t, []string{"m-0", "m-1"}, bodies(again))
	for _, m := range again {
		require.EqualValues(t, 1, reconsumeTimes(counts, m))
	}
	// The first lease's receipts are stale now: SUCCESS, no effect.
	require.Equal(t, codec.Success, ack(t, c, "G", "T", first[0]))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", first[1]))
	require.EqualValues(t, 0, committedOffset(h, "G", "T", 0))
	code, _, _ = orderPop(t, c, q0, "C")
	require.Equal(t, codec.PollingTimeout, code)

	h.advance(11 * time.Second)
	_, third, counts := orderPop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 10000}, "D")
	require.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(third))
	require.Equal(t, []int32{2, 2, 0}, []int32{reconsumeTimes(counts, third[0]), reconsumeTimes(counts, third[1]), reconsumeTimes(counts, third[2])})
	require.EqualValues(t, 0, counts[codec.OrderCountKey{QueueID: 0}], "the per-queue entry is the minimum count")
}

// TestOrder_AttemptReentrant is ORD-01: a retry with the same attemptId
// gets the same messages without an attempt counted, also under 10
// concurrent retries; another attempt gets nothing while the lease lives.
// Each re-entrant POP replaces the lease's popTime (as Java), so an ACK with
// an earlier popTime of the same attempt is SUCCESS without effect.
func TestOrder_AttemptReentrant(t *testing.T) {
	h, c := orderSetup(t, 5)
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 30000}
	_, lost, _ := orderPop(t, c, a, "A")
	require.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(lost))
	_, again, counts := orderPop(t, c, a, "A")
	require.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(again))
	require.Zero(t, reconsumeTimes(counts, again[0]), "a re-entrant retry is not an attempt")
	code, _, _ := orderPop(t, c, a, "B")
	require.Equal(t, codec.PollingTimeout, code)

	var wg sync.WaitGroup
	results := make([][]string, 10)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := call(t, h.dial(), orderPopReq(popArgs{group: "G", topic: "T", queueID: -1, max: 3, invisible: 30000}, "A"))
			if resp.Code == codec.Success {
				ms, err := codec.DecodeMessages(resp.Body)
				if err == nil {
					for _, m := range ms {
						results[i] = append(results[i], string(m.Body))
					}
				}
			}
		}()
	}
	wg.Wait()
	for i, r := range results {
		require.Equal(t, []string{"m-0", "m-1", "m-2"}, r, "concurrent same-attempt retry %d", i)
	}
	_, latest, _ := orderPop(t, c, a, "A")
	for _, m := range lost {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m), "stale popTime: SUCCESS")
	}
	code, _, _ = orderPop(t, c, a, "B")
	require.Equal(t, codec.PollingTimeout, code, "ACKs with an earlier popTime have no effect")
	for _, m := range latest {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	_, next, _ := orderPop(t, c, a, "B")
	require.Equal(t, []string{"m-3", "m-4"}, bodies(next))

	// An empty queue keeps the attempt usable: repeat, then a new message.
	for _, m := range next {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	for range 5 {
		code, _, _ = orderPop(t, c, a, "Z")
		require.Equal(t, codec.PollingTimeout, code)
	}
	send(t, c, "T", 0, "m-5", sendOpts{})
	_, last, _ := orderPop(t, c, a, "Z")
	require.Equal(t, []string{"m-5"}, bodies(last))
}

func TestOrder_AckIllegalOffset(t *testing.T) {
	_, c := orderSetup(t, 4)
	_, ms, _ := orderPop(t, c, q0, "A")
	forged := ms[1]
	forged.handle.QueueOffset = 3 // stored, not in the lease
	forged.raw = forged.handle.String()
	resp := call(t, c, ackReq("G", "T", forged))
	require.Equal(t, codec.MessageIllegal, resp.Code, resp.Remark)
	// A lease-less queue of another group: illegal too.
	other := ms[0]
	resp = call(t, c, ackReq("G2", "T", other))
	require.Equal(t, codec.MessageIllegal, resp.Code, resp.Remark)
}

// TestOrder_ChangeExtendsBlock is CHG-05.
func TestOrder_ChangeExtendsBlock(t *testing.T) {
	h, c := orderSetup(t, 2)
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 10000}
	_, ms, _ := orderPop(t, c, a, "A")
	require.Equal(t, []string{"m-0"}, bodies(ms))
	h.advance(5 * time.Second)
	resp, changed := change(t, c, "G", "T", ms[0], 20000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, ms[0].handle.PopTime, changed.handle.PopTime, "orderly CHANGE answers the original popTime")
	require.EqualValues(t, codec.PopOrderReviveQueue, changed.handle.ReviveQid)
	require.InDelta(t, 25000, changed.handle.InvisibleTime, 1000, "invisibleTime = new deadline − popTime")
	h.advance(7 * time.Second) // t = 12 s
	code, _, _ := orderPop(t, c, a, "B")
	require.Equal(t, codec.PollingTimeout, code, "m-0 leased until 25 s")
	h.advance(14 * time.Second) // t = 26 s
	_, again, counts := orderPop(t, c, a, "C")
	require.Equal(t, []string{"m-0"}, bodies(again))
	require.EqualValues(t, 1, reconsumeTimes(counts, again[0]))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", again[0]))
	_, next, _ := orderPop(t, c, a, "C")
	require.Equal(t, []string{"m-1"}, bodies(next))

	// CHANGE to 0 unblocks at once.
	_, ch := change(t, c, "G", "T", next[0], 0)
	_, redo, _ := orderPop(t, c, a, "D")
	require.Equal(t, []string{"m-1"}, bodies(redo))
	_ = ch
}

// TestOrder_BatchAck is BAT-02.
func TestOrder_BatchAck(t *testing.T) {
	h, c := orderSetup(t, 4)
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 30000}
	_, ms, _ := orderPop(t, c, a, "A")
	require.Len(t, ms, 3)
	resp := call(t, c, batchAckReq(t, "G", "T", ms))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.EqualValues(t, 3, committedOffset(h, "G", "T", 0))
	_, next, _ := orderPop(t, c, a, "B")
	require.Equal(t, []string{"m-3"}, bodies(next))
}

// TestOrder_TwoConsumersNeverOverlap is ORD-02 over 4 queues: whatever the
// interleaving, each queue's messages arrive in offset order and no offset
// is leased to two consumers at once.
func TestOrder_TwoConsumersNeverOverlap(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 4)
	c := h.dial()
	for q := range int32(4) {
		sendN(t, c, "T", q, 20, fmt.Sprintf("q%d", q), sendOpts{})
	}
	var mu sync.Mutex
	seen := map[int32][]int64{}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := h.dial()
			for i := 0; i < 200; i++ {
				resp := call(t, cc, orderPopReq(popArgs{group: "G", topic: "T", queueID: -1, max: 3, invisible: 30000}, fmt.Sprintf("w%d-%d", w, i)))
				if resp.Code != codec.Success {
					mu.Lock()
					n := 0
					for _, l := range seen {
						n += len(l)
					}
					mu.Unlock()
					if n == 80 {
						return
					}
					continue
				}
				ms := parsePop(t, resp)
				mu.Lock()
				for _, m := range ms {
					seen[m.m.QueueID] = append(seen[m.m.QueueID], m.m.QueueOffset)
				}
				mu.Unlock()
				for _, m := range ms {
					if code := ack(t, cc, "G", "T", m); code != codec.Success {
						t.Errorf("ack: %d", code)
					}
				}
			}
		}()
	}
	wg.Wait()
	for q := range int32(4) {
		want := make([]int64, 20)
		for i := range want {
			want[i] = int64(i)
		}
		require.Equal(t, want, seen[q], "queue %d", q)
	}
}

// TestOrder_SuspendMidBatch: the consumer acks the head of a batch and
// CHANGEs the rest to a short time (SUSPEND_CURRENT_QUEUE_A_MOMENT); the
// rest comes back, in order, counted once.
func TestOrder_SuspendMidBatch(t *testing.T) {
	h, c := orderSetup(t, 4)
	a := popArgs{group: "G", topic: "T", queueID: -1, max: 4, invisible: 10000}
	_, ms, _ := orderPop(t, c, a, "A")
	require.Len(t, ms, 4)
	for _, m := range ms[1:] {
		resp, _ := change(t, c, "G", "T", m, 1000)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
	}
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	code, _, _ := orderPop(t, c, a, "B")
	require.Equal(t, codec.PollingTimeout, code)
	h.advance(1100 * time.Millisecond)
	_, again, counts := orderPop(t, c, a, "B")
	require.Equal(t, []string{"m-1", "m-2", "m-3"}, bodies(again))
	for _, m := range again {
		require.EqualValues(t, 1, reconsumeTimes(counts, m), "%s", m.body())
	}
}

// TestOrder_MaxReconsumeToDLQ: past its max attempts an orderly message
// goes to the DLQ as the proxy sends it for FIFO groups
// (ProducerProcessor.forwardMessageToDeadLetterQueue: CONSUMER_SEND_MSG_BACK
// with delayLevel -1, then ACK of the orderly receipt); the queue moves on
// to the next message in order.
func TestOrder_MaxReconsumeToDLQ(t *testing.T) {
	h, c := orderSetup(t, 2)
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 1000}
	var ms []popped
	for attempt := range 3 {
		if attempt > 0 {
			h.advance(1100 * time.Millisecond)
		}
		var counts map[codec.OrderCountKey]int32
		_, ms, counts = orderPop(t, c, a, fmt.Sprint("A", attempt))
		require.Equal(t, []string{"m-0"}, bodies(ms))
		require.EqualValues(t, attempt, reconsumeTimes(counts, ms[0]))
	}
	// reconsumeTimes 2 reached the group's limit (say 2): to the DLQ.
	first := ms[0]
	hdr := codec.ConsumerSendMsgBackRequestHeader{Offset: ms[0].m.PhysicalOffset, Group: "G", DelayLevel: -1,
		OriginMsgID: ms[0].m.MsgID(), OriginTopic: "T", MaxReconsumeTimes: 0, HasMaxReconsumeTimes: true}
	req := codec.NewRequest(codec.RequestConsumerSendMsgBack, 0, nil, nil)
	hdr.Encode(req)
	resp := call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	code, _, _ := orderPop(t, c, a, "B")
	require.Equal(t, codec.PollingTimeout, code, "still leased until the ACK")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", first))
	_, next, _ := orderPop(t, c, a, "C")
	require.Equal(t, []string{"m-1"}, bodies(next))
	require.EqualValues(t, 1, h.b().Store.MaxOffset(codec.DLQTopic("G"), 0), "m-0 in the DLQ")
}

// TestOrder_FilteredOnlyNonMatchingCommitsAtOnce is ORD-04: an orderly POP
// whose scan finds only messages its filter rejects commits past them in
// its own write, so the next POP neither rescans nor replays; the matching
// messages are delivered once, in order, and the consume offset never goes
// backwards.
func TestOrder_FilteredOnlyNonMatchingCommitsAtOnce(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 10, "b", sendOpts{tag: "B"})
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "A"}
	code, _, _ := orderPop(t, c, a, "X")
	require.Equal(t, codec.PollingTimeout, code)
	require.EqualValues(t, 10, committedOffset(h, "G", "T", 0), "filtered messages consumed by the orderly POP's write")
	sendN(t, c, "T", 0, 2, "a", sendOpts{tag: "A"})
	_, ms, _ := orderPop(t, c, a, "Y")
	require.Equal(t, []string{"a-0", "a-1"}, bodies(ms))
	require.EqualValues(t, 10, committedOffset(h, "G", "T", 0))
	for _, m := range ms {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	require.EqualValues(t, 12, committedOffset(h, "G", "T", 0))
	code, _, _ = orderPop(t, c, a, "Z")
	require.Equal(t, codec.PollingTimeout, code, "nothing replayed")
}
