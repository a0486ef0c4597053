package popstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestHalvesDiscardKeepsForLateDecision: DiscardHalf keeps the half (and
// its record) readable, leaves the pending count, moves its due entry to
// the expiry and survives a reopen; it is never checked again
// (UpdateHalfCheck and a second DiscardHalf find nothing); CommitHalf
// still decides it, and DeleteHalf of a discarded half does not change
// the count again.
func TestHalvesDiscardKeepsForLateDecision(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	pa, _ := putHalf(t, s, "PG", 1000, "a")
	pb, _ := putHalf(t, s, "PG", 1000, "b")
	pc, _ := putHalf(t, s, "PG", 1000, "c")
	commit(t, s, func(tx *popstore.Txn) error {
		for _, p := range []int64{pa, pb} {
			found, err := tx.DiscardHalf(p, 50_000)
			require.True(t, found)
			if err != nil {
				return err
			}
		}
		h, ok, err := tx.GetHalf(pa)
		require.True(t, ok && h.Discarded, "the Txn sees its own discard")
		again, err2 := tx.DiscardHalf(pa, 60_000)
		require.False(t, again, "discarded once")
		if err2 != nil {
			return err2
		}
		return err
	})
	require.EqualValues(t, 1, s.PendingHalves())
	require.NoError(t, s.Close())

	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	require.EqualValues(t, 1, s.PendingHalves(), "count durable")
	h, ok, err := s.Half(pa)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, h.Discarded)
	require.EqualValues(t, 50_000, h.DueMillis)
	require.Equal(t, "a", string(popstoretest.Body(h.Record)))

	due, err := s.ScanHalves(popstore.HalfDue{}, 49_999, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, due, 1, "only the waiting half before the expiry")
	require.Equal(t, pc, due[0].PhysicalOffset)
	require.False(t, due[0].Discarded)
	due, err = s.ScanHalves(popstore.HalfDue{}, 50_000, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, due, 3)

	commit(t, s, func(tx *popstore.Txn) error {
		found, err := tx.UpdateHalfCheck(pa, 5, 70_000)
		require.False(t, found, "a discarded half is not checked")
		if err != nil {
			return err
		}
		_, _, found, err = tx.CommitHalf(pa, "T", 0, popstoretest.Record("T", 0, 1, []byte("a")))
		require.True(t, found, "late commit")
		if err != nil {
			return err
		}
		found, err = tx.DeleteHalf(pb)
		require.True(t, found, "late rollback or expiry")
		return err
	})
	require.EqualValues(t, 1, s.MaxOffset("T", 0))
	require.EqualValues(t, 1, s.PendingHalves(), "deleting discarded halves leaves the count")
	for _, p := range []int64{pa, pb} {
		_, ok, err := s.Half(p)
		require.NoError(t, err)
		require.False(t, ok)
	}
}
