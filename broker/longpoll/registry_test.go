package longpoll

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// waiterEntries counts the (key, poll) entries left in the registry.
func waiterEntries(r *Registry) int {
	n := 0
	for i := range r.stripes {
		s := &r.stripes[i]
		s.mu.Lock()
		for _, set := range s.waiters {
			n += len(set)
		}
		s.mu.Unlock()
	}
	return n
}

// A wake that claims a poll while park is still registering it (and an
// epoch of a later key moved) must not make the poll run twice: park then
// leaves it to the waker. The parked count returns to zero and no entry is
// left behind.
func TestPollRegistryParkRacesWake(t *testing.T) {
	r := NewRegistry(1<<20, func() int64 { return 0 }, nil)
	keys := []Key{{"A", AnyQueue}, {"B", AnyQueue}}
	for i := range 5000 {
		var runs atomic.Int32
		seen := r.Snapshot(keys)
		r.Wake("B", AnyQueue) // key 1 is stale: park answers parkChanged unless woken first
		p := &Poll{Keys: keys, DeadlineMillis: 60000,
			OnWake: func() { runs.Add(1) }, OnExpire: func() { t.Error("expired") }}
		var wg sync.WaitGroup
		wg.Go(func() { r.Wake("A", AnyQueue) })
		res := r.Park(p, seen)
		wg.Wait()
		switch res {
		case ParkChanged:
			runs.Add(1) // the caller re-runs it
		case Parked:
			r.Wake("A", AnyQueue) // a poll still parked is woken now
		default:
			t.Fatalf("iteration %d: park answered %d", i, res)
		}
		require.Equal(t, int32(1), runs.Load(), "iteration %d: runs", i)
		require.Zero(t, r.ParkedCount(), "iteration %d: parked count", i)
		require.Zero(t, waiterEntries(r), "iteration %d: leaked waiter entries", i)
	}
}

// An append of n messages wakes n POPs per consumerGroup (earliest deadline
// first) and every PULL/NOTIFICATION; a contended unlock wakes one POP of
// its group.
func TestPollRegistryWakeProportional(t *testing.T) {
	r := NewRegistry(1000, func() int64 { return 0 }, nil)
	woken := map[string]int{}
	var order []int64
	mk := func(group string, deadline int64) *Poll {
		p := &Poll{Keys: []Key{{"T", AnyQueue}}, Group: group, DeadlineMillis: deadline,
			OnExpire: func() {}}
		p.OnWake = func() {
			woken[group]++
			if group == "G1" {
				order = append(order, p.DeadlineMillis)
			}
		}
		return p
	}
	for i := range 10 {
		for _, g := range []string{"G1", "G2", ""} {
			p := mk(g, int64(60000-i))
			require.Equal(t, Parked, r.Park(p, r.Snapshot(p.Keys)))
		}
	}
	r.Appended("T", 0, 5) // first sight of the queue: wakes all
	require.Equal(t, map[string]int{"G1": 10, "G2": 10, "": 10}, woken)
	clear(woken)
	for i := range 10 {
		for _, g := range []string{"G1", "G2", ""} {
			p := mk(g, int64(60000-i))
			require.Equal(t, Parked, r.Park(p, r.Snapshot(p.Keys)))
		}
	}
	order = nil
	r.Appended("T", 0, 7) // two messages
	require.Equal(t, map[string]int{"G1": 2, "G2": 2, "": 10}, woken)
	require.Equal(t, []int64{59991, 59992}, order, "earliest deadline first")
	r.WakeSome("T", 3, "G2", 1) // contended unlock of G2's lock
	require.Equal(t, map[string]int{"G1": 2, "G2": 3, "": 10}, woken)
	require.Equal(t, int64(8+7), r.ParkedCount())
	r.Appended("T", 1, 3) // another queue, first sight: wakes all
	require.Zero(t, r.ParkedCount())
	require.Zero(t, waiterEntries(r))
	r.Close()
}

// pollTime beyond maxPollMillis is shortened to it; shorter ones are kept.
func TestPollDeadlineCapped(t *testing.T) {
	require.Equal(t, int64(1000+15000), Deadline(1000, 15000))
	require.Equal(t, int64(1000)+MaxPollMillis, Deadline(1000, 3_600_000))
	require.Equal(t, int64(1000)+MaxPollMillis, Deadline(1000, math.MaxInt64))
}
