package handler_test

// The long-poll registry's per-topic and per-queue bookkeeping follows the
// parked requests: it empties when they are answered, expire or
// disconnect, and stays bounded meanwhile.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/codec"
)

// registryState counts what the registry keeps per topic and queue
// (epochs aside: they are swept by count, see TestLP_IdleBookkeepingBounded).
type registryState struct {
	topics, waiterKeys, maxOffsetTopics, maxOffsetQueues, probes int
}

func stateOf(r *longpoll.Registry) registryState {
	s := r.Stats()
	return registryState{topics: s.Topics, waiterKeys: s.WaiterKeys, maxOffsetTopics: s.MaxOffsetTopics,
		maxOffsetQueues: s.MaxOffsetQueues, probes: s.ProbesQueued}
}

// TestLP_RegistryBookkeepingPruned: POPs (filtered and not, one queue and
// every queue) and a NOTIFICATION park on a topic; the registry then holds
// epochs, waiter counts and the queues' maxOffsets. Once they are
// answered, the next append (nobody waiting) leaves nothing; parked polls
// that expire or whose connection closes leave nothing at once.
func TestLP_RegistryBookkeepingPruned(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	h.createTopic("U", 2)
	c := h.dial()
	r := h.b().Polls
	parkAll := func(topic string, poll int64) []pending {
		before := r.Stats().Parks
		ps := []pending{
			asyncPop(t, h.dial(), popArgs{group: "G1", topic: topic, queueID: -1, max: 4, invisible: 30000, poll: poll}),
			asyncPop(t, h.dial(), popArgs{group: "G2", topic: topic, queueID: 0, max: 4, invisible: 30000, poll: poll, exp: "A"}),
			asyncCall(t, h.dial(), notifyReq("G3", topic, -1, poll)),
		}
		eventually(t, func() bool { return r.Stats().Parks == before+3 && r.ParkedCount() == 3 }, "polls parked")
		return ps
	}

	// Answered by messages.
	ps := parkAll("T", lpPollMillis)
	st := stateOf(r)
	require.Positive(t, st.topics)
	require.Equal(t, 2, st.maxOffsetQueues, "the POPs' seeds: both queues of T")
	send(t, c, "T", 0, "a", sendOpts{tag: "A"})
	send(t, c, "T", 1, "b", sendOpts{tag: "B"})
	for _, p := range ps {
		require.Equal(t, codec.Success, p.wait(t).Code)
	}
	eventually(t, func() bool { return r.ParkedCount() == 0 }, "polls answered")
	send(t, c, "T", 0, "c", sendOpts{tag: "C"}) // nobody waits
	require.Equal(t, registryState{}, stateOf(r), "bookkeeping left after the polls were answered")

	// Expired by their deadline.
	ps = parkAll("U", 300)
	require.Positive(t, stateOf(r).maxOffsetQueues)
	for _, p := range ps {
		r := p.wait(t)
		require.Contains(t, []int32{codec.PollingTimeout, codec.Success}, r.Code) // NOTIFICATION: SUCCESS, hasMsg false
	}
	eventually(t, func() bool { return r.ParkedCount() == 0 }, "polls expired")
	require.Equal(t, registryState{}, stateOf(r), "bookkeeping left after the polls expired")
}

// TestLP_RegistryBookkeepingDroppedOnClose: the polls of a closed
// connection leave no bookkeeping behind.
func TestLP_RegistryBookkeepingDroppedOnClose(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	r := h.b().Polls
	pc := h.dial()
	asyncPop(t, pc, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, poll: lpPollMillis, exp: "A"})
	eventually(t, func() bool { return r.ParkedCount() == 1 }, "poll parked")
	require.NotEqual(t, registryState{}, stateOf(r))
	require.NoError(t, pc.Close())
	eventually(t, func() bool { return r.ParkedCount() == 0 }, "poll released")
	require.Equal(t, registryState{}, stateOf(r))
}
