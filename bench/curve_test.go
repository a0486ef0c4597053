package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// curveReport is an ack report at one offered rate with the given ACK/s,
// p50 and burst p99 (µs).
func curveReport(label string, rate, acks float64, p50, burstP99 int64) *Report {
	return &Report{Mode: "ack", Label: label, Config: map[string]any{"rate": rate},
		ServerCPU: &CPUStats{Percent: 50},
		Series: []SeriesSummary{
			{Name: "ack", OpsPerSec: acks, Latency: Latency{P50: p50, P99: 2 * p50}},
			{Name: "ack_during_burst", Latency: Latency{P99: burstP99}},
			{Name: "change", Latency: Latency{P99: 90000}},
		}}
}

// The sweep is expressed in percent of each label's open-loop ACK/s,
// sorted, tabled and plotted.
func TestCurvePoints(t *testing.T) {
	rs := []*Report{
		curveReport("group", 0, 200000, 9000, 20000),
		curveReport("group", 100000, 99000, 1200, 15000),
		curveReport("group", 20000, 20000, 800, 5000),
		curveReport("rmq", 12500, 12400, 3000, 9000),
		curveReport("rmq", 25000, 24000, 5000, 20000), // no open-loop run: max is the largest achieved
		{Mode: "heartbeat", Label: "network-limit"},
	}
	pts := CurvePoints(rs)
	require.Len(t, pts, 5)
	require.Equal(t, "group", pts[0].Label)
	require.InDelta(t, 10, pts[0].PercentOfMax, 0.01)
	require.InDelta(t, 50, pts[1].PercentOfMax, 0.01)
	require.InDelta(t, 100, pts[2].PercentOfMax, 0.01)
	require.InDelta(t, 0.8, pts[0].P50Ms, 1e-9)
	require.InDelta(t, 5, pts[0].BurstP99Ms, 1e-9)
	require.InDelta(t, 25, pts[0].ServerCPUPerAckUs, 1e-9, "50 % of a core over 20,000 ACK/s")
	require.InDelta(t, 100*12500/24000.0, pts[3].PercentOfMax, 0.01)

	var b bytes.Buffer
	WriteCurveTable(&b, pts)
	require.Equal(t, 2+5, strings.Count(b.String(), "\n"))
	require.Contains(t, b.String(), "| group | max (open loop) | 100 | 200000 | 9.00 | 18.00 | 20.00 | 90 | 2.5 |")

	out := filepath.Join(t.TempDir(), "curve.svg")
	require.NoError(t, WriteCurve(out, pts))
	svg, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Contains(t, string(svg), "rmq p99 during bursts")
	require.Error(t, WriteCurve(out, nil))
}
