package popstore_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// Reads of records under 32 KiB through the commit log's mapping count in
// the process's RSS until ReleaseMappedPages (run at the end of every
// retention pass) unmaps them; the records read the same afterwards.
func TestReleaseMappedPages(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	const n, size = 256, 16 << 10 // 4 MiB of records, one batch: the commit log
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = size
	}
	appendSized(t, s, 0, sizes...)
	read := func() {
		for i := 0; i < n; i++ {
			recs, _, err := s.ReadMessages("T", 0, int64(i), 1, 1<<20)
			require.NoError(t, err)
			require.Len(t, recs, 1)
		}
	}
	read()
	clog := filepath.Join(dir, "commitlog")
	require.Greater(t, popstoretest.MappedRSS(t, clog), int64(n*size/2), "reads map the records' pages")
	s.ReleaseMappedPages()
	require.Less(t, popstoretest.MappedRSS(t, clog), int64(64<<10))
	read()
	require.Greater(t, popstoretest.MappedRSS(t, clog), int64(n*size/2))
}

// Records of 32 KiB and more are read with pread: reading 8 MiB of them,
// by queueOffset, by physical offset and a whole queue at once, leaves
// almost none of the segment's pages counted in the process's RSS, and
// every byte reads back. Before, each read mapped the record's pages (275
// MiB of a 582 MiB RSS with 100 unread gRPC streams of 4 MiB messages).
func TestLargeRecordsReadWithoutMapping(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	sizes := []int{32 << 10, 1 << 20, 3<<20 + 5, 1 << 20, 32<<10 - 1, 2 << 20, 40 << 10, 1<<20 + 1}
	appendSized(t, s, 0, sizes...)
	requireStored(t, s, 0, sizes)
	clog := filepath.Join(dir, "commitlog")
	// The one record under 32 KiB maps at most its own pages and a
	// neighbour's (fault-around may map up to 64 KiB).
	require.Less(t, popstoretest.MappedRSS(t, clog), int64(128<<10), "large records were read through the mapping")
}
