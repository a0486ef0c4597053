package popstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// segmentFiles lists the commit log's segment files of the store in dir.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "commitlog", "????????????????????"))
	require.NoError(t, err)
	return names
}

// bodyOf is message i's body: size bytes naming i.
func bodyOf(i, size int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%07d,", i)), size/8+1)[:size]
}

// appendSized appends one message per size to T/0 in one Txn, message i
// of the queue getting bodyOf(i, size).
func appendSized(t *testing.T, s *popstore.Store, from int, sizes ...int) {
	t.Helper()
	commit(t, s, func(tx *popstore.Txn) error {
		for k, n := range sizes {
			if _, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bodyOf(from+k, n))); err != nil {
				return err
			}
		}
		return nil
	})
}

// requireStored reads T/0 from offset from on and checks bodies (one size
// per message from there), queue offsets, physical offsets as byte sums,
// and the reads by queueOffset and by physical offset.
func requireStored(t *testing.T, s *popstore.Store, from int, sizes []int) {
	t.Helper()
	recs, next, err := s.ReadMessages("T", 0, int64(from), len(sizes)+1, 1<<30)
	require.NoError(t, err)
	require.Len(t, recs, len(sizes))
	require.Equal(t, int64(from+len(sizes)), next)
	for k, rec := range recs {
		i := from + k
		require.Equal(t, int64(i), popstoretest.QueueOffset(rec))
		require.True(t, bytes.Equal(bodyOf(i, sizes[k]), popstoretest.Body(rec)), "message %d", i)
		if k > 0 {
			require.Equal(t, popstoretest.PhysicalOffset(recs[k-1])+int64(len(recs[k-1])), popstoretest.PhysicalOffset(rec),
				"message %d: physical offsets are byte sums", i)
		}
		one, err := s.ReadMessage("T", 0, int64(i))
		require.NoError(t, err)
		require.True(t, bytes.Equal(rec, one), "message %d by queueOffset", i)
		byPhys, err := s.MessageByPhysicalOffset(popstoretest.PhysicalOffset(rec))
		require.NoError(t, err)
		require.True(t, bytes.Equal(rec, byPhys), "message %d by physical offset", i)
	}
}

// Records go to the commit log and RocksDB keeps 12-byte references; with
// 4 KiB segments a batch spans several segments, a record larger than a
// segment gets one of its own, and everything reads back, also after
// Close and Open and with smaller budgets (maxBytes counts the records,
// not the references).
func TestCommitLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	opts := popstore.Options{Dir: dir, RetentionMillis: -1, CommitLogSegmentBytes: 4096, CommitLogBatchMinBytes: -1}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	sizes := []int{100, 1500, 1500, 1500, 9000, 10, 3000, 700}
	appendSized(t, s, 0, sizes...)
	appendSized(t, s, len(sizes), 2000, 2000)
	sizes = append(sizes, 2000, 2000)
	requireStored(t, s, 0, sizes)
	n, err := s.StoredValueLen("T", 0, 4)
	require.NoError(t, err)
	require.Equal(t, 12, n, "RocksDB holds a reference")
	segs := len(segmentFiles(t, dir))
	require.GreaterOrEqual(t, segs, 5)

	recs, next, err := s.ReadMessages("T", 0, 1, 10, 3500)
	require.NoError(t, err)
	require.Len(t, recs, 2, "two 1.6 KiB records fit 3,500 bytes, three do not")
	require.Equal(t, int64(3), next)
	var rb popstore.ReadBuffer
	for from := 0; from < len(sizes); from++ {
		got, _, err := s.ReadMessagesInto(&rb, "T", 0, int64(from), 3, 1<<20)
		require.NoError(t, err)
		for k, rec := range got {
			require.True(t, bytes.Equal(bodyOf(from+k, sizes[from+k]), popstoretest.Body(rec)), "from %d, record %d", from, k)
		}
	}

	require.NoError(t, s.Close())
	s, err = popstore.Open(opts)
	require.NoError(t, err)
	defer s.Close()
	requireStored(t, s, 0, sizes)
	appendSized(t, s, len(sizes), 50, 4000)
	requireStored(t, s, 0, append(sizes, 50, 4000))
	require.Equal(t, segs+1, len(segmentFiles(t, dir)))
}

