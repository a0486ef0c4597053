package handler_test

// An admin consume-offset reset (UPDATE_CONSUMER_OFFSET) racing a POP: the
// POP read the offset before the reset, and its offset advance reaches the
// writer after the reset. The reset must win; the POP still delivers what
// it took.

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// resetReq builds the UPDATE_CONSUMER_OFFSET an admin tool sends.
func resetReq(group, topic string, queueID int32, offset int64) *codec.Command {
	return codec.NewRequest(codec.RequestUpdateConsumerOffset, 0, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(int(queueID)),
		"commitOffset": strconv.FormatInt(offset, 10)}, nil)
}

// popGate installs a beforeSubmit hook that stops the next POP between its
// read and its write submission. entered is closed when a POP is stopped;
// release lets it go on (idempotent). The hook is removed at test end.
func popGate(t *testing.T, h *harness) (entered <-chan struct{}, release func()) {
	t.Helper()
	in, out := make(chan struct{}), make(chan struct{})
	var stopped atomic.Bool
	hook := func() {
		if stopped.CompareAndSwap(false, true) {
			close(in)
			<-out
		}
	}
	h.b().Settings.Hooks.BeforeSubmit.Store(&hook)
	var once sync.Once
	release = func() { once.Do(func() { close(out) }) }
	t.Cleanup(func() {
		release()
		h.b().Settings.Hooks.BeforeSubmit.Store(nil)
	})
	return in, release
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatalf("%s did not happen", what)
	}
}

// resetSetup stores m-0..m-9 in T/0 and lets group G consume m-0, m-1, so
// the committed offset is 2.
func resetSetup(t *testing.T, h *harness) *client.Conn {
	t.Helper()
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 10, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 60000})
	require.Equal(t, []string{"m-0", "m-1"}, bodies(ms))
	require.Equal(t, int64(2), committedOffset(h, "G", "T", 0))
	return c
}

// resetCheckAfter checks the end state: the POP delivered m-2..m-4, the
// stored offset is the reset's 8, and the next POP starts there.
func resetCheckAfter(t *testing.T, h *harness, c *client.Conn, p pending) {
	t.Helper()
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"m-2", "m-3", "m-4"}, bodies(parsePop(t, r)), "the racing POP still delivers what it took")
	require.Equal(t, int64(8), committedOffset(h, "G", "T", 0), "the POP's advance overwrote the reset")
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 60000})
	require.Equal(t, []string{"m-8", "m-9"}, bodies(ms), "the next POP must start at the reset offset")
	require.Equal(t, int64(10), committedOffset(h, "G", "T", 0))
	require.Zero(t, h.b().Svc.HeldLocks())
}

// TestRESET_WinsOverInFlightPop: the reset is durable before the POP that
// read the old offset submits its write; the POP's advance is dropped.
func TestRESET_WinsOverInFlightPop(t *testing.T) {
	h := startHarness(t, nil)
	c := resetSetup(t, h)
	entered, release := popGate(t, h)
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 60000})
	waitClosed(t, entered, "the POP reaching its write")
	r := call(t, c, resetReq("G", "T", 0, 8))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, int64(8), committedOffset(h, "G", "T", 0))
	release()
	resetCheckAfter(t, h, c, p)
}

// laneDepth reads the writer's queue depth gauge of one lane.
func laneDepth(t *testing.T, h *harness, lane string) float64 {
	t.Helper()
	mfs, err := h.st.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "popshim_writer_queue_depth" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "lane" && l.GetValue() == lane {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no queue depth gauge for lane %s", lane)
	return 0
}

// TestRESET_SameBatchAsPop: the reset is accepted before the POP's write
// and both land in one group-commit batch (the writer is held meanwhile);
// the POP's compare sees the reset through the batch's pending writes.
func TestRESET_SameBatchAsPop(t *testing.T) {
	g := newGateHook(t)
	h := startHookedHarness(t, g.hook)
	c := resetSetup(t, h)
	h.createTopic("U", 1)
	entered, release := popGate(t, h)
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 60000})
	waitClosed(t, entered, "the POP reaching its write")

	// Hold the writer on an unrelated write, queue the reset, then the POP.
	g.armed.Store(true)
	held := false
	t.Cleanup(func() {
		if !held {
			g.open()
		}
	})
	s := asyncCall(t, h.dial(), sendReq("U", 0, []byte("x"), sendOpts{}))
	waitClosed(t, g.held, "the writer holding a write")
	rs := asyncCall(t, h.dial(), resetReq("G", "T", 0, 8))
	eventually(t, func() bool { return laneDepth(t, h, "background") == 1 }, "reset not queued")
	release()
	eventually(t, func() bool { return laneDepth(t, h, "foreground") == 1 }, "POP write not queued")
	held = true
	g.open()

	require.Equal(t, codec.Success, s.wait(t).Code)
	r := rs.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	resetCheckAfter(t, h, c, p)
}

// TestRESET_WakesParkedPop: a reset that rewinds the offset wakes a POP
// parked on the queue, which then gets the messages again.
func TestRESET_WakesParkedPop(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 2, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 2, invisible: 60000})
	require.Len(t, ms, 2)
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 60000, poll: lpPollMillis})
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "poll parked")
	r := call(t, c, resetReq("G", "T", 0, 0))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	select {
	case r := <-p.ch:
		require.Equal(t, codec.Success, r.Code, r.Remark)
		require.Equal(t, []string{"m-0", "m-1"}, bodies(parsePop(t, r)))
	case <-time.After(lpAnswerWait):
		t.Fatal("the parked POP was not woken by the reset")
	}
}
