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

// TestTrimOldInfoLogs: of 20 rotated info logs the newest keptInfoLogs
// stay (RocksDB trims them only after an open succeeds, so failed starts
// piled them up); other files are not touched.
func TestTrimOldInfoLogs(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 20; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("LOG.old.17966344%08d", i)), nil, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "LOG"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "000004.log"), []byte("wal"), 0o644))
	trimOldInfoLogs(dir)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.Len(t, names, keptInfoLogs+2)
	require.Contains(t, names, "000004.log")
	require.Contains(t, names, "LOG")
	require.Contains(t, names, fmt.Sprintf("LOG.old.17966344%08d", 19))
	require.NotContains(t, names, fmt.Sprintf("LOG.old.17966344%08d", 11))
}
