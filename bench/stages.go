package bench

import (
	"fmt"
	"io"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// Stage histograms read from popshim's /metrics: the writer's per-stage
// times (batch/stages.go) and the reply flush (remoting/metrics.go).
const (
	metricStage = "popshim_writer_stage_seconds"
	metricFlush = "popshim_remoting_reply_flush_seconds"
)

// stageOrder is the order of the breakdown: the per-op stages of the
// foreground lane (ACK), the per-batch stages, the reply flush, then the
// bulk lane (CHANGE) and the background lane (revive, timer delivery).
var stageOrder = []string{
	"foreground/lane_wait", "batch/apply", "batch/write", "foreground/complete_wait", "foreground/done",
	"foreground/total", "reply/flush", "bulk/lane_wait", "bulk/total", "background/lane_wait", "background/total",
}

// histSnap is one scrape of a histogram: sum, count and cumulative
// buckets by upper bound (+Inf last).
type histSnap struct {
	sum, count float64
	buckets    []bucket
}

// StageStats is one stage of the server-side breakdown over the measured
// phase, milliseconds; P50 and P99 are bucket upper bounds (×1.5 steps).
type StageStats struct {
	Stage  string  `json:"stage"` // lane/stage, e.g. foreground/lane_wait, batch/write, reply/flush
	Count  float64 `json:"count"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
}

// parseStages collects the stage histograms of a scrape, keyed
// "lane/stage" and "reply/flush" (summed over other labels).
func parseStages(fams map[string]*dto.MetricFamily) map[string]histSnap {
	out := map[string]histSnap{}
	add := func(key string, h *dto.Histogram) {
		s := out[key]
		s.sum += h.GetSampleSum()
		s.count += float64(h.GetSampleCount())
		byUpper := map[float64]float64{}
		for _, b := range s.buckets {
			byUpper[b.upper] = b.count
		}
		for _, b := range h.GetBucket() {
			byUpper[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
		byUpper[math.Inf(1)] = s.count
		s.buckets = s.buckets[:0]
		for u, n := range byUpper {
			s.buckets = append(s.buckets, bucket{u, n})
		}
		sort.Slice(s.buckets, func(i, j int) bool { return s.buckets[i].upper < s.buckets[j].upper })
		out[key] = s
	}
	if f, ok := fams[metricStage]; ok {
		for _, m := range f.GetMetric() {
			var lane, stage string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "lane":
					lane = l.GetValue()
				case "stage":
					stage = l.GetValue()
				}
			}
			add(lane+"/"+stage, m.GetHistogram())
		}
	}
	if f, ok := fams[metricFlush]; ok {
		for _, m := range f.GetMetric() {
			add("reply/flush", m.GetHistogram())
		}
	}
	return out
}

// stageDelta returns the breakdown b − a in stageOrder, stages without
// observations in the span left out.
func stageDelta(a, b map[string]histSnap) []StageStats {
	var out []StageStats
	for _, k := range stageOrder {
		x, y := a[k], b[k]
		n := y.count - x.count
		if n <= 0 {
			continue
		}
		out = append(out, StageStats{Stage: k, Count: n, MeanMs: 1000 * (y.sum - x.sum) / n,
			P50Ms: 1000 * bucketQuantile(x.buckets, y.buckets, n, 0.50),
			P99Ms: 1000 * bucketQuantile(x.buckets, y.buckets, n, 0.99)})
	}
	return out
}

// printStages writes the breakdown as one table.
func printStages(out io.Writer, st []StageStats) {
	if len(st) == 0 {
		return
	}
	fmt.Fprintln(out, "server stages (ms; p50/p99 are histogram bucket bounds, per-op stages sample 1 op in 4):")
	for _, s := range st {
		fmt.Fprintf(out, "  %-26s n=%-9.0f mean %7.3f  p50 ≤ %7.3f  p99 ≤ %7.3f\n", s.Stage, s.Count, s.MeanMs, s.P50Ms, s.P99Ms)
	}
}
