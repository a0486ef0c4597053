package handler_test

// POP fetch path scenarios (docs/SCENARIOS.md POP-*).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// popAndAckAll pops queue 0 of topic (batches of 32, no long poll) and acks
// everything until n messages were acked.
func popAndAckAll(t *testing.T, h *harness, group, topic string, n int) {
	t.Helper()
	c := h.dial()
	acked := 0
	for acked < n {
		resp, ms := pop(t, c, popArgs{group: group, topic: topic, queueID: 0, max: 32, invisible: 60000})
		require.Equal(t, codec.Success, resp.Code, "after %d acks: %s", acked, resp.Remark)
		for _, m := range ms {
			require.Equal(t, codec.Success, ack(t, c, group, topic, m))
			acked++
		}
	}
	require.Equal(t, n, acked)
}

// TestPOP01_RestartKeepsOffset: offsets committed by POP survive a clean
// restart; the first POP after it returns nothing, never acked messages.
func TestPOP01_RestartKeepsOffset(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	sendBatch(t, h.dial(), "T", 0, "m", 0, 100, "")
	popAndAckAll(t, h, "G", "T", 100)
	require.EqualValues(t, 100, committedOffset(h, "G", "T", 0))

	h.restart()
	resp, ms := pop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
	require.Equal(t, codec.PollingTimeout, resp.Code, "got %v", bodies(ms))
	require.EqualValues(t, 100, committedOffset(h, "G", "T", 0))
}

// TestPOP01_KillKeepsOffset: the same after kill -9 of a child process.
func TestPOP01_KillKeepsOffset(t *testing.T) {
	dir := t.TempDir()
	child := startChild(t, dir)
	c := dialAddr(t, child.addr)
	createTopicRemote(t, c, "T", 1)
	sendBatch(t, c, "T", 0, "m", 0, 100, "")
	acked := 0
	for acked < 100 {
		resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		for _, m := range ms {
			require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
			acked++
		}
	}
	child.kill(t)

	h := startHarnessIn(t, dir)
	resp, ms := pop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
	require.Equal(t, codec.PollingTimeout, resp.Code, "got %v", bodies(ms))
	require.EqualValues(t, 100, committedOffset(h, "G", "T", 0))
}

// TestPOP02_LockReleasedOnEveryPath drives the early-return paths of POP
// (empty queue, everything filtered out, offset below the queue's min) and
// checks that no queue lock survives any of them.
func TestPOP02_LockReleasedOnEveryPath(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 30000}

	resp, _ := pop(t, c, a) // empty queue
	require.Equal(t, codec.PollingTimeout, resp.Code)
	require.Zero(t, h.b().Svc.HeldLocks())

	send(t, c, "T", 0, "y", sendOpts{tag: "Y"})
	f := a
	f.exp = "X"
	resp, _ = pop(t, c, f) // every message filtered out
	require.Equal(t, codec.PollingTimeout, resp.Code)
	require.Zero(t, h.b().Svc.HeldLocks())
	require.EqualValues(t, 1, committedOffset(h, "G", "T", 0), "the filtered message is passed over")

	sendN(t, c, "T", 0, 3, "z", sendOpts{})
	require.NoError(t, h.st.Writer.SubmitWait(batch.LaneBackground, func(tx *popstore.Txn) error {
		return tx.TrimQueue("T", 0, 3) // offset 1 of G is now below min
	}))
	resp, ms := pop(t, c, a)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, []string{"z-2"}, bodies(ms))
	require.Zero(t, h.b().Svc.HeldLocks())

	send(t, c, "T", 0, "now", sendOpts{})
	one := a
	one.max = 1
	resp, ms = pop(t, c, one)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, []string{"now"}, bodies(ms))
	require.Zero(t, h.b().Svc.HeldLocks())
}

// TestPOP03_NoInflightCapQueueStaysServed: popshim has no in-flight cap,
// so a queue with un-acked messages keeps serving the next ones, and after
// the acks the following batch comes at once.
func TestPOP03_NoInflightCapQueueStaysServed(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 20, "m", sendOpts{})
	a := popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 60000}
	_, first := pop(t, c, a)
	require.Equal(t, []string{"m-0", "m-1", "m-2", "m-3"}, bodies(first))
	_, second := pop(t, c, a)
	require.Equal(t, []string{"m-4", "m-5", "m-6", "m-7"}, bodies(second))
	for _, m := range append(first, second...) {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	_, third := pop(t, c, a)
	require.Equal(t, []string{"m-8", "m-9", "m-10", "m-11"}, bodies(third))
	require.Zero(t, h.b().Svc.HeldLocks())
}

