package popstore_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestTimersScanDeleteAndReopen: timer entries are scanned in due order up
// to a bound, in chunks; they are in no queue; their count is durable with
// them; a rolled-back op leaves neither entry nor count.
func TestTimersScanDeleteAndReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	var phys []int64
	commit(t, s, func(tx *popstore.Txn) error {
		for _, due := range []int64{3000, 1000, 2000, 1000} {
			p, err := tx.PutTimer(due, 0, popstoretest.Record("T", 0, 1, []byte(fmt.Sprintf("d%d", due))))
			if err != nil {
				return err
			}
			phys = append(phys, p)
		}
		return nil
	})
	require.EqualValues(t, 4, s.PendingTimers())
	require.Zero(t, s.MaxOffset("T", 0), "a timer is in no queue")
	require.Less(t, phys[0], phys[1], "physical offsets allocated like appends")

	got, err := s.ScanTimers(popstore.TimerKey{}, 2000, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, []int64{1000, 1000, 2000}, []int64{got[0].Key.DueMillis, got[1].Key.DueMillis, got[2].Key.DueMillis})
	require.Equal(t, phys[1], got[0].Key.PhysicalOffset)
	require.Equal(t, phys[1], popstoretest.PhysicalOffset(got[0].Record))
	chunk, err := s.ScanTimers(popstore.TimerKey{}, 5000, 2, 1<<20)
	require.NoError(t, err)
	require.Len(t, chunk, 2, "limit")
	chunk, err = s.ScanTimers(popstore.TimerKey{}, 5000, 10, 1)
	require.NoError(t, err)
	require.Len(t, chunk, 1, "byte bound: at least one")

	boom := errors.New("boom")
	tx := s.Begin()
	require.ErrorIs(t, tx.Do(func(tx *popstore.Txn) error {
		require.NoError(t, tx.DeleteTimer(got[0].Key))
		_, err := tx.PutTimer(9000, 0, popstoretest.Record("T", 0, 1, []byte("x")))
		require.NoError(t, err)
		return boom
	}), boom)
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		if _, _, err := tx.AppendMessage("T", 0, got[0].Record); err != nil {
			return err
		}
		return tx.DeleteTimer(got[0].Key)
	}))
	require.NoError(t, tx.Commit())
	require.EqualValues(t, 3, s.PendingTimers())
	require.EqualValues(t, 1, s.MaxOffset("T", 0))
	next, ok, err := s.NextTimerDue(popstore.TimerKey{})
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 1000, next)

	require.NoError(t, s.Close())
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	require.EqualValues(t, 3, s.PendingTimers(), "count durable")
	all, err := s.ScanTimers(popstore.TimerKey{}, 1<<40, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, all, 3)
	require.Equal(t, phys[3], all[0].Key.PhysicalOffset)
}