// A data directory written without the commit log opens with it: old
// records read back as they were, new ones go to the commit log, and a
// store opened with the commit log turned off still reads both.
func TestCommitLogMigration(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir, CommitLogMinBytes: -1})
	require.NoError(t, err)
	appendSized(t, s, 0, 600, 700)
	require.NoError(t, s.Close())
	require.Empty(t, segmentFiles(t, dir))

	s, err = popstore.Open(popstore.Options{Dir: dir, CommitLogBatchMinBytes: -1})
	require.NoError(t, err)
	appendSized(t, s, 2, 800, 900)
	requireStored(t, s, 0, []int{600, 700, 800, 900})
	for off, want := range []int{-1, -1, 12, 12} {
		n, err := s.StoredValueLen("T", 0, int64(off))
		require.NoError(t, err)
		if want > 0 {
			require.Equal(t, want, n, "offset %d", off)
		} else {
			require.Greater(t, n, 600, "offset %d stays inline", off)
		}
	}
	require.NoError(t, s.Close())

	s, err = popstore.Open(popstore.Options{Dir: dir, CommitLogMinBytes: -1})
	require.NoError(t, err)
	defer s.Close()
	appendSized(t, s, 4, 1000)
	requireStored(t, s, 0, []int{600, 700, 800, 900, 1000})
	n, err := s.StoredValueLen("T", 0, 4)
	require.NoError(t, err)
	require.Greater(t, n, 1000, "commit log off: inline")
}

// A batch whose RocksDB write fails after its records reached the commit
// log leaves bytes nobody references: the next batch takes the same
// physical offsets (and the segment the failed one created) and reads
// back. A segment past the last durable write, as a crash between the
// commit log and the WAL leaves, is removed at Open.
func TestCommitLogFailedWriteAndOrphans(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	opts := popstore.Options{Dir: dir, RetentionMillis: -1, CommitLogSegmentBytes: 4096, CommitLogBatchMinBytes: -1,
		WriteHook: func(_ uint64, write func() error) error {
			if fail.Load() {
				return fmt.Errorf("test refuses the write: %w", popstore.ErrWriteRejected)
			}
			return write()
		}}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	appendSized(t, s, 0, 3000)
	fail.Store(true)
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		for k := range 3 {
			if _, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bytes.Repeat([]byte{'X'}, 2500+k))); err != nil {
				return err
			}
		}
		return nil
	}))
	require.ErrorIs(t, tx.Commit(), popstore.ErrWriteRejected)
	require.Len(t, segmentFiles(t, dir), 4, "the failed batch created segments")
	fail.Store(false)
	appendSized(t, s, 1, 1200, 1200, 1200)
	requireStored(t, s, 0, []int{3000, 1200, 1200, 1200})
	require.NoError(t, s.Close())

	last := segmentFiles(t, dir)
	orphan := filepath.Join(dir, "commitlog", fmt.Sprintf("%020d", 1<<40))
	require.NoError(t, os.WriteFile(orphan, []byte("never acknowledged"), 0o644))
	s, err = popstore.Open(opts)
	require.NoError(t, err)
	defer s.Close()
	_, err = os.Stat(orphan)
	require.True(t, errors.Is(err, os.ErrNotExist), "segment past the durable end removed")
	require.LessOrEqual(t, len(segmentFiles(t, dir)), len(last))
	requireStored(t, s, 0, []int{3000, 1200, 1200, 1200})
}

