package popstore_test

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// appendBatch appends n messages of size-byte bodies filled with fill to
// topic/0 in one Txn and returns their physical offsets and the commit's
// error.
func appendBatch(t *testing.T, s *popstore.Store, topic string, n, size int, fill byte) ([]int64, error) {
	t.Helper()
	var phys []int64
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		for range n {
			_, p, err := tx.AppendMessage(topic, 0, popstoretest.Record(topic, 0, 1000, bytes.Repeat([]byte{fill}, size)))
			if err != nil {
				return err
			}
			phys = append(phys, p)
		}
		return nil
	}))
	return phys, tx.Commit()
}

// A batch written to the commit log keeps one physical-offset index entry
// (its first record's) and a batch that stays inline one per record; every
// record of both is found by its physical offset, also after Close and Open.
func TestPhysicalIndexEntriesPerBatch(t *testing.T) {
	dir := t.TempDir()
	opts := popstore.Options{Dir: dir, RetentionMillis: -1}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	big, err := appendBatch(t, s, "T", 40, 2000, 'B') // 80 KB: the commit log
	require.NoError(t, err)
	require.Equal(t, 1, s.PhysIndexEntries())
	small, err := appendBatch(t, s, "T", 5, 1000, 'S') // 5 KB: inline
	require.NoError(t, err)
	require.Equal(t, 1+5, s.PhysIndexEntries())
	require.NoError(t, s.Close())
	s, err = popstore.Open(opts)
	require.NoError(t, err)
	defer s.Close()
	for i, p := range append(big, small...) {
		want, err := s.ReadMessage("T", 0, int64(i))
		require.NoError(t, err)
		got, err := s.MessageByPhysicalOffset(p)
		require.NoError(t, err, "message %d", i)
		require.True(t, bytes.Equal(want, got), "message %d", i)
		for _, off := range []int64{1, -1} {
			_, err = s.MessageByPhysicalOffset(p + off)
			require.ErrorIs(t, err, popstore.ErrNotFound, "message %d's offset %+d", i, off)
		}
	}
}

// The commit log keeps the bytes of a batch whose RocksDB write failed; the
// queue offsets and physical offsets it had are taken again by inline
// records. Looking those physical offsets up never answers with the
// failed batch's records.
func TestPhysicalOffsetOfFailedBatchNotFound(t *testing.T) {
	var fail atomic.Bool
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: -1,
		WriteHook: func(_ uint64, write func() error) error {
			if fail.Load() {
				return fmt.Errorf("test refuses the write: %w", popstore.ErrWriteRejected)
			}
			return write()
		}})
	fail.Store(true)
	stale, err := appendBatch(t, s, "T", 40, 2000, 'X')
	require.ErrorIs(t, err, popstore.ErrWriteRejected)
	fail.Store(false)
	for range 10 {
		_, err := appendBatch(t, s, "T", 10, 1000, 'R') // 10 KB each: inline
		require.NoError(t, err)
	}
	_, hi, err := s.CommitLogExtent()
	require.NoError(t, err)
	checked := 0
	for i, p := range stale {
		got, err := s.MessageByPhysicalOffset(p)
		if err == nil {
			require.False(t, bytes.Contains(got, bytes.Repeat([]byte{'X'}, 100)), "stale record %d returned", i)
			continue
		}
		require.ErrorIs(t, err, popstore.ErrNotFound)
		if p+2100 <= hi {
			checked++
		}
	}
	require.Greater(t, checked, 10, "stale records inside the committed extent")
}

// A batch of DefaultCommitLogBatchMinRecords small records uses the commit
// log (one index entry), one record fewer stays inline (one entry each).
func TestCommitLogBatchByRecordCount(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: -1})
	n := popstore.DefaultCommitLogBatchMinRecords
	_, err := appendBatch(t, s, "T", n-1, 100, 'a')
	require.NoError(t, err)
	require.Equal(t, n-1, s.PhysIndexEntries())
	phys, err := appendBatch(t, s, "T", n, 100, 'b')
	require.NoError(t, err)
	require.Equal(t, n-1+1, s.PhysIndexEntries())
	lo, _, err := s.CommitLogExtent()
	require.NoError(t, err)
	require.LessOrEqual(t, lo, phys[0])
	for i, p := range phys {
		got, err := s.MessageByPhysicalOffset(p)
		require.NoError(t, err, "message %d", i)
		require.Equal(t, p, popstoretest.PhysicalOffset(got))
	}
}
