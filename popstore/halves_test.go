package popstore_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// putHalf stores one half of group g due at due and returns its offsets.
func putHalf(t *testing.T, s *popstore.Store, g string, due int64, body string) (phys, seq int64) {
	t.Helper()
	commit(t, s, func(tx *popstore.Txn) (err error) {
		phys, seq, err = tx.PutHalf(g, due, popstoretest.Record("RMQ_SYS_TRANS_HALF_TOPIC", 0, 1, []byte(body)))
		return err
	})
	return phys, seq
}

// TestHalvesPutGetAndInvisible: a half gets a physical offset from the
// message counter and the next sequence number, both written into its
// record; it is in no queue and behind no physical-offset index entry;
// Store.Half and the due index find it.
func TestHalvesPutGetAndInvisible(t *testing.T) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	appendN(t, s, "T", 0, 0, 1, 1)
	p0, q0 := putHalf(t, s, "PG", 5000, "h0")
	p1, q1 := putHalf(t, s, "PG", 4000, "h1")
	require.EqualValues(t, 0, q0)
	require.EqualValues(t, 1, q1)
	require.Greater(t, p0, int64(0), "after the appended message")
	require.Greater(t, p1, p0)
	require.EqualValues(t, 2, s.PendingHalves())

	h, ok, err := s.Half(p0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "PG", h.ProducerGroup)
	require.EqualValues(t, 5000, h.DueMillis)
	require.Equal(t, q0, popstoretest.QueueOffset(h.Record))
	require.Equal(t, p0, popstoretest.PhysicalOffset(h.Record))
	require.Equal(t, "h0", string(popstoretest.Body(h.Record)))

	_, err = s.MessageByPhysicalOffset(p0)
	require.ErrorIs(t, err, popstore.ErrNotFound, "no physical-offset index entry")
	require.EqualValues(t, 1, s.MaxOffset("T", 0))
	require.Zero(t, s.MaxOffset("RMQ_SYS_TRANS_HALF_TOPIC", 0), "in no queue")

	due, err := s.ScanHalves(popstore.HalfDue{}, 4500, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, due, 1)
	require.Equal(t, p1, due[0].PhysicalOffset)
	all, err := s.ScanHalves(popstore.HalfDue{}, 1<<40, 10, 1<<20)
	require.NoError(t, err)
	require.Equal(t, []int64{p1, p0}, []int64{all[0].PhysicalOffset, all[1].PhysicalOffset}, "due order")
	rest, err := s.ScanHalves(all[0].Due().After(), 1<<40, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	next, ok, err := s.NextHalfDue(popstore.HalfDue{})
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 4000, next)

	tx := s.Begin()
	defer tx.Discard()
	_, _, err = tx.PutHalf("bad@group", 1, popstoretest.Record("X", 0, 1, nil))
	require.ErrorIs(t, err, popstore.ErrBadName)
	_, _, err = tx.PutHalf("PG", 1, []byte("short"))
	require.ErrorIs(t, err, popstore.ErrBadRecord)
}

// TestHalvesCommitDeleteUpdate: CommitHalf appends the message and removes
// the half in one batch, and a second decision finds nothing and writes
// nothing; UpdateHalfCheck moves the due entry; reads inside a Txn see its
// own writes; a failed op leaves no trace.
func TestHalvesCommitDeleteUpdate(t *testing.T) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	pa, _ := putHalf(t, s, "PG", 1000, "a")
	pb, _ := putHalf(t, s, "PG", 1000, "b")

	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		qo, _, found, err := tx.CommitHalf(pa, "T", 2, popstoretest.Record("T", 2, 1, []byte("a")))
		require.True(t, found)
		require.EqualValues(t, 0, qo)
		if err != nil {
			return err
		}
		_, ok, err := tx.GetHalf(pa)
		require.False(t, ok, "the Txn sees its own delete")
		_, _, found, err2 := tx.CommitHalf(pa, "T", 2, popstoretest.Record("T", 2, 1, []byte("a")))
		require.False(t, found, "second decision in the same batch")
		return errors.Join(err, err2)
	}))
	n := tx.Count()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		found, err := tx.DeleteHalf(pa)
		require.False(t, found)
		return err
	}))
	require.Equal(t, n, tx.Count(), "a missing half writes nothing")
	require.NoError(t, tx.Commit())
	require.EqualValues(t, 1, s.MaxOffset("T", 2))
	require.EqualValues(t, 1, s.PendingHalves())
	_, ok, err := s.Half(pa)
	require.NoError(t, err)
	require.False(t, ok)

	boom := errors.New("boom")
	tx = s.Begin()
	require.ErrorIs(t, tx.Do(func(tx *popstore.Txn) error {
		if _, err := tx.DeleteHalf(pb); err != nil {
			return err
		}
		if _, _, err := tx.PutHalf("PG", 1, popstoretest.Record("H", 0, 1, nil)); err != nil {
			return err
		}
		return boom
	}), boom)
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		h, ok, err := tx.GetHalf(pb)
		require.True(t, ok, "rolled back delete")
		require.EqualValues(t, 0, h.Checks)
		found, err2 := tx.UpdateHalfCheck(pb, 1, 9000)
		require.True(t, found)
		h, _, _ = tx.GetHalf(pb)
		require.EqualValues(t, 9000, h.DueMillis)
		return errors.Join(err, err2)
	}))
	require.NoError(t, tx.Commit())
	require.EqualValues(t, 1, s.PendingHalves(), "the rolled-back put is not counted")
	got, err := s.ScanHalves(popstore.HalfDue{}, 8999, 10, 1<<20)
	require.NoError(t, err)
	require.Empty(t, got, "due entry moved")
	got, err = s.ScanHalves(popstore.HalfDue{}, 9000, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.EqualValues(t, 1, got[0].Checks)
}

// TestHalvesSurviveReopen: halves, their due entries, the count and the
// sequence are durable; the sequence continues after a reopen.
func TestHalvesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	p0, _ := putHalf(t, s, "PG", 100, "x")
	putHalf(t, s, "PG", 200, "y")
	commit(t, s, func(tx *popstore.Txn) error { _, err := tx.DeleteHalf(p0); return err })
	require.NoError(t, s.Close())

	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	require.EqualValues(t, 1, s.PendingHalves())
	all, err := s.ScanHalves(popstore.HalfDue{}, 1<<40, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "y", string(popstoretest.Body(all[0].Record)))
	p2, q2 := putHalf(t, s, "PG", 300, "z")
	require.EqualValues(t, 2, q2, "sequence continues")
	require.Greater(t, p2, all[0].PhysicalOffset)
}
