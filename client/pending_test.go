package client

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// The pending table finds every entry by opaque whether it sits in its ring
// slot or, because an older request still holds that slot, in the
// overflow map; drain returns whatever is left, once.
func TestPendingTable(t *testing.T) {
	tab := newPendingTable()
	cb := func(*codec.Command, error) {}
	const base = codec.MinPreparedOpaque
	// 3 × the ring: opaques base+i and base+i+ring share a slot.
	for i := range int32(3 * pendingRingSize) {
		tab.put(pendingEntry{opaque: base + i, cb: cb})
	}
	require.Equal(t, 3*pendingRingSize, tab.n)
	require.Len(t, tab.over, 2*pendingRingSize)
	_, ok := tab.take(base + 3*pendingRingSize)
	require.False(t, ok, "never registered")
	// Take the newest third first (overflow), then every other of the rest.
	for i := int32(3*pendingRingSize) - 1; i >= 2*pendingRingSize; i-- {
		e, ok := tab.take(base + i)
		require.True(t, ok, "opaque %d", base+i)
		require.Equal(t, base+i, e.opaque)
	}
	for i := int32(0); i < 2*pendingRingSize; i += 2 {
		e, ok := tab.take(base + i)
		require.True(t, ok, "opaque %d", base+i)
		require.Equal(t, base+i, e.opaque)
		_, again := tab.take(base + i)
		require.False(t, again, "taken twice")
	}
	require.Equal(t, pendingRingSize, tab.n)
	// A freed ring slot is reused; the opaque that overflowed stays findable.
	tab.put(pendingEntry{opaque: base + 5*pendingRingSize, cb: cb})
	left := tab.drain()
	require.Len(t, left, pendingRingSize+1)
	seen := map[int32]bool{}
	for _, e := range left {
		require.False(t, seen[e.opaque], "drained twice: %d", e.opaque)
		seen[e.opaque] = true
		require.True(t, e.opaque == base+5*pendingRingSize || (e.opaque-base)%2 == 1, fmt.Sprint(e.opaque))
	}
	require.Zero(t, tab.n)
	require.Empty(t, tab.drain())
}
