package popstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// appendBig appends one 256 KiB message and commits; it returns the
// commit error.
func appendBig(s *popstore.Store, i int) error {
	tx := s.Begin()
	if err := tx.Do(func(tx *popstore.Txn) error {
		rec := popstoretest.Record("T", 0, 1000, bytes.Repeat([]byte{byte(i)}, 256<<10))
		_, _, err := tx.AppendMessage("T", 0, rec)
		return err
	}); err != nil {
		return err
	}
	return tx.Commit()
}

// checkMessages asserts that messages 0..n-1 of T/0 are stored with the
// bodies appendBig gave them.
func checkMessages(t *testing.T, s *popstore.Store, n int) {
	t.Helper()
	require.GreaterOrEqual(t, s.MaxOffset("T", 0), int64(n))
	for i := 0; i < n; i++ {
		recs, _, err := s.ReadMessages("T", 0, int64(i), 1, 1<<20)
		require.NoError(t, err)
		require.Len(t, recs, 1)
		body := popstoretest.Body(recs[0])
		require.Len(t, body, 256<<10)
		require.Equal(t, byte(i), body[0], "message %d", i)
	}
}

// fillAndFail appends until a ballast file has filled the filesystem and
// a commit fails; it returns the number of messages acknowledged (all
// commits before the failure) and the ballast's path.
func fillAndFail(t *testing.T, s *popstore.Store, dir string) (acked int, ballast string) {
	t.Helper()
	for ; acked < 8; acked++ {
		require.NoError(t, appendBig(s, acked))
	}
	ballast = popstoretest.Fill(t, dir)
	for i := 0; i < 64; i++ {
		if err := appendBig(s, acked); err != nil {
			require.False(t, errors.Is(err, popstore.ErrWriteRejected))
			require.True(t, s.WriteFailed())
			return acked, ballast
		}
		acked++ // the write fit in what was left (a partial block)
	}
	t.Fatal("no write failed on a full disk")
	return 0, ""
}

// TestDiskFullWriteFailsAndReopenRecovers: on a full tmpfs a synced write
// returns an error (Debian's librocksdb aborted the process here while its
// LOG file lived in the data directory); later writes fail too; Reopen
// on the full disk either refuses (ErrNoRoom) or succeeds, when the replay's
// flush fits in what closing the WAL gave back (its preallocation, at most
// the WAL bound fitted to this 64 MiB filesystem), and then a large write
// fails again; once the ballast is gone Reopen succeeds, writes succeed,
// and everything acknowledged is still there, also after Close and Open.
func TestDiskFullWriteFailsAndReopenRecovers(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 64)
	dir := filepath.Join(mnt, "db")
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	acked, ballast := fillAndFail(t, s, mnt)

	require.Error(t, appendBig(s, acked), "a second write on the failed store also fails, without aborting")
	if err := s.Reopen(); err != nil {
		require.ErrorIs(t, err, popstore.ErrNoRoom)
	} else {
		failed := false
		for i := 0; i < 64 && !failed; i++ { // what closing gave back fills up again
			if appendBig(s, acked) != nil {
				failed = true
			} else {
				acked++
			}
		}
		require.True(t, failed, "the disk is still full")
		t.Logf("reopened on the full disk; %d more writes fit", acked)
	}
	checkMessages(t, s, acked) // reads still work while the disk is full

	require.NoError(t, os.Remove(ballast))
	require.NoError(t, s.Reopen())
	require.False(t, s.WriteFailed())
	checkMessages(t, s, acked)
	next := int(s.MaxOffset("T", 0))
	for i := 0; i < 4; i++ {
		require.NoError(t, appendBig(s, next+i))
	}
	require.NoError(t, s.Close())

	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	checkMessages(t, s, acked)
	require.Equal(t, int64(next+4), s.MaxOffset("T", 0))
}

// TestDiskFullCloseAndOpenDoNotAbort: Close right after a failed write
// (it used to flush the failed WAL writer and abort), then Open while the
// disk is still full (an error or a store, never an abort), then Open
// after space returned: nothing acknowledged is lost.
func TestDiskFullCloseAndOpenDoNotAbort(t *testing.T) {
	mnt := popstoretest.Tmpfs(t, 64)
	dir := filepath.Join(mnt, "db")
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	acked, ballast := fillAndFail(t, s, mnt)
	require.NoError(t, s.Close())

	if s2, err := popstore.Open(popstore.Options{Dir: dir}); err == nil {
		// The reopen may have freed the old WAL: the write may succeed
		// or fail; it must not abort, nor must the Close after it.
		if err := appendBig(s2, int(s2.MaxOffset("T", 0))); err != nil {
			t.Logf("write on a full disk after reopen: %v", err)
		}
		_ = s2.Close()
	} else {
		t.Logf("open on a full disk: %v", err)
	}
	require.NoError(t, os.Remove(ballast))
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err, fmt.Sprintf("open after freeing space (%d acked)", acked))
	defer s.Close()
	checkMessages(t, s, acked)
	require.NoError(t, appendBig(s, int(s.MaxOffset("T", 0))))
}

// TestCloseFlushesMemtables: a clean Close writes the memtables to table
// files, so no WAL is left to replay. A replay needs about the WAL's size
// in free disk space, which a disk that filled up may no longer have (a
// broker stopped on a full disk then could not start again).
func TestCloseFlushesMemtables(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	const n = 8
	for i := 0; i < n; i++ {
		require.NoError(t, appendBig(s, i))
	}
	require.NoError(t, s.Close())
	var wal int64
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".log" {
			fi, err := e.Info()
			require.NoError(t, err)
			wal += fi.Size()
		}
	}
	require.Less(t, wal, int64(256<<10), "WAL bytes left after a clean Close of %d × 256 KiB messages", n)
	s, err = popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	checkMessages(t, s, n)
}
