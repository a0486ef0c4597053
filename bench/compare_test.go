package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ackReport is a synthetic ack-mode report.
func ackReport(label string, ops, burstP99us, p99us float64, fsyncs float64) *Report {
	return &Report{
		Mode: "ack", Label: label, Target: "127.0.0.1:1", Started: time.Unix(1700000000, 0).UTC(), Seconds: 10,
		Series: []SeriesSummary{
			{Name: "ack", OK: int64(ops * 10), OpsPerSec: ops, Busy: 3, Errors: 1, Latency: Latency{Count: int64(ops * 10), P50: 1000, P99: int64(p99us), P999: 9000, Max: 12000}},
			{Name: "ack_during_burst", OK: 10, OpsPerSec: 1, Busy: 3, Errors: 1, Latency: Latency{Count: 10, P99: int64(burstP99us)}},
			{Name: "ack_outside_burst", OK: int64(ops*10) - 10, OpsPerSec: ops - 1, Latency: Latency{P99: 2000}},
			{Name: "change", OK: 500, OpsPerSec: 50, Busy: 2, Latency: Latency{P99: 8000}},
		},
		Server:    &ServerStats{ServerDelta: ServerDelta{Fsyncs: fsyncs}, FsyncsPer1000Acks: 1000 * fsyncs / (ops * 10)},
		BenchCPU:  CPUStats{Percent: 30, Source: "proc"},
		ServerCPU: &CPUStats{Percent: 120, Source: "proc"},
		Points: []Point{{T: 0.1, Series: map[string]PointStats{"ack": {N: 5, P50: 900, P99: 2000, Max: 3000}, "change": {N: 1, P50: 5000, P99: 6000, Max: 6000}}},
			{T: 0.2, Burst: true, Series: map[string]PointStats{"ack": {N: 7, P50: 1000, P99: 4000, Max: 5000}}}},
	}
}

func TestCompareRatiosAndLimits(t *testing.T) {
	group := ackReport("popshim-group", 50000, 3000, 2500, 500)
	sync := ackReport("popshim-sync", 5000, 60000, 40000, 50000)
	storage := &Report{Mode: "raw-storage", Label: "storage-limit", Storage: &StorageResult{OpsPerSec: 200000}}
	network := &Report{Mode: "heartbeat", Label: "network-limit", Series: []SeriesSummary{{Name: "heartbeat", OpsPerSec: 100000}}}
	c := Compare([]*Report{group, sync, storage, network})

	require.InDelta(t, 100000, c.Limit, 1e-9, "the lower of the two limits")
	require.InDelta(t, 0.5, c.Rows[0].FractionOfLimit, 1e-9)
	require.InDelta(t, 0.05, c.Rows[1].FractionOfLimit, 1e-9)
	require.True(t, math.IsNaN(c.Rows[2].FractionOfLimit))
	require.InDelta(t, 3, c.Rows[0].AckBurstP99Ms, 1e-9)
	require.InDelta(t, 1, c.Rows[0].FsyncsPer1000, 1e-9)
	require.EqualValues(t, 5, c.Rows[0].Busy, "ack + change, not the ACK sub-series again")
	require.EqualValues(t, 1, c.Rows[0].Errors)

	var b bytes.Buffer
	c.WriteMarkdown(&b)
	out := b.String()
	require.Contains(t, out, "| popshim-group | ack | 50000 | 1.00 | 2.50 | 3.00 | 2.00 |")
	require.Contains(t, out, "| popshim-sync | 10.0× | 20.0× | 16.0× | 1000.0× |", "group vs sync: ops ×10, burst p99 ÷20, p99 ÷16, fsyncs ÷1000")
	require.Contains(t, out, "| storage-limit | raw-storage | 200000 | n/a |")
	require.Contains(t, out, "lower: 100000 ops/s")
	require.NotContains(t, out, "A fraction of limit above 1")

	// ACKs faster than the HEART_BEAT "limit": the table says what that means.
	network.Series[0].OpsPerSec = 40000
	b.Reset()
	Compare([]*Report{group, sync, storage, network}).WriteMarkdown(&b)
	require.Contains(t, b.String(), "| 1.25 |")
	require.Contains(t, b.String(), "A fraction of limit above 1 means ACKs went faster than the lower limit")
}

