package popstore_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// Reads through the commit log's mapping count in the process's RSS until
// ReleaseMappedPages (run at the end of every retention pass) unmaps them;
// the records read the same afterwards.
func TestReleaseMappedPages(t *testing.T) {
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	const n, size = 64, 64 << 10 // 4 MiB of records, one batch: the commit log
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
