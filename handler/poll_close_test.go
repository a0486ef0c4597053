package handler_test

// Parked long polls of a connection that closes are released at close
// (remoting OnClose → pollRegistry.dropConn), not held until their
// deadline.

import (
	"fmt"
	"slices"
	"sync/atomic"
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

// TestPOLL_QueuedPopOfClosedConnectionReadsNothing: a POP that waits in the
// reader pool's queue while its connection closes reads nothing when its
// turn comes, so another consumer of its group gets the messages at once.
// Before, it ran once and took them, and they stayed invisible for its
// invisibleTime (60 s here, three times eventually's bound).
func TestPOLL_QueuedPopOfClosedConnectionReadsNothing(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "a", sendOpts{})
	send(t, c, "T", 0, "b", sendOpts{})

	// Every reader held inside a POP of its own group.
	readers := h.b().Settings.Readers
	var entered atomic.Int32
	release := make(chan struct{})
	hook := func() {
		if entered.Add(1) <= int32(readers) {
			<-release
		}
	}
	h.b().Settings.Hooks.BeforeSubmit.Store(&hook)
	t.Cleanup(func() { h.b().Settings.Hooks.BeforeSubmit.Store(nil) })
	var busy []pending
	for i := 0; i < readers; i++ {
		busy = append(busy, asyncPop(t, h.dial(), popArgs{group: fmt.Sprintf("B%d", i), topic: "T", queueID: -1, max: 4, invisible: 60000}))
	}
	eventually(t, func() bool { return entered.Load() == int32(readers) }, "readers busy: %d", entered.Load())

	// The consumer that goes: registered (so its close shows), one POP queued.
	gone := h.dial()
	r := call(t, gone, codec.NewRequest(codec.RequestHeartBeat, 0, nil, heartbeatBody("gone@1", "GX")))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	takers := h.b().Polls.Stats().Takers
	asyncPop(t, gone, popArgs{group: "GX", topic: "T", queueID: -1, max: 4, invisible: 60000})
	eventually(t, func() bool { return h.b().Polls.Stats().Takers > takers }, "the POP did not arrive")
	require.NoError(t, gone.Close())
	eventually(t, func() bool { return !slices.Contains(h.b().Clients.GroupsSubscribing("TopicH"), "GX") }, "the close was not seen")

	close(release)
	for _, p := range busy {
		require.Equal(t, codec.Success, p.wait(t).Code)
	}
	var got []popped
	eventually(t, func() bool {
		got = append(got, popAll(t, c, popArgs{group: "GX", topic: "T", queueID: -1, max: 4, invisible: 60000}, 2-len(got))...)
		return len(got) == 2
	}, "the group's messages were taken by the closed connection's POP: got %d of 2", len(got))
	require.ElementsMatch(t, []string{"a", "b"}, bodies(got))
}
