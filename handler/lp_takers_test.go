package handler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// A POP request counts as a taker of its tags from its arrival until it
// is answered, not only while parked: after a wake-up claimed its parked
// poll and before it re-parks (or while it re-runs after an epoch change),
// a peer of its group must not scan past its messages (breaker finding: 6–10
// of 100 B messages were lost to A scans that ran in that gap).
func TestLP_ServedPopStaysVisibleUntilAnswered(t *testing.T) {
	r := newPollRegistry(1<<20, func() int64 { return 0 }, nil)
	fb, err := parseTagFilter("TAG", "B")
	require.NoError(t, err)
	keys := []pollKey{{"T", 0}}
	taker := &parkedPoll{keys: keys, group: "G", filter: fb} // popJob.taker
	require.Nil(t, r.wantsOf("G", "T", 0))

	r.takers.add(taker) // the request arrives
	require.True(t, r.wantsOf("G", "T", 0).wantsProps(tagProps("B")), "a running B POP wants B")

	var woken bool
	p := &parkedPoll{keys: keys, group: "G", filter: fb, deadlineMillis: 60000,
		onWake: func() { woken = true }, onExpire: func() { t.Error("expired") }}
	require.Equal(t, parked, r.park(p, r.snapshot(keys)))
	r.wake("T", 0)
	require.True(t, woken, "the append woke the parked poll")
	require.Zero(t, r.parkedCount())
	w := r.wantsOf("G", "T", 0)
	require.True(t, w.wantsProps(tagProps("B")), "woken, not yet re-parked or answered: its B messages stay reserved")
	require.False(t, w.wantsProps(tagProps("A")))
	require.Nil(t, r.wantsOf("H", "T", 0), "other groups are not affected")
	require.Equal(t, 1, r.takers.count())

	r.takers.remove(taker) // answered
	require.Nil(t, r.wantsOf("G", "T", 0))
	require.Zero(t, r.takers.count())
}

// tagProps is a properties string holding only TAGS=tag.
func tagProps(tag string) string { return "TAGS\x01" + tag + "\x02" }

// Every POP, answered with messages, with POLLING_TIMEOUT, or after a long
// poll woken by a message, leaves no taker entry behind; while a filtered
// POP is parked its taker is registered.
func TestLP_TakerReleasedWhenAnswered(t *testing.T) {
	h := lpStart(t, "G")
	c := h.dial()
	r := h.b().polls
	send(t, c, "T", 0, "b-1", sendOpts{tag: "B"})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "B"})
	require.Equal(t, []string{"b-1"}, bodies(ms))
	eventually(t, func() bool { return r.takers.count() == 0 }, "taker of an answered POP released")

	resp, _ := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, exp: "B"})
	require.Equal(t, codec.PollingTimeout, resp.Code)
	eventually(t, func() bool { return r.takers.count() == 0 }, "taker of an empty POP released")

	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000,
		poll: lpPollMillis, exp: "B"})
	eventually(t, func() bool { return r.parkedCount() == 1 }, "the B POP parked")
	require.Positive(t, r.takers.count(), "a parked POP's taker is registered")
	send(t, c, "T", 0, "b-2", sendOpts{tag: "B"})
	got := p.wait(t)
	require.Equal(t, codec.Success, got.Code, got.Remark)
	require.Equal(t, []string{"b-2"}, bodies(parsePop(t, got)))
	eventually(t, func() bool { return r.takers.count() == 0 }, "taker of a woken POP released")
}

// A filtered POP parked by a connection that then closes is released
// without an answer; its taker goes with it, so messages of its tag are no
// longer reserved and a peer of the group is not held back by them.
func TestLP_TakerReleasedWhenConnectionCloses(t *testing.T) {
	h := lpStart(t, "G")
	r := h.b().polls
	bc := dialAddr(t, h.addr())
	_ = asyncPop(t, bc, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000,
		poll: lpPollMillis, exp: "B"})
	eventually(t, func() bool { return r.parkedCount() == 1 }, "the B POP parked")
	require.Positive(t, r.takers.count())
	require.NoError(t, bc.Close())
	eventually(t, func() bool { return r.parkedCount() == 0 && r.takers.count() == 0 },
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
	r := h.b().polls
	entered, release := popGate(t, h)
	first := asyncPop(t, h.dial(), popArgs{group: "H", topic: "T", queueID: 0, max: 1, invisible: 30000})
	waitClosed(t, entered, "the first POP holding the only reader")
	queued := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, exp: "B"})
	eventually(t, func() bool { return r.wantsOf("G", "T", 0).wantsProps(tagProps("B")) },
		"the queued B POP reserves B before a reader runs it")
	release()
	require.Equal(t, codec.Success, first.wait(t).Code)
	got := queued.wait(t)
	require.Equal(t, codec.PollingTimeout, got.Code, got.Remark)
	eventually(t, func() bool { return r.takers.count() == 0 }, "takers released after the answers")
}
