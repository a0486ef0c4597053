package popstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// A commit-log segment cut shorter than its committed records (after a
// crash, or by hand) makes Open fail naming the file, where it used to
// open and answer as if those messages had expired; the file restored, the
// store opens and reads everything. A segment deleted by hand fails too,
// also the oldest and all of them. Cutting only the unwritten, sparse tail
// is harmless.
func TestCommitLogTruncatedSegmentRefused(t *testing.T) {
	dir := t.TempDir()
	opts := popstore.Options{Dir: dir, RetentionMillis: -1, CommitLogSegmentBytes: 4096, CommitLogBatchMinBytes: -1}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	sizes := []int{1500, 1500, 1500, 2000, 700, 3000, 300}
	appendSized(t, s, 0, sizes[:3]...)
	appendSized(t, s, 3, sizes[3:]...)
	recs, _, err := s.ReadMessages("T", 0, int64(len(sizes)-1), 1, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	end := popstoretest.PhysicalOffset(recs[0]) + int64(len(recs[0])) // the last record's end
	require.NoError(t, s.Close())
	segs := segmentFiles(t, dir)
	require.GreaterOrEqual(t, len(segs), 3)

	last := segs[len(segs)-1]
	start, err := strconv.ParseInt(filepath.Base(last), 10, 64)
	require.NoError(t, err)
	used := int(end - start)
	whole, err := os.ReadFile(last)
	require.NoError(t, err)
	require.Greater(t, len(whole), used)
	require.NoError(t, os.Truncate(last, int64(used)), "cutting the sparse tail past the records")
	s, err = popstore.Open(opts)
	require.NoError(t, err, "a segment still holding every committed byte opens")
	requireStored(t, s, 0, sizes)
	require.NoError(t, s.Close())

	require.NoError(t, os.Truncate(last, int64(used-5)))
	_, err = popstore.Open(opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), filepath.Base(last))
	require.Contains(t, err.Error(), "truncated")
	require.NoError(t, os.WriteFile(last, whole, 0o644))
	s, err = popstore.Open(opts)
	require.NoError(t, err, "restored")
	requireStored(t, s, 0, sizes)
	require.NoError(t, s.Close())

	// A segment deleted by hand: in the middle, the oldest (its messages
	// are still indexed, so retention did not remove it), or all of them.
	for _, gone := range [][]string{{segs[1]}, {segs[0]}, segs} {
		var saved [][]byte
		for _, name := range gone {
			b, err := os.ReadFile(name)
			require.NoError(t, err)
			saved = append(saved, b)
			require.NoError(t, os.Remove(name))
		}
		_, err = popstore.Open(opts)
		require.Error(t, err, "%d removed", len(gone))
		require.Contains(t, err.Error(), "missing")
		if len(gone) == 1 {
			require.Contains(t, err.Error(), filepath.Base(gone[0]))
		}
		for i, name := range gone {
			require.NoError(t, os.WriteFile(name, saved[i], 0o644))
		}
		s, err = popstore.Open(opts)
		require.NoError(t, err)
		requireStored(t, s, 0, sizes)
		require.NoError(t, s.Close())
	}
}

// Segments retention removed leave no end behind that would fail a later
// Open.
func TestCommitLogEndsOfRemovedSegments(t *testing.T) {
	var now atomic.Int64
	now.Store(1_000)
	dir := t.TempDir()
	opts := popstore.Options{Dir: dir, RetentionMillis: 10_000, NowMillis: now.Load, CommitLogSegmentBytes: 4096, CommitLogBatchMinBytes: -1}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	for i := range 8 {
		commit(t, s, func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bodyOf(i, 1000)))
			return err
		})
	}
	commit(t, s, func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 20_000, bodyOf(8, 1000)))
		return err
	})
	before := len(segmentFiles(t, dir))
	now.Store(25_000)
	plan, err := s.PlanRetention(now.Load())
	require.NoError(t, err)
	commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
	s.CompactTrimmed(plan)
	require.Less(t, len(segmentFiles(t, dir)), before)
	require.NoError(t, s.Close())
	for range 2 {
		s, err = popstore.Open(opts)
		require.NoError(t, err)
		requireStored(t, s, 8, []int{1000})
		require.NoError(t, s.Close())
	}
}