func TestCompareWithoutLimits(t *testing.T) {
	c := Compare([]*Report{ackReport("a", 10, 1, 1, 1)})
	require.True(t, math.IsNaN(c.Limit))
	var b bytes.Buffer
	c.WriteMarkdown(&b)
	require.NotContains(t, b.String(), "Limits on this machine")
	require.Equal(t, 3, strings.Count(b.String(), "\n"), "header, separator, one row")
}

func TestReportJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := ackReport("popshim-group", 1234, 3000, 2500, 10)
	r.Intervals = []IntervalStats{{T: 1, Seconds: 1, Series: map[string]IntervalSeries{"ack": {OpsPerSec: 1234, P99: 2500}}, Server: &ServerDelta{Fsyncs: 3}}}
	p := filepath.Join(dir, "r.json")
	require.NoError(t, r.WriteJSON(p))
	back, err := ReadReport(p)
	require.NoError(t, err)
	require.Equal(t, r, back)

	rs, err := ReadReports([]string{p, p})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	_, err = ReadReports([]string{p, filepath.Join(dir, "missing.json")})
	require.Error(t, err)
	require.NoError(t, os.WriteFile(p, []byte("{"), 0o644))
	_, err = ReadReport(p)
	require.ErrorContains(t, err, "decode report")
	require.NoError(t, os.WriteFile(p, []byte(`{"series":[]}`), 0o644))
	_, err = ReadReport(p)
	require.ErrorContains(t, err, "is not a bench report")
}

func TestWritePlot(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.svg")
	require.NoError(t, WritePlot(one, []*Report{ackReport("g", 1, 1, 1, 1)}))
	b, err := os.ReadFile(one)
	require.NoError(t, err)
	require.Contains(t, string(b), "<svg")
	require.Contains(t, string(b), "CHANGE burst outstanding")

	two := filepath.Join(dir, "two.png")
	require.NoError(t, WritePlot(two, []*Report{ackReport("g", 1, 1, 1, 1), ackReport("s", 1, 1, 1, 1)}))
	b, err = os.ReadFile(two)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("\x89PNG")))

	require.ErrorContains(t, WritePlot(filepath.Join(dir, "none.svg"), []*Report{{Mode: "ack"}}), "nothing to plot")
}

func TestPrintSummary(t *testing.T) {
	var b bytes.Buffer
	r := ackReport("popshim-group", 50000, 3000, 2500, 500)
	r.Machine = Machine{CPUs: 2}
	r.Bursts, r.BurstMillis = 3, &Latency{P50: 12, Max: 30}
	printSummary(&b, r)
	out := b.String()
	require.Contains(t, out, "== popshim-group (ack)")
	require.Contains(t, out, "CHANGE bursts: 3")
	require.Contains(t, out, "1.0 fsyncs per 1000 ACKs")
	require.Contains(t, out, "server 120% of one core (proc)")
	require.Regexp(t, `ack_during_burst\s+10\s+1\s+0\.00\s+0\.00\s+3\.00`, out)
}

