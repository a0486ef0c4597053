package popstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestWALSpaceCountsPreallocation: the room check before a reopen counts
// the blocks a WAL holds preallocated past its end (RocksDB fallocates
// about 1.1 × the memtable and gives the rest back when it closes the
// file) as free: a 4 KiB WAL holding 8 MiB is 4 KiB to replay and
// 8 MiB − 4 KiB to reclaim. Found on a full 400 MB disk where freeing
// 120 MB did not let the store reopen (the live WAL held 144 MB).
func TestWALSpaceCountsPreallocation(t *testing.T) {
	dir := popstoretest.Tmpfs(t, 32)
	f, err := os.Create(filepath.Join(dir, "000007.log"))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(make([]byte, 4096))
	require.NoError(t, err)
	require.NoError(t, unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 8<<20))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "000001.sst"), make([]byte, 1<<20), 0o644))

	wal, prealloc, err := popstore.WALSpace(dir)
	require.NoError(t, err)
	require.EqualValues(t, 4096, wal, "only the WAL's bytes are replayed")
	require.EqualValues(t, 8<<20-4096, prealloc)
}
