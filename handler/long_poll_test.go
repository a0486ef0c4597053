package handler

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// waiterEntries counts the (key, poll) entries left in the registry.
func waiterEntries(r *pollRegistry) int {
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
	r := newPollRegistry(1<<20, func() int64 { return 0 }, nil)
	keys := []pollKey{{"A", anyQueue}, {"B", anyQueue}}
	for i := range 5000 {
		var runs atomic.Int32
		seen := r.snapshot(keys)
		r.wake("B", anyQueue) // key 1 is stale: park answers parkChanged unless woken first
		p := &parkedPoll{keys: keys, deadlineMillis: 60000,
			onWake: func() { runs.Add(1) }, onExpire: func() { t.Error("expired") }}
		var wg sync.WaitGroup
		wg.Go(func() { r.wake("A", anyQueue) })
		res := r.park(p, seen)
		wg.Wait()
		switch res {
		case parkChanged:
			runs.Add(1) // the caller re-runs it
		case parked:
			r.wake("A", anyQueue) // a poll still parked is woken now
		default:
			t.Fatalf("iteration %d: park answered %d", i, res)
		}
		require.Equal(t, int32(1), runs.Load(), "iteration %d: runs", i)
		require.Zero(t, r.parkedCount(), "iteration %d: parked count", i)
		require.Zero(t, waiterEntries(r), "iteration %d: leaked waiter entries", i)
	}
}

// An append of n messages wakes n POPs per consumerGroup (earliest deadline
// first) and every PULL/NOTIFICATION; a contended unlock wakes one POP of
// its group.
func TestPollRegistryWakeProportional(t *testing.T) {
	r := newPollRegistry(1000, func() int64 { return 0 }, nil)
	woken := map[string]int{}
	var order []int64
	mk := func(group string, deadline int64) *parkedPoll {
		p := &parkedPoll{keys: []pollKey{{"T", anyQueue}}, group: group, deadlineMillis: deadline,
			onExpire: func() {}}
		p.onWake = func() {
			woken[group]++
			if group == "G1" {
				order = append(order, p.deadlineMillis)
			}
		}
		return p
	}
	for i := range 10 {
		for _, g := range []string{"G1", "G2", ""} {
			p := mk(g, int64(60000-i))
			require.Equal(t, parked, r.park(p, r.snapshot(p.keys)))
		}
	}
	r.appended("T", 0, 5) // first sight of the queue: wakes all
	require.Equal(t, map[string]int{"G1": 10, "G2": 10, "": 10}, woken)
	clear(woken)
	for i := range 10 {
		for _, g := range []string{"G1", "G2", ""} {
			p := mk(g, int64(60000-i))
			require.Equal(t, parked, r.park(p, r.snapshot(p.keys)))
		}
	}
	order = nil
	r.appended("T", 0, 7) // two messages
	require.Equal(t, map[string]int{"G1": 2, "G2": 2, "": 10}, woken)
	require.Equal(t, []int64{59991, 59992}, order, "earliest deadline first")
	r.wakeSome("T", 3, "G2", 1) // contended unlock of G2's lock
	require.Equal(t, map[string]int{"G1": 2, "G2": 3, "": 10}, woken)
	require.Equal(t, int64(8+7), r.parkedCount())
	r.appended("T", 1, 3) // another queue, first sight: wakes all
	require.Zero(t, r.parkedCount())
	require.Zero(t, waiterEntries(r))
	r.close()
}

// TestPOLL_WakeProportional: with many POPs of one group long-polling one
// topic, each sent message costs a bounded number of POP executions
// instead of one per parked consumer, and every message is delivered.
func TestPOLL_WakeProportional(t *testing.T) {
	const consumers, msgs = 40, 10
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "first", sendOpts{}) // the queue is known to the listener
	_, got := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 30000})
	require.Len(t, got, 1)

	var pend []pending
	for range consumers {
		pend = append(pend, asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 30000, poll: 30000}))
	}
	eventually(t, func() bool { return h.b().polls.parkedCount() == consumers }, "polls parked")
	before := h.b().polls.popRuns.Load()
	for i := range msgs {
		send(t, c, "T", 0, "m", sendOpts{})
		eventually(t, func() bool { return h.b().polls.parkedCount() == int64(consumers-i-1) }, "message %d not delivered", i)
	}
	runs := h.b().polls.popRuns.Load() - before
	t.Logf("%d POP executions for %d messages with %d parked consumers", runs, msgs, consumers)
	require.LessOrEqual(t, runs, uint64(3*msgs), "POP executions per delivered message")
	delivered := 0
	eventually(t, func() bool {
		for _, p := range pend {
			if r, ok := p.answered(); ok {
				require.Equal(t, codec.Success, r.Code, r.Remark)
				delivered += len(parsePop(t, r))
			}
		}
		return delivered == msgs
	}, "delivered %d of %d", delivered, msgs)
}

// pollTime beyond maxPollMillis is shortened to it; shorter ones are kept.
func TestPollDeadlineCapped(t *testing.T) {
	require.Equal(t, int64(1000+15000), pollDeadline(1000, 15000))
	require.Equal(t, int64(1000)+maxPollMillis, pollDeadline(1000, 3_600_000))
	require.Equal(t, int64(1000)+maxPollMillis, pollDeadline(1000, math.MaxInt64))
}

// A POP asking to long-poll for an hour is parked with a deadline at most
// maxPollMillis away.
func TestPOLL_PollTimeCapped(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	before := h.b().nowMillis()
	p := asyncPop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: 3_600_000})
	eventually(t, func() bool { return h.b().polls.parkedCount() == 1 }, "poll parked")
	var deadline int64
	r := h.b().polls
	for i := range r.stripes {
		s := &r.stripes[i]
		s.mu.Lock()
		for _, set := range s.waiters {
			for q := range set {
				deadline = q.deadlineMillis
			}
		}
		s.mu.Unlock()
	}
	require.LessOrEqual(t, deadline, h.b().nowMillis()+maxPollMillis)
	require.GreaterOrEqual(t, deadline, before+maxPollMillis)
	r.close()
	require.Equal(t, codec.PollingTimeout, p.wait(t).Code)
}
