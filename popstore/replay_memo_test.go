package popstore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplayBytesMemo: while the database is down (closed by a failed
// Reopen) the read-only measure of the WAL replay is taken once per WAL
// state, not on every probe of the writer: with CURRENT moved away (a
// read-only open would fail) the measure is still answered; once a WAL
// file changes it is taken again (and fails here).
func TestReplayBytesMemo(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	tx := s.Begin()
	for i := 0; i < 64; i++ {
		tx.PutRawMeta(fmt.Sprintf("x/memo%03d", i), make([]byte, 4096))
	}
	require.NoError(t, tx.Commit())

	s.closeMu.Lock()
	s.closeDB()
	s.closeMu.Unlock()
	defer func() { require.NoError(t, s.Close()) }()
	mem, ok := s.replayBytes()
	require.True(t, ok)
	require.Greater(t, mem, uint64(64*4096), "the replayed memtables hold the unflushed writes")

	require.NoError(t, os.Rename(filepath.Join(dir, "CURRENT"), filepath.Join(dir, "CURRENT.away")))
	again, ok := s.replayBytes()
	require.True(t, ok, "measured again although the WAL did not change")
	require.Equal(t, mem, again)

	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	f, err := os.OpenFile(logs[len(logs)-1], os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, ok = s.replayBytes()
	require.False(t, ok, "a changed WAL must be measured again")
	require.NoError(t, os.Rename(filepath.Join(dir, "CURRENT.away"), filepath.Join(dir, "CURRENT")))
}
