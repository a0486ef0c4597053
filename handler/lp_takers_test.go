package handler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// tagProps is a properties string holding only TAGS=tag.
func tagProps(tag string) string { return "TAGS\x01" + tag + "\x02" }

// Every POP, answered with messages, with POLLING_TIMEOUT, or after a long
// poll woken by a message, leaves no taker entry behind; while a filtered
// POP is parked its taker is registered.
func TestLP_TakerReleasedWhenAnswered(t *testing.T) {
	h := lpStart(t, "G")
	c := h.dial()
	r := h.b().Polls
	send(t, c, "T", 0, "b-1", sendOpts{tag: "B"})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "B"})
	require.Equal(t, []string{"b-1"}, bodies(ms))
	eventually(t, func() bool { return r.Stats().Takers == 0 }, "taker of an answered POP released")

	resp, _ := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "B"})
	require.Equal(t, codec.PollingTimeout, resp.Code)
	eventually(t, func() bool { return r.Stats().Takers == 0 }, "taker of an empty POP released")

	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000,
		poll: lpPollMillis, exp: "B"})
	eventually(t, func() bool { return r.ParkedCount() == 1 }, "the B POP parked")
	require.Positive(t, r.Stats().Takers, "a parked POP's taker is registered")
	send(t, c, "T", 0, "b-2", sendOpts{tag: "B"})
	got := p.wait(t)
	require.Equal(t, codec.Success, got.Code, got.Remark)
	require.Equal(t, []string{"b-2"}, bodies(parsePop(t, got)))
	eventually(t, func() bool { return r.Stats().Takers == 0 }, "taker of a woken POP released")
}

// A filtered POP parked by a connection that then closes is released
// without an answer; its taker goes with it, so messages of its tag are no
// longer reserved and a peer of the group is not held back by them.
func TestLP_TakerReleasedWhenConnectionCloses(t *testing.T) {
	h := lpStart(t, "G")
	r := h.b().Polls
	bc := dialAddr(t, h.addr())
	_ = asyncPop(t, bc, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000,
		poll: lpPollMillis, exp: "B"})
	eventually(t, func() bool { return r.ParkedCount() == 1 }, "the B POP parked")
	require.Positive(t, r.Stats().Takers)
	require.NoError(t, bc.Close())
	eventually(t, func() bool { return r.ParkedCount() == 0 && r.Stats().Takers == 0 },
		"the closed connection's poll and taker are released")

	c := h.dial()
	send(t, c, "T", 0, "b-1", sendOpts{tag: "B"})
	send(t, c, "T", 0, "a-2", sendOpts{tag: "A"})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "A"})
	require.Equal(t, []string{"a-2"}, bodies(ms), "nobody takes B any more: the A POP goes past b-1")
}

// A POP waiting in the reader queue already reserves its tags: with the only
// reader busy, a queued tag-B POP's taker is registered, and it is released
// once that POP is answered.
func TestLP_QueuedPopReservesItsTags(t *testing.T) {
	h := startHarness(t, func(cfg *conf.Config) { cfg.PopReaderWorkers = 1 })
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "x-0", sendOpts{tag: "X"})
	r := h.b().Polls
	entered, release := popGate(t, h)
	first := asyncPop(t, h.dial(), popArgs{group: "H", topic: "T", queueID: 0, max: 1, invisible: 30000})
	waitClosed(t, entered, "the first POP holding the only reader")
	queued := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, exp: "B"})
	eventually(t, func() bool { return r.WantsOf("G", "T", 0).WantsProps(tagProps("B")) },
		"the queued B POP reserves B before a reader runs it")
	release()
	require.Equal(t, codec.Success, first.wait(t).Code)
	got := queued.wait(t)
	require.Equal(t, codec.PollingTimeout, got.Code, got.Remark)
	eventually(t, func() bool { return r.Stats().Takers == 0 }, "takers released after the answers")
}
