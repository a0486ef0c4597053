package handler

// The long-poll registry's per-topic and per-queue bookkeeping follows the
// parked requests: it empties when they are answered, expire or
// disconnect, and stays bounded meanwhile.

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// registryState counts what the registry keeps per topic and queue
// (epochs aside: they are swept by count, see TestLP_IdleBookkeepingBounded).
type registryState struct {
	topics, waiterKeys, maxOffsetTopics, maxOffsetQueues, probes int
}

func stateOf(r *pollRegistry) registryState {
	var st registryState
	for i := range r.stripes {
		s := &r.stripes[i]
		s.mu.Lock()
		st.topics += len(s.perTopic)
		st.waiterKeys += len(s.waiters)
		st.maxOffsetTopics += len(s.maxOffsets)
		for _, qs := range s.maxOffsets {
			st.maxOffsetQueues += len(qs)
		}
		s.mu.Unlock()
	}
	st.probes = r.probes.queued()
	return st
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
	r := h.b().polls
	parkAll := func(topic string, poll int64) []pending {
		before := r.parks.Load()
		ps := []pending{
			asyncPop(t, h.dial(), popArgs{group: "G1", topic: topic, queueID: -1, max: 4, invisible: 30000, poll: poll}),
			asyncPop(t, h.dial(), popArgs{group: "G2", topic: topic, queueID: 0, max: 4, invisible: 30000, poll: poll, exp: "A"}),
			asyncCall(t, h.dial(), notifyReq("G3", topic, -1, poll)),
		}
		eventually(t, func() bool { return r.parks.Load() == before+3 && r.parkedCount() == 3 }, "polls parked")
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
	eventually(t, func() bool { return r.parkedCount() == 0 }, "polls answered")
	send(t, c, "T", 0, "c", sendOpts{tag: "C"}) // nobody waits
	require.Equal(t, registryState{}, stateOf(r), "bookkeeping left after the polls were answered")

	// Expired by their deadline.
	ps = parkAll("U", 300)
	require.Positive(t, stateOf(r).maxOffsetQueues)
	for _, p := range ps {
		r := p.wait(t)
		require.Contains(t, []int32{codec.PollingTimeout, codec.Success}, r.Code) // NOTIFICATION: SUCCESS, hasMsg false
	}
	eventually(t, func() bool { return r.parkedCount() == 0 }, "polls expired")
	require.Equal(t, registryState{}, stateOf(r), "bookkeeping left after the polls expired")
}

// TestLP_RegistryBookkeepingDroppedOnClose: the polls of a closed
// connection leave no bookkeeping behind.
func TestLP_RegistryBookkeepingDroppedOnClose(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	r := h.b().polls
	pc := h.dial()
	asyncPop(t, pc, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 30000, poll: lpPollMillis, exp: "A"})
	eventually(t, func() bool { return r.parkedCount() == 1 }, "poll parked")
	require.NotEqual(t, registryState{}, stateOf(r))
	require.NoError(t, pc.Close())
	eventually(t, func() bool { return r.parkedCount() == 0 }, "poll released")
	require.Equal(t, registryState{}, stateOf(r))
}

// Many topics, each woken once (and many more appended to without
// waiters): the epochs and maxOffsets kept for topics without waiters stay
// bounded per stripe.
func TestLP_IdleBookkeepingBounded(t *testing.T) {
	r := newPollRegistry(1<<20, func() int64 { return 0 }, nil)
	const topics = 40 * idleTopicsPerStripe
	woken := 0
	for i := range topics {
		k := pollKey{fmt.Sprintf("T%d", i), 0}
		p := &parkedPoll{keys: []pollKey{k}, group: "G", deadlineMillis: 60000,
			seeds:  []queueMax{{k.topic, 0, 5}},
			onWake: func() { woken++ }, onExpire: func() { t.Error("expired") }}
		require.Equal(t, parked, r.park(p, r.snapshot(p.keys)))
		r.appended(k.topic, 0, 6)
		r.appended(fmt.Sprintf("U%d", i), 0, 1) // nobody waits
	}
	require.Equal(t, topics, woken)
	for i := range r.stripes {
		s := &r.stripes[i]
		require.LessOrEqual(t, len(s.maxOffsets), idleTopicsPerStripe+2, "stripe %d maxOffsets", i)
		require.LessOrEqual(t, len(s.epochs), idleTopicsPerStripe+2, "stripe %d epochs", i)
	}
	require.Equal(t, 0, stateOf(r).topics)
	r.close()
}

// topicsInStripeOf returns n topic names that share topic's stripe.
func topicsInStripeOf(topic string, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		if name := fmt.Sprintf("S%d", i); stripeOf(name) == stripeOf(topic) {
			out = append(out, name)
		}
	}
	return out
}

// Sweeping a topic's epoch entry must not let a request park on a stale
// snapshot: a wake between snapshot and park is seen even when the entry
// was swept in between.
func TestLP_EpochSurvivesSweep(t *testing.T) {
	r := newPollRegistry(1<<20, func() int64 { return 0 }, nil)
	keys := []pollKey{{"X", anyQueue}}
	mk := func() *parkedPoll {
		return &parkedPoll{keys: keys, deadlineMillis: 60000, onWake: func() {}, onExpire: func() {}}
	}
	seen := r.snapshot(keys)
	r.wake("X", anyQueue)
	for _, o := range topicsInStripeOf("X", 2*idleTopicsPerStripe) {
		r.wake(o, anyQueue) // no waiters anywhere: X's entry is swept
	}
	s := r.stripe("X")
	s.mu.Lock()
	_, kept := s.epochs["X"]
	s.mu.Unlock()
	require.False(t, kept, "X's epoch was not swept")
	require.Equal(t, parkChanged, r.park(mk(), seen), "a wake between snapshot and park was missed")
	require.Zero(t, r.parkedCount())

	// Without any wake in between, a fresh snapshot parks.
	require.Equal(t, parked, r.park(mk(), r.snapshot(keys)))
	r.close()
	require.Equal(t, registryState{}, stateOf(r))
}
