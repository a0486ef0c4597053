package popstore_test

import (
	"bytes"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// Retention gives back the pages of the newest segment below the oldest
// message kept (a hole), so a disk smaller than a few 1 GiB segments gets
// space back; the messages kept still read back, and later appends work.
func TestCommitLogRetentionPunchesSegment(t *testing.T) {
	var now atomic.Int64
	now.Store(1_000)
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir, RetentionMillis: 10_000, NowMillis: now.Load,
		CommitLogSegmentBytes: 4 << 20, CommitLogBatchMinBytes: -1})
	require.NoError(t, err)
	defer s.Close()
	add := func(i int, ts int64) {
		commit(t, s, func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, ts, bodyOf(i, 8000)))
			return err
		})
	}
	for i := range 64 { // ~512 KiB stored at t=1000
		add(i, 1000)
	}
	for i := 64; i < 68; i++ {
		add(i, 20_000)
	}
	first, err := s.ReadMessage("T", 0, 0)
	require.NoError(t, err)
	segs := segmentFiles(t, dir)
	require.Len(t, segs, 1)
	allocated := func() int64 {
		fi, err := os.Stat(segs[0])
		require.NoError(t, err)
		return fi.Sys().(*syscall.Stat_t).Blocks * 512
	}
	before := allocated()
	require.Greater(t, before, int64(500<<10))

	now.Store(25_000)
	plan, err := s.PlanRetention(now.Load())
	require.NoError(t, err)
	commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
	s.CompactTrimmed(plan)
	require.EqualValues(t, 64, s.MinOffset("T", 0))
	after := allocated()
	require.Less(t, after, before-int64(480<<10), "the pages below the oldest kept message are a hole (%d → %d bytes)", before, after)

	phys0, _ := popstore.RecordPhysicalOffset(first)
	_, err = s.CommitLogRead(phys0, len(first))
	require.ErrorIs(t, err, popstore.ErrCommitLogGone, "a stale reference below the hole reads as gone, not as zeros")

	add(68, 26_000)
	recs, _, err := s.ReadMessages("T", 0, 64, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	for k, rec := range recs {
		require.True(t, bytes.Equal(bodyOf(64+k, 8000), popstoretest.Body(rec)), "message %d", 64+k)
	}
}
