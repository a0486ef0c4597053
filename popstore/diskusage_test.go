package popstore

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// diskUsedRatio is used / (used + available), used = total − free: root's
// reserve (free but not available) counts neither way, as in RocketMQ's
// UtilAll.getDiskPartitionSpaceUsedPercent and df's Use%.
func TestDiskUsedRatio(t *testing.T) {
	for _, tc := range []struct {
		name               string
		total, free, avail uint64
		want               float64
	}{
		// statfs of a build VM: df said 59%, 1 − avail/total gave 0.85.
		{"large reserve", 66053021, 51995312, 9817607, 14057709.0 / (14057709 + 9817607)},
		{"5% reserve, 70% used by df", 1050, 350, 300, 0.7}, // 1 − avail/total: 0.714
		{"no reserve", 1000, 250, 250, 0.75},
		{"only the reserve left", 1000, 50, 0, 1},
		{"empty filesystem", 1000, 1000, 1000, 0},
		{"no blocks", 0, 0, 0, 0},
		{"free above total", 10, 20, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, diskUsedRatio(tc.total, tc.free, tc.avail), 1e-12)
		})
	}
	require.InDelta(t, 0.589, diskUsedRatio(66053021, 51995312, 9817607), 0.001)
}

// Store.DiskUsage applies the formula to the statfs of its directory.
func TestDiskUsageMatchesStatfs(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	ratio, avail, err := s.DiskUsage()
	require.NoError(t, err)
	var fs syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &fs))
	used := float64(fs.Blocks - fs.Bfree)
	// Other writers may move a few blocks between the two statfs calls.
	require.InDelta(t, used/(used+float64(fs.Bavail)), ratio, 0.01)
	require.Positive(t, avail)
}