// TestPOP04_InitMode: a new group starts at the min offset (initMode MIN);
// with MAX at offset 0 while the queue is hot (its first message within
// the in-memory window of the commit log's end: RocketMQ's in-memory
// shortcut) and at the last message otherwise. The start is persisted on
// first use, and a later initMode does not re-initialise.
func TestPOP04_InitMode(t *testing.T) {
	h := startHarness(t, nil)
	h.b().Svc.Settings.InMemoryBytes = 4 << 10
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 10, "m", sendOpts{})

	_, ms := pop(t, c, popArgs{group: "G1", topic: "T", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMin})
	require.Len(t, ms, 10)
	require.Equal(t, "m-0", ms[0].body())

	_, ms = pop(t, c, popArgs{group: "G4", topic: "T", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMax})
	require.Len(t, ms, 10, "hot queue: MAX starts at 0 like a Java broker with the data in page cache")

	h.createTopic("F", 1)
	sendN(t, c, "F", 0, 10, strings.Repeat("f", 512), sendOpts{}) // offset 0 of T is no longer "in memory"
	_, ms = pop(t, c, popArgs{group: "G2", topic: "T", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMax})
	require.Equal(t, []string{"m-9"}, bodies(ms))
	require.EqualValues(t, 9, ms[0].m.QueueOffset)
	require.EqualValues(t, 10, committedOffset(h, "G2", "T", 0))

	send(t, c, "T", 0, "m-10", sendOpts{})
	_, ms = pop(t, c, popArgs{group: "G2", topic: "T", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMin})
	require.Equal(t, []string{"m-10"}, bodies(ms), "initMode must not apply once the group has an offset")

	// An empty queue: MAX starts at 0 and that start is persisted.
	h.createTopic("E", 1)
	resp, _ := pop(t, c, popArgs{group: "G3", topic: "E", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMax})
	require.Equal(t, codec.PollingTimeout, resp.Code)
	require.EqualValues(t, 0, committedOffset(h, "G3", "E", 0))
	sendN(t, c, "E", 0, 2, "e", sendOpts{})
	_, ms = pop(t, c, popArgs{group: "G3", topic: "E", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMax})
	require.Equal(t, []string{"e-0", "e-1"}, bodies(ms))
}

// TestPOP05_QueueIdsAbove127: checkpoints keep the full 32-bit queueId; only
// the un-acked messages of queues 127 and 200 come back.
func TestPOP05_QueueIdsAbove127(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 256)
	c := h.dial()
	byQueue := map[int32]popped{}
	for _, q := range []int32{127, 128, 200, 255} {
		send(t, c, "T", q, "q"+strconv.Itoa(int(q)), sendOpts{})
		_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: q, max: 1, invisible: 10000})
		require.Len(t, ms, 1)
		require.Equal(t, q, ms[0].handle.QueueID)
		byQueue[q] = ms[0]
	}
	require.Equal(t, codec.Success, ack(t, c, "G", "T", byQueue[128]))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", byQueue[255]))
	h.advance(11 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 10000}, 10)
	require.ElementsMatch(t, []string{"q127", "q200"}, bodies(got))
	for _, m := range got {
		require.NotEqual(t, codec.RetryFlagNormal, m.handle.RetryFlag)
		require.EqualValues(t, 1, m.m.ReconsumeTimes)
	}
}

