package handler_test

// A filtered POP consumes (skips) the messages its filter rejects, unless a
// parked POP of its group wants them: then it stops there and wakes that
// POP.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// lpPeer parks a POP-shaped waiter of group G on T/0 with filter exp
// directly in the registry (standing in for a client whose POP is parked
// while a message it wants is already pending, a window the append wake-up
// normally closes at once). woke receives when it is woken.
func lpPeer(t *testing.T, h *harness, exp string) (woke chan struct{}) {
	t.Helper()
	f, err := longpoll.ParseTagFilter("TAG", exp)
	require.NoError(t, err)
	woke = make(chan struct{}, 1)
	r := h.b().Polls
	p := &longpoll.Poll{Keys: []longpoll.Key{{Topic: "T", QueueID: 0}}, Group: "G", Filter: f, Src: h.b().Svc,
		DeadlineMillis: h.b().Now() + lpPollMillis, OnExpire: func() {}}
	// Like a popJob, the stand-in's request is a taker while outstanding;
	// woken, it is taken to answer at once (it has no re-run).
	p.OnWake = func() {
		r.RemoveTaker(p)
		woke <- struct{}{}
	}
	r.AddTaker(p)
	require.Equal(t, longpoll.Parked, r.Park(p, r.Snapshot(p.Keys)))
	return woke
}

func waitWoken(t *testing.T, woke chan struct{}, what string) {
	t.Helper()
	select {
	case <-woke:
	case <-time.After(lpAnswerWait):
		t.Fatalf("%s was not woken", what)
	}
}

// TestLP_FilteredScanLeavesPeerMessage: with a tag-B POP of the group
// parked, a tag-A POP takes the A message before a B message, stops at the
// B message (its offset is committed there, not past it), and the B POP is
// woken; after that, a B POP takes the B message and an A POP the next A.
func TestLP_FilteredScanLeavesPeerMessage(t *testing.T) {
	h := lpStart(t, "G") // committed offset 1
	c := h.dial()
	send(t, c, "T", 0, "a-1", sendOpts{tag: "A"}) // 1
	send(t, c, "T", 0, "b-2", sendOpts{tag: "B"}) // 2
	send(t, c, "T", 0, "a-3", sendOpts{tag: "A"}) // 3
	woke := lpPeer(t, h, "B")

	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "A"})
	require.Equal(t, []string{"a-1"}, bodies(ms), "the A POP must stop at the B message")
	require.Equal(t, int64(2), committedOffset(h, "G", "T", 0))
	waitWoken(t, woke, "the parked B POP")
	require.Zero(t, h.b().Polls.ParkedCount())

	// max 1: a B POP that went on would skip (consume) a-3, nobody parked wanting it.
	_, ms = pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, exp: "B"})
	require.Equal(t, []string{"b-2"}, bodies(ms))
	_, ms = pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "A"})
	require.Equal(t, []string{"a-3"}, bodies(ms), "with no B POP parked the A POP skips B messages again")
	require.Equal(t, int64(4), committedOffset(h, "G", "T", 0))
}

// TestLP_FilteredScanLeavesUnfilteredPeer: a subscribe-all POP parked in
// the group wants everything, so a filtered POP finding only other tags
// takes nothing, parks, and hands the queue to it.
func TestLP_FilteredScanLeavesUnfilteredPeer(t *testing.T) {
	h := lpStart(t, "G")
	c := h.dial()
	send(t, c, "T", 0, "z-1", sendOpts{tag: "Z"})
	woke := lpPeer(t, h, "*")
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000,
		poll: lpPollMillis, exp: "A"})
	waitWoken(t, woke, "the parked subscribe-all POP")
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "the A POP parked")
	require.Equal(t, int64(1), committedOffset(h, "G", "T", 0), "the A POP must not consume the Z message the peer wants")
	send(t, c, "T", 0, "a-2", sendOpts{tag: "A"})
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"a-2"}, bodies(parsePop(t, r)),
		"nobody wants z-1 any more (the peer was woken and left), so the A POP skips it")
}
