package popstore

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// After Open, a large C block freed and allocated again is mmapped afresh
// instead of kept in malloc's arenas: glibc's dynamic mmap threshold would
// have risen to the freed block's size (malloc_linux.go).
func TestOpenFixesMallocMmapThreshold(t *testing.T) {
	if _, set := os.LookupEnv("MALLOC_MMAP_THRESHOLD_"); set {
		t.Skip("MALLOC_MMAP_THRESHOLD_ is set: glibc's own setting wins")
	}
	s, err := Open(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	for _, n := range []int{2 << 20, 16 << 20} {
		require.True(t, freshBlockMmapped(n), "a %d-byte block came from malloc's arenas", n)
	}
}