// TestPOP06_ConcurrentChangesSameHandle: 50 concurrent CHANGEs of one handle
// leave one in-flight record: exactly one answers SUCCESS (the others
// NO_MESSAGE, with no handle), the message is redelivered exactly once,
// and the queue keeps working.
func TestPOP06_ConcurrentChangesSameHandle(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 60000)

	const n = 50
	type res struct {
		code int32
		err  error
	}
	results := make(chan res, n)
	for i := range n {
		cc := c
		if i%2 == 1 {
			cc = h.dial()
		}
		err := cc.InvokeAsync(changeReq("G", "T", ms[0], 5000), func(r *codec.Command, err error) {
			if err != nil {
				results <- res{err: err}
				return
			}
			results <- res{code: r.Code}
		})
		require.NoError(t, err)
	}
	won := 0
	for range n {
		r := <-results
		require.NoError(t, r.err)
		if r.code == codec.Success {
			won++
			continue
		}
		require.Equal(t, codec.NoMessage, r.code, "a CHANGE that found no lease answers NO_MESSAGE")
	}
	require.Equal(t, 1, won, "exactly one CHANGE of the handle takes the lease")
	h.advance(6 * time.Second)
	h.reviveNow()
	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 5)
	require.Equal(t, []string{"m"}, bodies(got), "redelivered once")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", got[0]))

	send(t, c, "T", 0, "next", sendOpts{})
	_, ms = pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 60000})
	require.Equal(t, []string{"next"}, bodies(ms))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	require.EqualValues(t, 2, committedOffset(h, "G", "T", 0))
}

// TestPOP08_FilteredSegmentsAdvanceOffset: a long run of non-matching
// messages is scanned in bounded steps whose progress is kept, and the
// matching message arrives within a few calls.
func TestPOP08_FilteredSegmentsAdvanceOffset(t *testing.T) {
	h := startHarness(t, nil)
	h.b().Settings.MaxScanPerQueue = 300 // several scan rounds for 2000 messages
	h.createTopic("T", 1)
	c := h.dial()
	sendBatch(t, c, "T", 0, "b", 0, 2000, "B")
	send(t, c, "T", 0, "a", sendOpts{tag: "A"})

	a := popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000, exp: "A"}
	var got []popped
	last := int64(-1)
	calls := 0
	for len(got) == 0 {
		calls++
		require.LessOrEqual(t, calls, 10, "filtered range rescanned")
		_, got = pop(t, c, a)
		off := committedOffset(h, "G", "T", 0)
		require.GreaterOrEqual(t, off, last, "offset went backwards")
		last = off
	}
	require.Equal(t, []string{"a"}, bodies(got))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", got[0]))
	require.EqualValues(t, 2001, committedOffset(h, "G", "T", 0))
	require.Zero(t, h.b().Svc.HeldLocks())
}

// createTopicRemote creates a topic with UPDATE_AND_CREATE_TOPIC (17).
func createTopicRemote(t *testing.T, c *client.Conn, topic string, queues int32) {
	t.Helper()
	req := codec.NewRequest(codec.RequestUpdateAndCreateTopic, 0, map[string]string{
		"topic": topic, "defaultTopic": "TBW102", "readQueueNums": fmt.Sprint(queues),
		"writeQueueNums": fmt.Sprint(queues), "perm": "6", "topicFilterType": "SINGLE_TAG",
	}, nil)
	resp := call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
}

// TestPOP_ConcurrentConsumersNoDuplicates: many consumers popping the same
// queues at once never receive one message twice (the consume offset is
// read under the queue lock, and the lock is held until the advance is
// durable) and together receive every message.
func TestPOP_ConcurrentConsumersNoDuplicates(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	const perQueue = 200
	for q := range int32(2) {
		sendBatch(t, c, "T", q, "q"+strconv.Itoa(int(q)), 0, perQueue, "")
	}
	const consumers = 8
	results := make(chan []string, consumers)
	for range consumers {
		cc := h.dial()
		go func() {
			var got []string
			empty := 0
			for empty < 3 {
				resp, err := cc.Invoke(context.Background(), popArgs{group: "G", topic: "T", queueID: -1, max: 3, invisible: 600000, poll: 200}.request())
				if err != nil || resp.Code != codec.Success {
					empty++ // three empty long polls in a row: nothing left
					continue
				}
				empty = 0
				ms, err := codec.DecodeMessages(resp.Body)
				if err != nil {
					break
				}
				for _, m := range ms {
					got = append(got, string(m.Body))
				}
			}
			results <- got
		}()
	}
	seen := map[string]int{}
	for range consumers {
		for _, b := range <-results {
			seen[b]++
		}
	}
	for b, n := range seen {
		require.Equal(t, 1, n, "%s delivered %d times", b, n)
	}
	require.Len(t, seen, 2*perQueue)
}
