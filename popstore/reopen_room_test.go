package popstore_test

import (
	"bytes"
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

// fillTo fallocates a file name in dir that leaves free bytes available
// on its filesystem, and returns its path.
func fillTo(t *testing.T, dir, name string, free int64) string {
	t.Helper()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	f, err := os.Create(filepath.Join(dir, name))
	require.NoError(t, err)
	defer f.Close()
	if n := int64(st.Bavail)*st.Bsize - free; n > 0 {
		require.NoError(t, unix.Fallocate(int(f.Fd()), 0, 0, n))
	}
	return f.Name()
}

// listing returns the names and sizes of dir's files.
func listing(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	m := make(map[string]int64, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		require.NoError(t, err)
		m[e.Name()] = fi.Size()
	}
	return m
}

// TestStartWithoutRoomTouchesNothing: a store stopped on a nearly full
// disk keeps its unflushed writes in the WAL (Close's flush needs room);
// a start then refuses with ErrNoRoom before RocksDB's open writes
// anything, since a failing recovery flush can leave a family's finished
// blob file behind, unreferenced, and every later start would need that
// much more room (found on a full 400 MB disk: 132 MB). Once space is
// freed the start replays the WAL and every message is there.
func TestStartWithoutRoomTouchesNothing(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 96)
	dir := filepath.Join(mnt, "db")
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	const n = 320 // 16 KiB each, one per batch: kept in the WAL, not the commit log
	for i := 0; i < n; i++ {
		tx := s.Begin()
		require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
			_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, bytes.Repeat([]byte{byte(i)}, 16<<10)))
			return err
		}))
		require.NoError(t, tx.Commit())
	}
	// Fill the disk to 1 MiB free, close (Close's flush is skipped for
	// lack of room), then fill again what the close gave back (its
	// preallocations).
	ballast := fillTo(t, mnt, "ballast1", 1<<20)
	require.NoError(t, s.Close())
	ballast2 := fillTo(t, mnt, "ballast2", 1<<20)
	wal, _, err := popstore.WALSpace(dir)
	require.NoError(t, err)
	require.Greater(t, wal, uint64(4<<20), "Close flushed the memtables although the disk was full")

	before := listing(t, dir)
	_, err = popstore.Open(popstore.Options{Dir: dir})
	require.ErrorIs(t, err, popstore.ErrNoRoom)
	require.Regexp(t, `bytes needed \(\d+ to flush .*\), \d+ free: free at least \d+ more bytes, then start again`, err.Error())
	require.Equal(t, before, listing(t, dir), "a refused start changed the data directory")

	require.NoError(t, os.Remove(ballast))
	require.NoError(t, os.Remove(ballast2))
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, int64(n), s.MaxOffset("T", 0))
	for _, i := range []int{0, n / 2, n - 1} {
		recs, _, err := s.ReadMessages("T", 0, int64(i), 1, 1<<20)
		require.NoError(t, err)
		require.Len(t, recs, 1)
		require.Equal(t, byte(i), popstoretest.Body(recs[0])[0], "message %d", i)
	}
}

// TestStartGivesBackWALPreallocation: blocks preallocated past a WAL's end
// (a killed process's) are given back before a start's room check: a
// 4 KiB WAL holding 8 MiB holds 4 KiB afterwards, with its bytes intact.
// Found on a 64 MB filesystem where a 43-byte WAL held 42 MB and the
// broker could not start until the file was truncated by hand.
func TestStartGivesBackWALPreallocation(t *testing.T) {
	dir := popstoretest.Tmpfs(t, 32)
	path := filepath.Join(dir, "000009.log")
	f, err := os.Create(path)
	require.NoError(t, err)
	body := bytes.Repeat([]byte{7}, 4096)
	_, err = f.Write(body)
	require.NoError(t, err)
	require.NoError(t, unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 8<<20))
	require.NoError(t, f.Close())
	_, prealloc, err := popstore.WALSpace(dir)
	require.NoError(t, err)
	require.Greater(t, prealloc, uint64(7<<20))

	popstore.ReleaseWALTails(dir)
	wal, prealloc, err := popstore.WALSpace(dir)
	require.NoError(t, err)
	require.EqualValues(t, 4096, wal)
	require.Zero(t, prealloc)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, body, got)
}

// TestOpenOfALockedDirectory: a second Open of a directory whose LOCK is
// held (here by this process's first store) says the directory is in use,
// before the room check can blame the disk, and the first store goes on.
func TestOpenOfALockedDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	_, err = popstore.Open(popstore.Options{Dir: dir})
	require.ErrorIs(t, err, popstore.ErrLocked)
	require.Contains(t, err.Error(), "LOCK is locked")
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, []byte("x")))
		return err
	}))
	require.NoError(t, tx.Commit())
}

// TestWALFitsSmallFilesystem: on a 256 MiB filesystem the WAL bound (and
// with it RocksDB's preallocation of a new WAL, 1.1 × the largest write
// buffer otherwise: 72 MiB) is 16 MiB, 1/16 of the filesystem, as the
// OPTIONS file says, and the live WAL holds no more than that allocated.
func TestWALFitsSmallFilesystem(t *testing.T) {
	dir := filepath.Join(popstoretest.Tmpfs(t, 256), "db")
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	tx := s.Begin()
	require.NoError(t, tx.Do(func(tx *popstore.Txn) error {
		_, _, err := tx.AppendMessage("T", 0, popstoretest.Record("T", 0, 1000, []byte("x")))
		return err
	}))
	require.NoError(t, tx.Commit())
	opts, err := filepath.Glob(filepath.Join(dir, "OPTIONS-*"))
	require.NoError(t, err)
	require.NotEmpty(t, opts)
	text, err := os.ReadFile(opts[len(opts)-1])
	require.NoError(t, err)
	require.Contains(t, string(text), "max_total_wal_size=16777216\n")
	wal, prealloc, err := popstore.WALSpace(dir)
	require.NoError(t, err)
	require.LessOrEqual(t, wal+prealloc, uint64(16<<20)+1<<20, "WAL bytes %d + preallocated %d", wal, prealloc)
}

// TestCreateWithoutRoom: a new database on a filesystem with less than
// 4 MiB free is refused before RocksDB's open with the numbers and what to
// do (it failed with RocksDB's own "000000.dbtmp: No space left on device"),
// leaving the directory empty; with room it opens.
func TestCreateWithoutRoom(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 16)
	dir := filepath.Join(mnt, "db")
	require.NoError(t, os.Mkdir(dir, 0o755))
	ballast := fillTo(t, mnt, "ballast", 1<<20)
	_, err := popstore.Open(popstore.Options{Dir: dir})
	require.ErrorIs(t, err, popstore.ErrNoRoom)
	require.Regexp(t, `create .*: a new database needs 4194304 bytes free, \d+ free: free at least \d+ more bytes, then start again`, err.Error())
	require.Empty(t, listing(t, dir), "a refused creation wrote into the data directory")

	require.NoError(t, os.Remove(ballast))
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
