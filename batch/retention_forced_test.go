package batch_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestRunRetentionForcedAboveRatio: with the disk used above
// DiskCleanForciblyRatio a retention pass deletes the oldest tenth of the
// stored time span (at least a minute, never the last minute) although
// --retention (1 h) keeps it all, as a Java broker cleans its oldest
// commit-log files forcibly; below the ratio, or with the ratio 0, the
// same pass deletes nothing.
func TestRunRetentionForcedAboveRatio(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 64)
	var now atomic.Int64
	now.Store(10_000_000)
	store, err := popstore.Open(popstore.Options{Dir: filepath.Join(mnt, "db"), RetentionMillis: 3_600_000, NowMillis: now.Load})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	// Eleven messages stored a minute apart, the oldest ten minutes ago.
	for i := int64(0); i <= 10; i++ {
		ts := now.Load() - 600_000 + i*60_000
		tx := store.Begin()
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, ts, []byte{byte(i)}))
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
	}
	oldest, ok, err := store.OldestStoreTime()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, now.Load()-600_000, oldest)

	off, err := batch.New(store, batch.Options{RetentionInterval: -1}, nil)
	require.NoError(t, err)
	ballast := fillTo(t, mnt, 0.92)
	require.NoError(t, off.RunRetention())
	require.EqualValues(t, 0, store.MinOffset("T", 0), "ratio 0: the forced clean-up is off")
	require.NoError(t, off.Close())

	w, err := batch.New(store, batch.Options{RetentionInterval: -1, DiskCleanForciblyRatio: 0.85}, nil)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.RunRetention())
	require.EqualValues(t, 1, store.MinOffset("T", 0), "the oldest minute (a tenth of ten) goes")
	for i := 2; i <= 10; i++ {
		// A pass's write can switch the WAL and give back its
		// preallocation: fill to the same ratio again.
		require.NoError(t, os.Remove(ballast))
		ballast = fillTo(t, mnt, 0.92)
		require.NoError(t, w.RunRetention())
	}
	require.EqualValues(t, 9, store.MinOffset("T", 0), "never the last minute (messages 9 and 10)")

	require.NoError(t, os.Remove(ballast))
	now.Add(120_000)
	require.NoError(t, w.RunRetention())
	require.EqualValues(t, 9, store.MinOffset("T", 0), "below the ratio nothing more goes")
}

// fillTo writes a ballast file in dir until its filesystem is used about
// ratio of its size, and returns its path.
func fillTo(t *testing.T, dir string, ratio float64) string {
	t.Helper()
	var fs syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &fs))
	total, avail := int64(fs.Blocks)*fs.Bsize, int64(fs.Bavail)*fs.Bsize
	size := avail - int64(float64(total)*(1-ratio))
	require.Positive(t, size, "already used above %g", ratio)
	path := filepath.Join(dir, "ballast")
	require.NoError(t, os.WriteFile(path, make([]byte, size), 0o644))
	return path
}
