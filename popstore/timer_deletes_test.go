package popstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
)

// TestTimerDeletes: markers are durable, scanned by slot range in key
// order, replaced by a second put of the same slot and key, removed by
// DeleteTimerDelete, survive a reopen, take distinct physical offsets
// (the counter survives the reopen too) and do not count as pending
// timers.
func TestTimerDeletes(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	var phys []int64
	put := func(slot, due int64, key string) {
		commit(t, s, func(tx *popstore.Txn) error {
			p, err := tx.PutTimerDelete(slot, due, key)
			phys = append(phys, p)
			return err
		})
	}
	put(2000, 2500, "T+B")
	put(1000, 1999, "T+A")
	put(3000, 3001, "T+C")
	put(2000, 2600, "T+B")
	for i := 1; i < len(phys); i++ {
		require.Greater(t, phys[i], phys[i-1])
	}
	require.Zero(t, s.PendingTimers())

	got, err := s.ScanTimerDeletes(1000, 2000, 10)
	require.NoError(t, err)
	require.Equal(t, []popstore.TimerDelete{{SlotMillis: 1000, Key: "T+A", DueMillis: 1999, PhysicalOffset: phys[1]},
		{SlotMillis: 2000, Key: "T+B", DueMillis: 2600, PhysicalOffset: phys[3]}}, got)
	got, err = s.ScanTimerDeletes(0, 5000, 1)
	require.NoError(t, err)
	require.Len(t, got, 1)

	commit(t, s, func(tx *popstore.Txn) error { return tx.DeleteTimerDelete(2000, "T+B") })
	require.NoError(t, s.Close())
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	got, err = s.ScanTimerDeletes(0, 5000, 10)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "T+A", got[0].Key)
	require.Equal(t, "T+C", got[1].Key)
	put(4000, 4001, "T+D")
	require.Greater(t, phys[4], phys[3], "the physical-offset counter survived the reopen")
}
