package longpoll

import (
	"testing"
	"time"

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

// A Wait ends with OnExpire after its duration, or with OnDrop at once
// when its connection closes (before or during the wait), never both; it
// takes no parked slot, and a closed registry refuses it.
func TestPollRegistryWaitEndsWithItsConnection(t *testing.T) {
	r := NewRegistry(1, func() int64 { return 0 }, nil)
	noCall := func() { t.Error("a dropped wait must not expire") }
	dropped := make(chan uint64, 3)
	waitOn := func(conn uint64, d time.Duration, expire func()) bool {
		return r.Wait(&Poll{ConnID: conn, OnExpire: expire, OnDrop: func() { dropped <- conn }}, d)
	}

	expired := make(chan struct{})
	require.True(t, waitOn(1, 10*time.Millisecond, func() { close(expired) }))
	<-expired
	require.Zero(t, r.DropConn(1), "an expired wait leaves the index")

	require.True(t, waitOn(2, time.Hour, noCall))
	require.True(t, waitOn(3, time.Hour, noCall))
	require.Zero(t, r.ParkedCount(), "a wait is not a parked poll")
	require.Equal(t, 2, r.Stats().ConnPolls)
	require.Equal(t, 1, r.DropConn(2))
	require.Equal(t, uint64(2), <-dropped)

	r.DropConn(4)
	require.True(t, waitOn(4, time.Hour, noCall))
	require.Equal(t, uint64(4), <-dropped, "a wait of a closed connection is dropped at once")
	require.Equal(t, 1, r.Stats().ConnPolls, "only connection 3's wait remains")

	r.Close()
	require.False(t, waitOn(5, time.Hour, noCall), "a closed registry refuses a wait")
	require.Equal(t, 1, r.DropConn(3))
	require.Equal(t, uint64(3), <-dropped)
	require.Zero(t, r.Stats().ConnPolls)
}