// An op that fails inside Txn.Do takes its records out of the commit log
// batch too: the next op's record gets the same physical offset.
func TestCommitLogOpRollback(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: -1, CommitLogBatchMinBytes: -1})
	tx := s.Begin()
	require.Error(t, tx.Do(func(tx *popstore.Txn) error {
		if _, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bytes.Repeat([]byte{'X'}, 999))); err != nil {
			return err
		}
		return errors.New("op fails after its append")
	}))
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bodyOf(0, 640)))
		return err
	}))
	require.NoError(t, tx.Commit())
	requireStored(t, s, 0, []int{640})
	rec, err := s.ReadMessage("T", 0, 0)
	require.NoError(t, err)
	require.Equal(t, int64(0), popstoretest.PhysicalOffset(rec))
}

// Retention removes the segments wholly below the oldest message kept and
// no other; the messages kept still read back.
func TestCommitLogRetentionRemovesSegments(t *testing.T) {
	var now atomic.Int64
	now.Store(1_000)
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir, RetentionMillis: 10_000, NowMillis: now.Load, CommitLogSegmentBytes: 4096, CommitLogBatchMinBytes: -1})
	require.NoError(t, err)
	defer s.Close()
	for i := range 12 { // 12 records of ~1.1 KiB stored at t=1000: 4 segments
		commit(t, s, func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bodyOf(i, 1000)))
			return err
		})
	}
	old := len(segmentFiles(t, dir))
	require.GreaterOrEqual(t, old, 4)
	for i := 12; i < 15; i++ {
		commit(t, s, func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 20_000, bodyOf(i, 1000)))
			return err
		})
	}
	now.Store(25_000)
	plan, err := s.PlanRetention(now.Load())
	require.NoError(t, err)
	commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
	s.CompactTrimmed(plan)
	require.Equal(t, int64(12), s.MinOffset("T", 0))
	left := segmentFiles(t, dir)
	require.Less(t, len(left), old, "old segments removed")
	recs, _, err := s.ReadMessages("T", 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	for k, rec := range recs {
		require.True(t, bytes.Equal(bodyOf(12+k, 1000), popstoretest.Body(rec)))
	}
	// The first segment left holds the oldest message kept.
	floor := popstoretest.PhysicalOffset(recs[0])
	var starts []int64
	for _, name := range left {
		var start int64
		_, err := fmt.Sscanf(filepath.Base(name), "%d", &start)
		require.NoError(t, err)
		starts = append(starts, start)
	}
	require.LessOrEqual(t, starts[0], floor)
	if len(starts) > 1 {
		require.Greater(t, starts[1], floor)
	}
	lo, hi, err := s.CommitLogExtent()
	require.NoError(t, err)
	require.Equal(t, starts[0], lo, "commitLogMinOffset: the oldest segment left")
	last := recs[len(recs)-1]
	require.Equal(t, popstoretest.PhysicalOffset(last)+int64(len(last)), hi)
}

