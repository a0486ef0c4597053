package handler_test

// A revive pass holds the retry copies of one chunk at a time, not of the
// whole pass: a pass can cover up to reviveBatch (16384) checkpoints, and
// with messages near --max-message-size (4 MiB) planning them all first
// took gigabytes.

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// liveHeap is the heap still reachable after a full collection, bytes.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestREV_PassMemoryBoundedByChunk: 80 popped 1 MiB messages expire
// together. While the writer holds the first revive write (gateHook), the
// reviver must not have built the retry copies of the other chunks yet:
// the live heap grows by far less than the 80 MiB the whole pass would
// take. Then every message comes back exactly once.
func TestREV_PassMemoryBoundedByChunk(t *testing.T) {
	gate := newGateHook(t)
	h := startHookedHarness(t, gate.hook)
	h.createTopic("T", 1)
	c := h.dial()

	// One small message revived first, so the retry topic exists and the
	// gated write below is a revive chunk, not the topic's creation.
	send(t, c, "T", 0, "warm", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 1000})
	require.Len(t, ms, 1)
	h.advance(2 * time.Second)
	h.reviveNow()
	_, ok := h.b().Topics.Get(codec.PopRetryTopicV2("G", "T"))
	require.True(t, ok, "retry topic created by the first revive")

	const n, size = 80, 1 << 20
	body := strings.Repeat("x", size)
	for range n {
		send(t, c, "T", 0, body, sendOpts{})
	}
	popped := 0
	for popped < n {
		// 60 s of invisible time (moved past with the broker clock below), so a
		// slow machine cannot see the first copies revived while it still pops.
		_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
		require.NotEmpty(t, ms)
		for _, m := range ms {
			if m.body() == "warm" { // its retry copy, not part of this pass's count
				continue
			}
			popped++
		}
	}
	require.Equal(t, n, popped)
	base := liveHeap()

	gate.armed.Store(true)
	h.advance(61 * time.Second)
	h.b().Revive.Trigger()
	select {
	case <-gate.held:
	case <-time.After(waitFor):
		t.Fatal("no revive write reached the store")
	}
	grown := int64(liveHeap()) - int64(base)
	gate.open()
	t.Logf("live heap grew by %d MiB while the first revive chunk was being written", grown>>20)
	require.Less(t, grown, int64(n*size/2), "the reviver built the retry copies of the whole pass before writing any")

	h.reviveNow()
	seen := map[int64]bool{}
	for {
		_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 600000})
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			if m.body() == "warm" {
				continue
			}
			off := m.handle.QueueOffset
			require.False(t, seen[off], "retry offset %d delivered twice", off)
			seen[off] = true
			require.Len(t, m.m.Body, size)
		}
	}
	require.Len(t, seen, n, "every expired message revived once")
}
