package popstore_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// appendBodies appends n records of topic/0 with bodies of size bytes
// (distinct per index i) stored at ts, and returns the records as stored.
func appendBodies(t *testing.T, s *popstore.Store, topic string, from, n, size int, ts int64) {
	t.Helper()
	commit(t, s, func(tx *popstore.Txn) error {
		for i := from; i < from+n; i++ {
			body := bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), size/8)
			if _, _, err := tx.AppendMessage(topic, 0, popstoretest.Record(topic, 0, ts, body)); err != nil {
				return err
			}
		}
		return nil
	})
}

// requireBodies reads topic/0 from offset 0 and checks that it holds n
// records whose bodies appendBodies wrote with the given sizes (sizes[i]
// for record i).
func requireBodies(t *testing.T, s *popstore.Store, topic string, sizes []int) {
	t.Helper()
	recs, next, err := s.ReadMessages(topic, 0, 0, len(sizes)+1, 1<<30)
	require.NoError(t, err)
	require.Len(t, recs, len(sizes))
	require.Equal(t, int64(len(sizes)), next)
	for i, rec := range recs {
		require.Equal(t, int64(i), popstoretest.QueueOffset(rec))
		want := bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), sizes[i]/8)
		require.True(t, bytes.Equal(want, popstoretest.Body(rec)), "record %d", i)
		got, err := s.MessageByPhysicalOffset(popstoretest.PhysicalOffset(rec))
		require.NoError(t, err)
		require.True(t, bytes.Equal(rec, got), "record %d by physical offset", i)
	}
}

func blobFiles(t *testing.T, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.blob"))
	require.NoError(t, err)
	return len(files)
}

// Records of at least DefaultBlobMinBytes go to blob files, smaller ones
// stay in the table files, and the family's blob and LSM options are what
// options.go says.
func TestBlobFilesForLargeRecords(t *testing.T) {
	s, dir := popstoretest.Open(t, popstore.Options{CommitLogMinBytes: -1})
	require.Equal(t, "true", cfOption(t, dir, "messages", "enable_blob_files"))
	require.Equal(t, "512", cfOption(t, dir, "messages", "min_blob_size"))
	require.Equal(t, "false", cfOption(t, dir, "messages", "enable_blob_garbage_collection"))
	require.Equal(t, "kNoCompression", cfOption(t, dir, "messages", "blob_compression_type"))
	require.Equal(t, "false", cfOption(t, dir, "pop", "enable_blob_files"))
	require.Equal(t, "134217728", cfOption(t, dir, "messages", "write_buffer_size"))
	require.Equal(t, "16", cfOption(t, dir, "messages", "level0_file_num_compaction_trigger"))
	require.Equal(t, "40", cfOption(t, dir, "messages", "level0_slowdown_writes_trigger"))
	require.Equal(t, "64", cfOption(t, dir, "messages", "level0_stop_writes_trigger"))
	require.Equal(t, "16", cfOption(t, dir, "index", "level0_file_num_compaction_trigger"))
	require.Equal(t, "40", cfOption(t, dir, "index", "level0_slowdown_writes_trigger"))
	require.Equal(t, "4", cfOption(t, dir, "pop", "level0_file_num_compaction_trigger"))

	appendBodies(t, s, "small", 0, 20, 64, 1_000)
	require.NoError(t, s.FlushMemtables(true))
	require.Equal(t, "0", s.MessagesProperty("rocksdb.num-blob-files"), "64-byte bodies stay inline")
	appendBodies(t, s, "large", 0, 20, 1024, 1_000)
	require.NoError(t, s.FlushMemtables(true))
	require.Equal(t, "1", s.MessagesProperty("rocksdb.num-blob-files"))
	require.Equal(t, 1, blobFiles(t, dir))
	small := make([]int, 20)
	for i := range small {
		small[i] = 64
	}
	requireBodies(t, s, "small", small)
}

