package popstore_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// commit runs fn in one Txn op and commits.
func commit(t *testing.T, s *popstore.Store, fn func(tx *popstore.Txn) error) {
	t.Helper()
	tx := s.Begin()
	require.NoError(t, tx.Do(fn))
	require.NoError(t, tx.Commit())
}

func appendN(t *testing.T, s *popstore.Store, topic string, qid int32, from, n int, ts int64) {
	t.Helper()
	commit(t, s, func(tx *popstore.Txn) error {
		for i := from; i < from+n; i++ {
			rec := popstoretest.Record(topic, qid, ts, []byte(fmt.Sprintf("m%d", i)))
			if _, _, err := tx.AppendMessage(topic, qid, rec); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestAppendReadRecover(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)

	var phys []int64
	var lens []int
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		for i := 0; i < 10; i++ {
			rec := popstoretest.Record("T", 0, 1000, []byte(fmt.Sprintf("body-%d", i)))
			qo, po, err := tx.AppendMessage("T", 0, rec)
			require.NoError(t, err)
			require.Equal(t, int64(i), qo)
			require.Equal(t, qo, popstoretest.QueueOffset(rec), "queueOffset patched at byte 20")
			require.Equal(t, po, popstoretest.PhysicalOffset(rec), "physicalOffset patched at byte 28")
			phys = append(phys, po)
			lens = append(lens, len(rec))
		}
		return nil
	}))
	require.Equal(t, int64(0), s.MaxOffset("T", 0), "nothing visible before commit")
	require.Equal(t, int64(10), tx.MaxOffset("T", 0))
	require.NoError(t, tx.Commit())
	require.Equal(t, int64(10), s.MaxOffset("T", 0))
	for i := 1; i < len(phys); i++ {
		require.Equal(t, phys[i-1]+int64(lens[i-1]), phys[i], "physical offset is a byte position")
	}

	recs, next, err := s.ReadMessages("T", 0, 3, 4, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 4)
	require.Equal(t, int64(7), next)
	require.Equal(t, "body-3", string(popstoretest.Body(recs[0])))
	require.Equal(t, int64(6), popstoretest.QueueOffset(recs[3]))

	// maxBytes: two records fit, the third does not; the first always comes back.
	recs, next, err = s.ReadMessages("T", 0, 0, 100, 2*lens[0]+1)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, int64(2), next)
	recs, _, err = s.ReadMessages("T", 0, 0, 100, 1)
	require.NoError(t, err)
	require.Len(t, recs, 1)

	// Past the end and unknown queue.
	recs, next, err = s.ReadMessages("T", 0, 50, 10, 1<<20)
	require.NoError(t, err)
	require.Empty(t, recs)
	require.Equal(t, int64(10), next)
	recs, _, err = s.ReadMessages("T", 1, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Empty(t, recs)

	got, err := s.MessageByPhysicalOffset(phys[5])
	require.NoError(t, err)
	require.Equal(t, "body-5", string(popstoretest.Body(got)))
	_, err = s.MessageByPhysicalOffset(phys[5] + 1)
	require.ErrorIs(t, err, popstore.ErrNotFound)

	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Close(), popstore.ErrClosed)
	_, _, err = s.ReadMessages("T", 0, 0, 1, 1)
	require.ErrorIs(t, err, popstore.ErrClosed)

	// Reopen: extents and the physical offset continue.
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, int64(10), s.MaxOffset("T", 0))
	require.Equal(t, int64(0), s.MinOffset("T", 0))
	commit(t, s, func(tx *popstore.Txn) error {
		rec := popstoretest.Record("T", 0, 1000, []byte("after"))
		qo, po, err := tx.AppendMessage("T", 0, rec)
		require.Equal(t, int64(10), qo)
		require.Equal(t, phys[9]+int64(lens[9]), po)
		return err
	})
	require.Equal(t, int64(11), s.MaxOffset("T", 0))
}

func TestAppendRejectsBadRecords(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	tx := s.Begin()
	defer tx.Discard()
	rec := popstoretest.Record("T", 1, 0, []byte("x"))
	_, _, err := tx.AppendMessage("T", 0, rec)
	require.ErrorIs(t, err, popstore.ErrBadRecord, "QUEUEID mismatch")
	_, _, err = tx.AppendMessage("T", 1, rec[:len(rec)-1])
	require.ErrorIs(t, err, popstore.ErrBadRecord, "TOTALSIZE mismatch")
	_, _, err = tx.AppendMessage("T", 1, rec[:40])
	require.ErrorIs(t, err, popstore.ErrBadRecord, "short")
	_, _, err = tx.AppendMessage("a@b", 1, rec)
	require.ErrorIs(t, err, popstore.ErrBadName)
	_, _, err = tx.AppendMessage("", 1, rec)
	require.ErrorIs(t, err, popstore.ErrBadName)
}

