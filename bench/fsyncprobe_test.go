package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The disk line prints small ratios with two significant digits: an ACK
// p99 of 7.27 ms during bursts against a 151 ms fdatasync p99 is 0.048×,
// not 0.0×; ratios of 1 and more keep one decimal. The cost table's
// latency rows print the same ratios.
func TestDiskRatiosKeepSignificantDigits(t *testing.T) {
	p := &fsyncProbe{dir: "/data", w: newWindow()}
	for range 100 {
		p.w.record(151000)
	}
	r := &Report{Mode: "ack", Label: "popshim", Workload: "ack", Round: 1, Cost: &CostStats{Ops: 100}, Series: []SeriesSummary{
		{Name: "ack", OK: 100, OpsPerSec: 10, Latency: Latency{Count: 100, P50: 302000, P99: 400000}},
		{Name: "ack_during_burst", OK: 50, Latency: Latency{Count: 50, P50: 5000, P99: 7270}},
	}}
	r.Disk = p.stats(r)
	require.NotNil(t, r.Disk)
	require.InDelta(t, 0.048, r.Disk.AckBurstP99Ratio, 0.0005)

	var b strings.Builder
	printDisk(&b, r)
	line := b.String()
	require.Contains(t, line, "ACK p99 during bursts 7.27 ms = 0.048× its p99", line)
	require.Contains(t, line, "= 2.0× its p50", line)

	b.Reset()
	NewCostSeries([]*Report{r}, "").WriteMarkdown(&b)
	require.Contains(t, b.String(), "| 2.0× | 7.27 |", b.String())
	require.Contains(t, b.String(), "| 0.048× |", b.String())
}