// An existing data directory written without blob files (as by popshim
// before 2026-12-04) opens with them on: the old inline values read back,
// new flushes write blob files, a full compaction keeps everything, and a
// store opened again without blob options (an older popshim) reads the
// blob values too.
func TestBlobFilesMigration(t *testing.T) {
	dir := t.TempDir()
	sizes := make([]int, 0, 90)
	old, err := popstore.Open(popstore.Options{Dir: dir, BlobMinBytes: -1, CommitLogMinBytes: -1})
	require.NoError(t, err)
	appendBodies(t, old, "T", 0, 30, 1024, 1_000)
	appendBodies(t, old, "T", 30, 10, 64, 1_000)
	require.NoError(t, old.FlushMemtables(true))
	require.Equal(t, "false", cfOption(t, dir, "messages", "enable_blob_files"))
	require.NoError(t, old.Close())
	require.Zero(t, blobFiles(t, dir))
	for range 30 {
		sizes = append(sizes, 1024)
	}
	for range 10 {
		sizes = append(sizes, 64)
	}

	s, err := popstore.Open(popstore.Options{Dir: dir, CommitLogMinBytes: -1})
	require.NoError(t, err)
	requireBodies(t, s, "T", sizes)
	appendBodies(t, s, "T", 40, 50, 2048, 2_000)
	for range 50 {
		sizes = append(sizes, 2048)
	}
	requireBodies(t, s, "T", sizes) // memtable
	require.NoError(t, s.FlushMemtables(true))
	require.Equal(t, 1, blobFiles(t, dir))
	requireBodies(t, s, "T", sizes)
	s.CompactMessages()
	requireBodies(t, s, "T", sizes)
	require.NoError(t, s.Close())

	older, err := popstore.Open(popstore.Options{Dir: dir, BlobMinBytes: -1, CommitLogMinBytes: -1})
	require.NoError(t, err)
	defer older.Close()
	requireBodies(t, older, "T", sizes)
	appendBodies(t, older, "T", 90, 5, 1024, 3_000)
	for range 5 {
		sizes = append(sizes, 1024)
	}
	require.NoError(t, older.FlushMemtables(true))
	older.CompactMessages()
	requireBodies(t, older, "T", sizes)
}

// Retention frees blob files: once every record of a blob file is trimmed
// and the trimmed range compacted (CompactTrimmed), RocksDB drops the file,
// without blob garbage collection; a file with a live record stays.
func TestRetentionDropsBlobFiles(t *testing.T) {
	var now atomic.Int64
	now.Store(100_000)
	s, _ := popstoretest.Open(t, popstore.Options{RetentionMillis: 10_000, NowMillis: now.Load, CommitLogMinBytes: -1})
	appendBodies(t, s, "T", 0, 40, 1024, 50_000) // old: its own blob file
	require.NoError(t, s.FlushMemtables(true))
	appendBodies(t, s, "T", 40, 40, 1024, 95_000) // young
	require.NoError(t, s.FlushMemtables(true))
	require.Equal(t, "2", s.MessagesProperty("rocksdb.num-blob-files"))

	plan, err := s.PlanRetention(now.Load())
	require.NoError(t, err)
	require.Equal(t, []popstore.Trim{{Topic: "T", QueueId: 0, NewMinOffset: 40}}, plan.Trims)
	commit(t, s, func(tx *popstore.Txn) error { return tx.ApplyRetention(plan) })
	require.NoError(t, s.FlushMemtables(true))
	s.CompactTrimmed(plan)
	require.Equal(t, "1", s.MessagesProperty("rocksdb.num-blob-files"), "the trimmed records' blob file is dropped")
	recs, _, err := s.ReadMessages("T", 0, 0, 100, 1<<30)
	require.NoError(t, err)
	require.Len(t, recs, 40)
	require.Equal(t, int64(40), popstoretest.QueueOffset(recs[0]))
}
