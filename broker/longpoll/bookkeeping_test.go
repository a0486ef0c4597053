package longpoll

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Many topics, each woken once (and many more appended to without
// waiters): the epochs and maxOffsets kept for topics without waiters stay
// bounded per stripe.
func TestLP_IdleBookkeepingBounded(t *testing.T) {
	r := NewRegistry(1<<20, func() int64 { return 0 }, nil)
	const topics = 40 * idleTopicsPerStripe
	woken := 0
	for i := range topics {
		k := Key{fmt.Sprintf("T%d", i), 0}
		p := &Poll{Keys: []Key{k}, Group: "G", DeadlineMillis: 60000,
			Seeds:  []QueueMax{{k.Topic, 0, 5}},
			OnWake: func() { woken++ }, OnExpire: func() { t.Error("expired") }}
		require.Equal(t, Parked, r.Park(p, r.Snapshot(p.Keys)))
		r.Appended(k.Topic, 0, 6)
		r.Appended(fmt.Sprintf("U%d", i), 0, 1) // nobody waits
	}
	require.Equal(t, topics, woken)
	for i := range r.stripes {
		s := &r.stripes[i]
		require.LessOrEqual(t, len(s.maxOffsets), idleTopicsPerStripe+2, "stripe %d maxOffsets", i)
		require.LessOrEqual(t, len(s.epochs), idleTopicsPerStripe+2, "stripe %d epochs", i)
	}
	require.Equal(t, 0, stateOf(r).topics)
	r.Close()
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
// Snapshot: a wake between snapshot and park is seen even when the entry
// was swept in between.
func TestLP_EpochSurvivesSweep(t *testing.T) {
	r := NewRegistry(1<<20, func() int64 { return 0 }, nil)
	keys := []Key{{"X", AnyQueue}}
	mk := func() *Poll {
		return &Poll{Keys: keys, DeadlineMillis: 60000, OnWake: func() {}, OnExpire: func() {}}
	}
	seen := r.Snapshot(keys)
	r.Wake("X", AnyQueue)
	for _, o := range topicsInStripeOf("X", 2*idleTopicsPerStripe) {
		r.Wake(o, AnyQueue) // no waiters anywhere: X's entry is swept
	}
	s := r.stripe("X")
	s.mu.Lock()
	_, kept := s.epochs["X"]
	s.mu.Unlock()
	require.False(t, kept, "X's epoch was not swept")
	require.Equal(t, ParkChanged, r.Park(mk(), seen), "a wake between snapshot and park was missed")
	require.Zero(t, r.ParkedCount())

	// Without any wake in between, a fresh snapshot parks.
	require.Equal(t, Parked, r.Park(mk(), r.Snapshot(keys)))
	r.Close()
	require.Equal(t, registryState{}, stateOf(r))
}
