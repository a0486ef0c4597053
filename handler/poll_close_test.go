package handler_test

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
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 4 }, "four polls parked")

	require.NoError(t, gone.Close())
	// The polls' deadline is 60 s, three times eventually's bound: only the
	// close can release them in time.
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "polls of the closed connection still parked: %d", h.b().Polls.ParkedCount())
	_, early := stays.answered()
	require.False(t, early, "the other connection's poll was answered")

	send(t, h.dial(), "T", 0, "m", sendOpts{})
	r := stays.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"m"}, bodies(parsePop(t, r)))
	require.Zero(t, h.b().Polls.ParkedCount())
}
