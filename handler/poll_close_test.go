package handler

// Parked long polls of a connection that closes are released at close
// (remoting OnClose → pollRegistry.dropConn), not held until their
// deadline.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestPOLL_ClosedConnectionReleasesParkedPolls: a POP, a PULL and a
// NOTIFICATION parked for 60 s by one connection leave the registry as soon
// as that connection closes; a poll of another connection stays parked and
// is still answered by the next message.
func TestPOLL_ClosedConnectionReleasesParkedPolls(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	gone := h.dial()
	asyncPop(t, gone, popArgs{group: "G", topic: "T", queueID: -1, max: 4, invisible: 30000, poll: 60000})
	asyncCall(t, gone, pullReq("GP", "T", 1, 0, 32, 60000, ""))
	asyncCall(t, gone, notifyReq("GN", "T", -1, 60000))
	stays := asyncPop(t, h.dial(), popArgs{group: "G2", topic: "T", queueID: -1, max: 4, invisible: 30000, poll: 60000})
	eventually(t, func() bool { return h.b().polls.parkedCount() == 4 }, "four polls parked")

	require.NoError(t, gone.Close())
	// The polls' deadline is 60 s, three times eventually's bound: only the
	// close can release them in time.
	eventually(t, func() bool { return h.b().polls.parkedCount() == 1 }, "polls of the closed connection still parked: %d", h.b().polls.parkedCount())
	_, early := stays.answered()
	require.False(t, early, "the other connection's poll was answered")

	send(t, h.dial(), "T", 0, "m", sendOpts{})
	r := stays.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"m"}, bodies(parsePop(t, r)))
	require.Zero(t, h.b().polls.parkedCount())
}

// A park that races with the close of its connection (the close was seen
// first) does not stay parked; one that parks first is released by the
// close. Either way the registry ends empty and nothing is answered late.
func TestPollRegistryDropConnRaces(t *testing.T) {
	r := newPollRegistry(10, func() int64 { return 0 }, nil)
	noCall := func() { t.Error("a released poll must not be answered") }
	keys := []pollKey{{"T", 0}}

	// Close first, then park: refused as expired (the caller answers the dead
	// connection, which drops the frame).
	r.dropConn(7)
	p := &parkedPoll{keys: keys, deadlineMillis: 60000, connID: 7, onWake: noCall, onExpire: noCall}
	require.Equal(t, parkExpired, r.park(p, r.snapshot(keys)))
	require.Zero(t, r.parkedCount())

	// Park first, then close: released without a callback, timer stopped.
	p = &parkedPoll{keys: keys, deadlineMillis: 60000, connID: 8, onWake: noCall, onExpire: noCall}
	other := &parkedPoll{keys: keys, deadlineMillis: 60000, connID: 9, onWake: func() {}, onExpire: noCall}
	require.Equal(t, parked, r.park(p, r.snapshot(keys)))
	require.Equal(t, parked, r.park(other, r.snapshot(keys)))
	require.Equal(t, int64(2), r.parkedCount())
	require.Equal(t, 1, r.dropConn(8))
	require.Equal(t, int64(1), r.parkedCount())
	require.Zero(t, r.dropConn(8), "idempotent")
	r.wake("T", 0) // wakes only the other connection's poll
	require.Zero(t, r.parkedCount())
	for i := range r.stripes {
		require.Empty(t, r.stripes[i].waiters, "stripe %d keeps a released poll", i)
	}
	for i := range r.conns.stripes {
		require.Empty(t, r.conns.stripes[i].polls, "conn stripe %d keeps a released poll", i)
	}
	r.close()
}
