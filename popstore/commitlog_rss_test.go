package popstore_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
)

// mappedRSS sums the Rss of this process's mappings of files under dir
// (/proc/self/smaps), bytes.
func mappedRSS(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	var sum int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && strings.HasPrefix(fields[5], dir) // a mapping's header line
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			require.NoError(t, err)
			sum += kb << 10
		}
	}
	require.NoError(t, sc.Err())
	return sum
}

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
	require.Greater(t, mappedRSS(t, clog), int64(n*size/2), "reads map the records' pages")
	s.ReleaseMappedPages()
	require.Less(t, mappedRSS(t, clog), int64(64<<10))
	read()
	require.Greater(t, mappedRSS(t, clog), int64(n*size/2))
}