// Runs repeated in rounds (make bench with BENCH_ROUNDS) are numbered, get
// a median row each, and the ratio table compares the medians and lists
// the ratio of every round pair.
func TestCompareRounds(t *testing.T) {
	reports := []*Report{
		ackReport("popshim-group", 50000, 3000, 2500, 500), ackReport("popshim-sync", 5000, 60000, 40000, 50000),
		ackReport("popshim-group", 70000, 2000, 2000, 500), ackReport("popshim-sync", 10000, 30000, 30000, 50000),
		ackReport("popshim-group", 40000, 5000, 3000, 500), ackReport("popshim-sync", 8000, 45000, 35000, 50000),
		ackReport("rocketmq", 4000, 90000, 80000, 0),
	}
	c := Compare(reports)
	require.Equal(t, []int{1, 1, 2, 2, 3, 3, 0}, func() []int {
		var r []int
		for _, row := range c.Rows {
			r = append(r, row.Round)
		}
		return r
	}())
	require.Len(t, c.Medians, 2)
	g, s := c.Medians[0], c.Medians[1]
	require.Equal(t, "popshim-group", g.Label)
	require.InDelta(t, 50000, g.OpsPerSec, 1e-9, "median of 50k, 70k, 40k")
	require.InDelta(t, 3, g.AckBurstP99Ms, 1e-9, "median of 3, 2, 5 ms")
	require.InDelta(t, 8000, s.OpsPerSec, 1e-9)
	require.EqualValues(t, 15, g.Busy, "busy summed over the rounds")

	var b bytes.Buffer
	c.WriteMarkdown(&b)
	out := b.String()
	require.Contains(t, out, "| popshim-group #2 | ack | 70000 |")
	require.Contains(t, out, "Median over the rounds (SYSTEM_BUSY and errors: summed over them):")
	// medians: ops 50000/8000 = 6.25; burst p99 45/3 = 15; per round 10, 7, 5 and 20, 15, 9.
	require.Contains(t, out, "| popshim-sync | 6.2× | 15.0× |")
	require.Contains(t, out, "| 10.0×, 7.0×, 5.0× | 20.0×, 15.0×, 9.0× |")
	require.Contains(t, out, "| rocketmq | 12.5× | 30.0× | 32.0× | n/a | n/a | n/a |", "a single run is compared with the medians")
	require.True(t, math.IsNaN(median(nil)))
	require.InDelta(t, 2.5, median([]float64{4, 1, 2, 3}), 1e-9)
}

// Runs that carry their round (bench --round) are paired by it, so a
// missing run leaves a gap ("–") instead of pairing round 2 with round 3;
// a run that ended early is marked; a repeated round is noted; ratios
// below 1 keep two decimals.
func TestCompareExplicitRounds(t *testing.T) {
	at := func(r *Report, round int) *Report { r.Round = round; return r }
	g1, g2, g3 := at(ackReport("g", 100000, 3000, 2500, 500), 1), at(ackReport("g", 200000, 3000, 2500, 500), 2),
		at(ackReport("g", 300000, 3000, 2500, 500), 3)
	s1, s3 := at(ackReport("s", 10000, 3000, 2500, 500), 1), at(ackReport("s", 30000, 3000, 2500, 500), 3)
	s3.Exhausted = true
	c := Compare([]*Report{g1, s1, g2, g3, s3})
	var b bytes.Buffer
	c.WriteMarkdown(&b)
	out := b.String()
	require.Contains(t, out, "| s #3 (ended early) | ack | 30000 |", "numbered by its round, marked as ended early")
	require.Contains(t, out, "| 10.0×, –, 10.0× |", "round 2 of s is missing: a gap, not g2/s3")

	// The same report twice: counted twice in the median, noted.
	c = Compare([]*Report{g1, s1, g1, s1})
	b.Reset()
	c.WriteMarkdown(&b)
	require.Contains(t, b.String(), "Note: g round 1, s round 1 appear more than once")

	// Without rounds, a baseline faster than the other run: 0.05×, not 0.0×.
	c = Compare([]*Report{ackReport("slow", 500, 60000, 40000, 50000), ackReport("fast", 10000, 3000, 2500, 500)})
	b.Reset()
	c.WriteMarkdown(&b)
	require.Contains(t, b.String(), "| fast | 0.05× | 0.05× | 0.062× | 0.0005× |")
}

