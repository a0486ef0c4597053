package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A produce run against an in-process popshim, with this process as the
// "server": the cost covers every SEND, counts this process's disk writes
// (the store is in it) and the fsync probe ran during the run.
func TestRunProduceCostLoopback(t *testing.T) {
	st := startPopshim(t, "group")
	var out bytes.Buffer
	r, err := RunProduce(context.Background(), Options{Addr: st.BrokerAddr(), Conns: 2, Inflight: 4, Duration: 500 * time.Millisecond,
		CreateTopic: true, Topic: "cost_topic", Queues: 2, BodySize: 4096, RandomBody: true, ServerPIDs: []int{os.Getpid()},
		SettleAfter: 100 * time.Millisecond, FsyncProbeEvery: 10 * time.Millisecond, FsyncProbeDir: t.TempDir(),
		Workload: "produce-4k", Out: &out})
	require.NoError(t, err)
	send, _ := r.SeriesByName("send")
	require.Positive(t, send.OK)
	require.NotNil(t, r.Cost)
	require.Equal(t, send.OK, r.Cost.Ops)
	require.Equal(t, send.OK*4096, r.Cost.PayloadBytes)
	require.Positive(t, r.Cost.CPUSeconds)
	require.Positive(t, r.Cost.WriteBytes, "the WAL of every SEND is written from this process")
	require.InDelta(t, float64(r.Cost.WriteBytes)/float64(r.Cost.PayloadBytes), r.Cost.BytesPerPayloadByte, 1e-9)
	require.Positive(t, r.Cost.WindowSeconds)
	require.Equal(t, "produce-4k", r.Workload)
	require.NotNil(t, r.Disk)
	require.Positive(t, r.Disk.FdatasyncUs.Count)
	require.Contains(t, out.String(), "server cost:")
	require.Contains(t, out.String(), "disk during the run:")
}

// Random bodies differ from message to message and keep their size;
// default bodies are one shared buffer.
func TestBodies(t *testing.T) {
	o := Options{BodySize: 1024, RandomBody: true}
	b := bodies(&o)
	seen := map[string]bool{}
	for seq := range int64(1000) {
		x := b(seq)
		require.Len(t, x, 1024)
		seen[string(x)] = true
	}
	require.Len(t, seen, 1000)
	o.RandomBody = false
	c := bodies(&o)
	require.Equal(t, c(1), c(2))
}

func ival(t, secs, rate float64) IntervalStats {
	return IntervalStats{T: t, Seconds: secs, Series: map[string]IntervalSeries{"send": {OpsPerSec: rate}}}
}

// MinuteRates averages the intervals of the first and of the last minute.
func TestMinuteRates(t *testing.T) {
	r := &Report{Seconds: 180}
	for i := 1; i <= 180; i++ {
		rate := 1000.0
		if i > 120 {
			rate = 600
		}
		r.Intervals = append(r.Intervals, ival(float64(i), 1, rate))
	}
	first, last, ok := r.MinuteRates("send")
	require.True(t, ok)
	require.InDelta(t, 1000, first, 1e-9)
	require.InDelta(t, 600, last, 1e-9)
	_, _, ok = (&Report{Seconds: 90, Intervals: r.Intervals[:90]}).MinuteRates("send")
	require.False(t, ok, "shorter than two minutes")
}

// The cost table pairs runs by round and divides by the RocketMQ label.
func TestCostSeriesMarkdown(t *testing.T) {
	run := func(label string, round int, us float64, bpb float64) *Report {
		return &Report{Mode: "produce", Label: label, Workload: "produce-1k", Round: round, Seconds: 10,
			Series: []SeriesSummary{{Name: "send", OK: 1000, OpsPerSec: 100}},
			Cost:   &CostStats{Ops: 1000, CPUMicrosPerOp: us, NetMicrosPerOp: us, WindowSeconds: 11, PayloadBytes: 1024000, BytesPerPayloadByte: bpb}}
	}
	rs := []*Report{run("popshim", 1, 40, 4), run("rocketmq-5.5.1-default", 1, 100, 1), run("popshim", 2, 60, 2), run("rocketmq-5.5.1-default", 2, 120, 1)}
	c := NewCostSeries(rs, "")
	require.Equal(t, "rocketmq-5.5.1-default", c.Anchor)
	var b strings.Builder
	c.WriteMarkdown(&b)
	md := b.String()
	require.Contains(t, md, "| produce-1k | 50.0 (40.0–60.0) [100] | 110.0 (100.0–120.0) [100] | **0.45** (0.40, 0.50) |")
	require.Contains(t, md, "**3.00** (4.00, 2.00)")
}
