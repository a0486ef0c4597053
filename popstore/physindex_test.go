package popstore_test

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
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

// Offsets near the int64 limits and offsets inside records answer
// ErrNotFound without a panic, and an offset whose bytes read as a large
// TOTALSIZE allocates nothing like it (the record is decoded in place).
func TestMessageByPhysicalOffsetBogus(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: -1})
	// 0x00100000 repeated: read as TOTALSIZE, 1 MiB.
	body := bytes.Repeat([]byte{0x00, 0x10, 0x00, 0x00}, 1024)
	var phys []int64
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		for range 80 {
			_, p, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, body))
			if err != nil {
				return err
			}
			phys = append(phys, p)
		}
		return nil
	}))
	require.NoError(t, tx.Commit())
	for range 8 { // committed bytes well past phys + 1 MiB
		_, err := appendBatch(t, s, "U", 80, 4096, 'u')
		require.NoError(t, err)
	}
	for _, p := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 4, math.MaxInt64 - 60, math.MinInt64, -1} {
		_, err := s.MessageByPhysicalOffset(p)
		require.ErrorIs(t, err, popstore.ErrNotFound, "offset %d", p)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	inside := phys[40] + 200 // inside the body: the bytes read as 1 MiB
	for k := range 20 {
		_, err := s.MessageByPhysicalOffset(inside + int64(4*k))
		require.ErrorIs(t, err, popstore.ErrNotFound)
	}
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "20 lookups inside a record allocated")
	got, err := s.MessageByPhysicalOffset(phys[40])
	require.NoError(t, err)
	require.Equal(t, phys[40], popstoretest.PhysicalOffset(got))
}

// After retention trims the index entry of a commit-log batch whose later
// records live on, EarliestMessageTime still answers from those records
// (the first message of each queue), not -1.
func TestEarliestMessageTimeWithoutIndexEntries(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: -1})
	_, err := appendBatch(t, s, "T", 80, 1000, 'e')
	require.NoError(t, err)
	require.Equal(t, 1, s.PhysIndexEntries())
	first, err := s.ReadMessage("T", 0, 0)
	require.NoError(t, err)
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		return tx.TrimPhysicalIndex(popstoretest.PhysicalOffset(first) + 1)
	}))
	require.NoError(t, tx.Commit())
	require.Equal(t, 0, s.PhysIndexEntries())
	ts, err := s.EarliestMessageTime()
	require.NoError(t, err)
	require.Equal(t, int64(1000), ts)
}