// TestCompareInFlight: the request window (conns × inflight) comes from a
// report's config, also after a JSON round trip, shows in every table and
// medians, and runs of different windows get a note.
func TestCompareInFlight(t *testing.T) {
	dir := t.TempDir()
	withWindow := func(label string, ops float64, conns, inflight int) *Report {
		r := ackReport(label, ops, 3000, 2500, 500)
		r.Config = map[string]any{"conns": conns, "inflight": inflight}
		p := filepath.Join(dir, label+".json")
		require.NoError(t, r.WriteJSON(p))
		back, err := ReadReport(p)
		require.NoError(t, err)
		return back
	}
	group := withWindow("popshim-group", 50000, 16, 128)
	sync := withWindow("popshim-sync", 5000, 16, 128)
	c := Compare([]*Report{group, sync})
	require.Equal(t, 2048, c.Rows[0].InFlight)
	var b bytes.Buffer
	c.WriteMarkdown(&b)
	require.Contains(t, b.String(), "| 2048 | 24.0 |\n", "window, then server CPU per ACK: 120 % of a core at 50,000/s")
	require.NotContains(t, b.String(), "different request windows")

	// Rounds keep the window in the median row.
	c = Compare([]*Report{group, sync, withWindow("popshim-group", 60000, 16, 128), withWindow("popshim-sync", 6000, 16, 128)})
	require.Len(t, c.Medians, 2)
	require.Equal(t, 2048, c.Medians[0].InFlight)

	// A sync run at another window: the ratio mixes workloads, and says so.
	c = Compare([]*Report{group, withWindow("popshim-sync", 5000, 16, 32)})
	b.Reset()
	c.WriteMarkdown(&b)
	require.Contains(t, b.String(), "different request windows (512, 2048 in flight)")

	// Reports without the config (raw-storage, older JSON) show n/a.
	c = Compare([]*Report{ackReport("old", 1000, 1, 1, 1)})
	require.Equal(t, 0, c.Rows[0].InFlight)
	b.Reset()
	c.WriteMarkdown(&b)
	require.Contains(t, b.String(), "| n/a | 1200.0 |\n")
}

// opsReport is a synthetic report of mode whose main series runs at ops
// per second with p99 p99us, the server at cpu % of a core.
func opsReport(mode, label string, round int, ops float64, p99us int64, cpu float64) *Report {
	return &Report{Mode: mode, Label: label, Round: round, Seconds: 10,
		Series:    []SeriesSummary{{Name: mainSeries(mode), OK: int64(ops * 10), OpsPerSec: ops, Latency: Latency{P50: p99us / 4, P99: p99us}}},
		ServerCPU: &CPUStats{Percent: cpu, Source: "proc"}}
}

// gRPC and remoting runs of one family compare in one table: medians per
// label over rounds, throughput, p99 and server CPU per message ratios of
// the first label against each other; other families stay out of it.
func TestCompareFamilies(t *testing.T) {
	rs := []*Report{
		opsReport("grpc-send", "direct", 1, 30000, 4000, 150), opsReport("grpc-send", "proxy", 1, 6000, 40000, 180),
		opsReport("produce", "remoting", 1, 40000, 3000, 160),
		opsReport("grpc-send", "direct", 2, 20000, 6000, 140), opsReport("grpc-send", "proxy", 2, 4000, 20000, 170),
		opsReport("produce", "remoting", 2, 30000, 5000, 150),
		opsReport("pop", "other-family", 1, 1, 1, 1),
	}
	c := Compare(rs)
	require.Equal(t, "send", c.Family)
	require.Len(t, c.Medians, 3)
	d := c.Medians[0]
	require.Equal(t, "direct", d.Label)
	require.InDelta(t, 25000, d.OpsPerSec, 1e-9)
	require.InDelta(t, 5, d.AckP99Ms, 1e-9)
	require.InDelta(t, (50+70)/2.0, d.ServerCPUPerOpUs, 1e-9, "150 % at 30,000/s = 50 µs; 140 % at 20,000/s = 70 µs")
	var b bytes.Buffer
	c.WriteMarkdown(&b)
	out := b.String()
	require.Contains(t, out, "| direct vs | ops/s ratio | p99: theirs / ours | server CPU per op: theirs / ours |")
	// proxy medians: 5,000/s, p99 30 ms, CPU per message (300+425)/2 µs.
	require.Contains(t, out, "| proxy | 5.0× | 6.0× | 6.0× | 5.0×, 5.0× | 10.0×, 3.3× | 6.0×, 6.1× |")
	require.Contains(t, out, "| remoting | 0.71× | 0.8× | 0.75× | 0.75×, 0.67× | 0.75×, 0.83× | 0.8×, 0.71× |")
	require.NotContains(t, out, "| other-family vs")
	require.NotContains(t, out, "ACK p99 during bursts: theirs")
	require.Contains(t, out, "| other-family #1 | pop | 1 |", "listed, not compared")
}
