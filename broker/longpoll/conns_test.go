package longpoll

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A park that races with the close of its connection (the close was seen
// first) does not stay parked; one that parks first is released by the
// Close. Either way the registry ends empty and nothing is answered late.
func TestPollRegistryDropConnRaces(t *testing.T) {
	r := NewRegistry(10, func() int64 { return 0 }, nil)
	noCall := func() { t.Error("a released poll must not be answered") }
	keys := []Key{{"T", 0}}

	// Close first, then park: refused as expired (the caller answers the dead
	// connection, which drops the frame).
	r.DropConn(7)
	p := &Poll{Keys: keys, DeadlineMillis: 60000, ConnID: 7, OnWake: noCall, OnExpire: noCall}
	require.Equal(t, ParkExpired, r.Park(p, r.Snapshot(keys)))
	require.Zero(t, r.ParkedCount())

	// Park first, then close: released without a callback, timer stopped.
	p = &Poll{Keys: keys, DeadlineMillis: 60000, ConnID: 8, OnWake: noCall, OnExpire: noCall}
	other := &Poll{Keys: keys, DeadlineMillis: 60000, ConnID: 9, OnWake: func() {}, OnExpire: noCall}
	require.Equal(t, Parked, r.Park(p, r.Snapshot(keys)))
	require.Equal(t, Parked, r.Park(other, r.Snapshot(keys)))
	require.Equal(t, int64(2), r.ParkedCount())
	require.Equal(t, 1, r.DropConn(8))
	require.Equal(t, int64(1), r.ParkedCount())
	require.Zero(t, r.DropConn(8), "idempotent")
	r.Wake("T", 0) // wakes only the other connection's poll
	require.Zero(t, r.ParkedCount())
	for i := range r.stripes {
		require.Empty(t, r.stripes[i].waiters, "stripe %d keeps a released poll", i)
	}
	for i := range r.conns.stripes {
		require.Empty(t, r.conns.stripes[i].polls, "conn stripe %d keeps a released poll", i)
	}
	r.Close()
}
