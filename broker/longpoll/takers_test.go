package longpoll

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A POP request counts as a taker of its tags from its arrival until it
// is answered, not only while parked: after a wake-up claimed its parked
// poll and before it re-parks (or while it re-runs after an epoch change),
// a peer of its group must not scan past its messages (found in a
// two-group tag test: 6–10 of 100 B messages were lost to A scans that ran
// in that gap).
func TestLP_ServedPopStaysVisibleUntilAnswered(t *testing.T) {
	r := NewRegistry(1<<20, func() int64 { return 0 }, nil)
	fb, err := ParseTagFilter("TAG", "B")
	require.NoError(t, err)
	keys := []Key{{"T", 0}}
	taker := &Poll{Keys: keys, Group: "G", Filter: fb} // popJob.taker
	require.Nil(t, r.WantsOf("G", "T", 0))

	r.AddTaker(taker) // the request arrives
	require.True(t, r.WantsOf("G", "T", 0).WantsProps(tagProps("B")), "a running B POP wants B")

	var woken bool
	p := &Poll{Keys: keys, Group: "G", Filter: fb, DeadlineMillis: 60000,
		OnWake: func() { woken = true }, OnExpire: func() { t.Error("expired") }}
	require.Equal(t, Parked, r.Park(p, r.Snapshot(keys)))
	r.Wake("T", 0)
	require.True(t, woken, "the append woke the parked poll")
	require.Zero(t, r.ParkedCount())
	w := r.WantsOf("G", "T", 0)
	require.True(t, w.WantsProps(tagProps("B")), "woken, not yet re-parked or answered: its B messages stay reserved")
	require.False(t, w.WantsProps(tagProps("A")))
	require.Nil(t, r.WantsOf("H", "T", 0), "other groups are not affected")
	require.Equal(t, 1, r.Stats().Takers)

	r.RemoveTaker(taker) // answered
	require.Nil(t, r.WantsOf("G", "T", 0))
	require.Zero(t, r.Stats().Takers)
}
