package popstore_test

import (
	"os"
	"path/filepath"
	"strings"
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

// TestMemtableFitsSmallFilesystem: on a 64 MiB filesystem the messages
// memtable (and so a flush's output and the WAL's preallocation, 1.1 × it)
// is lowered from 128 MiB to the 8 MiB floor (1/32 of the filesystem
// would be 2 MiB), as the OPTIONS file RocksDB writes at open says.
func TestMemtableFitsSmallFilesystem(t *testing.T) {
	dir := filepath.Join(popstoretest.Tmpfs(t, 64), "db")
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	opts, err := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	require.NoError(t, err)
	require.NotEmpty(t, opts)
	text, err := os.ReadFile(opts[len(opts)-1])
	require.NoError(t, err)
	_, messages, ok := strings.Cut(string(text), `[CFOptions "messages"]`)
	require.True(t, ok, "no messages family in %s", opts[len(opts)-1])
	require.Contains(t, messages[:strings.Index(messages+"[", "[")], "write_buffer_size=8388608\n")
}