func TestDoRollsBackFailedOp(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	ck := func(off int64) popstore.Checkpoint {
		return popstore.Checkpoint{Key: popstore.CheckpointKey{VisibleAtMillis: 5000, Group: "G", Topic: "T", QueueId: 0, QueueOffset: off}}
	}
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1, []byte("keep-0")))
		require.NoError(t, err)
		require.NoError(t, tx.PutCheckpoint(ck(0)))
		return tx.SetConsumerOffset("G", "T", 0, 1)
	}))
	boom := errors.New("boom")
	require.ErrorIs(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1, []byte("drop")))
		require.NoError(t, err)
		require.NoError(t, tx.PutCheckpoint(ck(1)))
		require.NoError(t, tx.DeleteCheckpoint(ck(0).Key))
		require.NoError(t, tx.SetConsumerOffset("G", "T", 0, 2))
		require.NoError(t, tx.PutTopic(popstore.TopicMeta{TopicName: "Dropped"}))
		return boom
	}), boom)
	require.ErrorIs(t, tx.Do(func(tx *popstore.Txn) error {
		require.NoError(t, tx.PutCheckpoint(ck(2)))
		_, ok, err := tx.GetCheckpoint(ck(2).Key)
		require.NoError(t, err)
		require.True(t, ok, "an op reads its own writes")
		panic("apply bug")
	}), popstore.ErrApplyPanic)
	_, ok, err := tx.GetCheckpoint(ck(2).Key)
	require.NoError(t, err)
	require.False(t, ok, "the panicked op's write is gone from the overlay")
	// The overlay forgot the failed ops.
	_, ok, err = tx.GetCheckpoint(ck(0).Key)
	require.NoError(t, err)
	require.True(t, ok, "delete of a failed op must be undone")
	_, ok, _ = tx.GetCheckpoint(ck(1).Key)
	require.False(t, ok)
	off, _ := tx.ConsumerOffset("G", "T", 0)
	require.Equal(t, int64(1), off)
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		qo, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1, []byte("keep-1")))
		require.Equal(t, int64(1), qo, "the rolled-back append released its queueOffset")
		return err
	}))
	require.NoError(t, tx.Commit())

	require.Equal(t, int64(2), s.MaxOffset("T", 0))
	recs, _, err := s.ReadMessages("T", 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, "keep-0", string(popstoretest.Body(recs[0])))
	require.Equal(t, "keep-1", string(popstoretest.Body(recs[1])))
	cks, err := s.ScanCheckpoints(0, 1<<62, 100)
	require.NoError(t, err)
	require.Len(t, cks, 1)
	require.Equal(t, int64(0), cks[0].Key.QueueOffset)
	off, ok = s.ConsumerOffset("G", "T", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), off)
	_, ok = s.Topic("Dropped")
	require.False(t, ok)
}

func TestFailedWritePublishesNothing(t *testing.T) {
	var fail atomic.Bool
	var calls atomic.Int32
	hook := func(_ uint64, write func() error) error {
		calls.Add(1)
		if fail.Load() {
			return fmt.Errorf("injected: %w", popstore.ErrWriteRejected)
		}
		return write()
	}
	s, _ := popstoretest.Open(t, popstore.Options{WriteHook: hook})
	// A Txn without writes does no I/O.
	tx := s.Begin()
	require.NoError(t, tx.Do(func(*popstore.Txn) error { return nil }))
	require.NoError(t, tx.Commit())
	require.Equal(t, int32(0), calls.Load())

	appendN(t, s, "T", 0, 0, 2, 1)
	fail.Store(true)
	tx = s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1, []byte("lost")))
		require.NoError(t, err)
		return tx.SetConsumerOffset("G", "T", 0, 9)
	}))
	require.ErrorIs(t, tx.Commit(), popstore.ErrWriteRejected)
	require.Equal(t, int64(2), s.MaxOffset("T", 0))
	_, ok := s.ConsumerOffset("G", "T", 0)
	require.False(t, ok)
	fail.Store(false)
	appendN(t, s, "T", 0, 2, 1, 1)
	recs, _, err := s.ReadMessages("T", 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, "m2", string(popstoretest.Body(recs[2])), "offset 2 reused after the failed batch")
}

func TestAppendListener(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	got := map[string]int64{}
	s.SetAppendListener(func(topic string, qid int32, max int64) { got[fmt.Sprintf("%s/%d", topic, qid)] = max })
	commit(t, s, func(tx *popstore.Txn) error {
		for _, q := range []int32{0, 0, 0, 2} {
			if _, _, err := tx.AppendMessage("T", q, popstoretest.Record("T", q, 1, nil)); err != nil {
				return err
			}
		}
		return tx.SetConsumerOffset("G", "T", 1, 3)
	})
	require.Equal(t, map[string]int64{"T/0": 3, "T/2": 1}, got)
}

func TestWALSyncsCountsSyncedWrites(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{Statistics: true})
	n0, ok := s.WALSyncs()
	require.True(t, ok)
	appendN(t, s, "T", 0, 0, 3, 1)
	appendN(t, s, "T", 0, 3, 3, 1)
	n, _ := s.WALSyncs()
	require.Equal(t, n0+2, n, "one WAL sync per committed Txn")
	s2, _ := popstoretest.Open(t, popstore.Options{})
	_, ok = s2.WALSyncs()
	require.False(t, ok)
}

// Opening a store many times (the writer reopens it once a second while a
// fault lasts) keeps a bounded number of RocksDB info logs.
func TestReopensKeepBoundedInfoLogs(t *testing.T) {
	dir := t.TempDir()
	for range 14 {
		s, err := popstore.Open(popstore.Options{Dir: dir})
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
	logs, err := filepath.Glob(filepath.Join(dir, "LOG*"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	require.LessOrEqual(t, len(logs), 8, "info logs: %v", logs)
}