// A batch whose commit-log records total less than CommitLogBatchMinBytes
// keeps them in RocksDB as inline values (one fsync); a larger one writes
// them to the commit log. The batch's other entries (consumer offsets,
// messages of other queues, an op rolled back in between) are unchanged
// by the rebuild, and everything reads back, also after a restart.
func TestCommitLogSmallBatchStaysInWAL(t *testing.T) {
	dir := t.TempDir()
	opts := popstore.Options{Dir: dir, RetentionMillis: -1, CommitLogBatchMinBytes: 8000}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		if err := tx.SetConsumerOffset("G", "T", 0, 7); err != nil {
			return err
		}
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bodyOf(0, 1000)))
		return err
	}))
	require.Error(t, tx.Do(func(tx *popstore.Txn) error {
		if _, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bodyOf(9, 5000))); err != nil {
			return err
		}
		return errors.New("rolled back")
	}))
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		if _, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bodyOf(1, 1200))); err != nil {
			return err
		}
		if err := tx.SetConsumerOffset("G", "U", 3, 9); err != nil {
			return err
		}
		_, _, err := tx.AppendMessage("U", 3, popstoretest.Record("U", 3, 1000, bodyOf(0, 1500)))
		return err
	}))
	require.NoError(t, tx.Commit())
	check := func(s *popstore.Store) {
		for _, k := range []struct {
			topic string
			qid   int32
			off   int64
		}{{"T", 0, 0}, {"T", 0, 1}, {"U", 3, 0}} {
			n, err := s.StoredValueLen(k.topic, k.qid, k.off)
			require.NoError(t, err)
			require.Greater(t, n, 1000, "%s/%d/%d inline", k.topic, k.qid, k.off)
		}
		u, err := s.ReadMessage("U", 3, 0)
		require.NoError(t, err)
		require.True(t, bytes.Equal(bodyOf(0, 1500), popstoretest.Body(u)))
		off, ok := s.ConsumerOffset("G", "T", 0)
		require.True(t, ok)
		require.Equal(t, int64(7), off)
		off, ok = s.ConsumerOffset("G", "U", 3)
		require.True(t, ok)
		require.Equal(t, int64(9), off)
	}
	requireStored(t, s, 0, []int{1000, 1200})
	check(s)
	require.Empty(t, segmentFiles(t, dir), "nothing written to the commit log")

	appendSized(t, s, 2, 3000, 3000, 3000) // 9 KB of records: the commit log
	n, err := s.StoredValueLen("T", 0, 3)
	require.NoError(t, err)
	require.Equal(t, 12, n, "a reference")
	require.Len(t, segmentFiles(t, dir), 1)
	require.NoError(t, s.Close())
	s, err = popstore.Open(opts)
	require.NoError(t, err)
	defer s.Close()
	check(s)
	requireStored(t, s, 2, []int{3000, 3000, 3000})
}

// A physical offset whose topic was deleted and created again does not
// answer with the message now stored under the same queueOffset.
func TestMessageByPhysicalOffsetAfterTopicRecreated(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: -1, CommitLogBatchMinBytes: -1})
	appendSized(t, s, 0, 700, 800)
	old, err := s.ReadMessage("T", 0, 0)
	require.NoError(t, err)
	commit(t, s, func(tx *popstore.Txn) error { return tx.DeleteTopic("T") })
	appendSized(t, s, 0, 900)
	_, err = s.MessageByPhysicalOffset(popstoretest.PhysicalOffset(old))
	require.ErrorIs(t, err, popstore.ErrNotFound)
	now, err := s.ReadMessage("T", 0, 0)
	require.NoError(t, err)
	got, err := s.MessageByPhysicalOffset(popstoretest.PhysicalOffset(now))
	require.NoError(t, err)
	require.True(t, bytes.Equal(now, got))
}

// One Txn of 2,500 records: the commit log writes them with pwritev runs of
// at most 1,024 records, split again where a record starts a new segment;
// every record reads back from the callers' buffers it was written from,
// before and after a reopen, and the callers' buffers are not retained by
// a later Txn.
func TestCommitLogManyRecordsOneBatch(t *testing.T) {
	dir := t.TempDir()
	opts := popstore.Options{Dir: dir, RetentionMillis: -1, CommitLogSegmentBytes: 600_000, CommitLogBatchMinBytes: -1}
	s, err := popstore.Open(opts)
	require.NoError(t, err)
	sizes := make([]int, 2500)
	for i := range sizes {
		sizes[i] = 200 + (i*37)%500
	}
	appendSized(t, s, 0, sizes...)
	requireStored(t, s, 0, sizes)
	require.GreaterOrEqual(t, len(segmentFiles(t, dir)), 2, "the batch crosses a segment")
	require.NoError(t, s.Close())
	s, err = popstore.Open(opts)
	require.NoError(t, err)
	defer s.Close()
	requireStored(t, s, 0, sizes)
}
