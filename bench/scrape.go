package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Server series read from popshim's /metrics (batch/metrics.go and the
// client_golang process collector). Values are summed over label sets.
const (
	metricFsyncs     = "popshim_writer_fsyncs_total"    // synced db.Write calls
	metricBatches    = "popshim_writer_batches_total"   // WriteBatches
	metricMutations  = "popshim_writer_mutations_total" // ops completed
	metricBatchSize  = "popshim_writer_batch_mutations" // histogram: ops per WriteBatch
	metricRejects    = "popshim_writer_rejects_total"   // SYSTEM_BUSY from full lanes
	metricWriteTime  = "popshim_writer_write_seconds"   // histogram: one synced db.Write
	metricProcessCPU = "process_cpu_seconds_total"      // user+system CPU seconds
)

// serverCounters is one scrape of the server's cumulative counters.
type serverCounters struct {
	at                         time.Time
	fsyncs, batches, mutations float64
	rejects, cpu               float64
	batchSum, batchCount       float64
	writeSum, writeCount       float64  // seconds, synced writes
	buckets                    []bucket // batch-size histogram, cumulative, by upper bound
	hasWriter, hasCPU          bool
	stages                     map[string]histSnap // stage histograms (stages.go)
}

type bucket struct {
	upper float64
	count float64
}

// ServerStats is what the server's /metrics says about the measured phase.
type ServerStats struct {
	ServerDelta
	// FsyncsPer1000Acks is Fsyncs per 1000 successful ACKs of the run.
	FsyncsPer1000Acks float64 `json:"fsyncs_per_1000_acks,omitempty"`
	// FsyncsPer1000Ops is Fsyncs per 1000 successful requests of any
	// series that writes (ACK, CHANGE, POP, SEND).
	FsyncsPer1000Ops float64 `json:"fsyncs_per_1000_ops,omitempty"`
}

// ServerDelta is the change of the server counters over a span.
type ServerDelta struct {
	// Fsyncs counts synced db.Write calls (popshim_writer_fsyncs_total).
	// In sync mode RocksDB may join concurrent synced writes into one WAL
	// sync, so the disk may see fewer.
	Fsyncs    float64 `json:"fsyncs"`
	Batches   float64 `json:"batches"`
	Mutations float64 `json:"mutations"`
	Rejects   float64 `json:"rejects"`
	// MeanBatch, P50Batch and P99Batch are mutations per WriteBatch; the
	// percentiles are histogram bucket upper bounds (powers of two).
	MeanBatch float64 `json:"mean_batch"`
	P50Batch  float64 `json:"p50_batch"`
	P99Batch  float64 `json:"p99_batch"`
	// MeanWriteMs is the mean duration of one synced db.Write (WAL append +
	// fsync), milliseconds; WriteBusy is the fraction of the span the
	// writer spent inside db.Write (1 = the disk path is saturated).
	MeanWriteMs float64 `json:"mean_write_ms"`
	WriteBusy   float64 `json:"write_busy"`
	// Stages is the server-side breakdown of the span (popshim ≥ the
	// stage metrics; empty otherwise).
	Stages []StageStats `json:"stages,omitempty"`
}

// scraper reads a Prometheus text endpoint.
type scraper struct {
	url    string
	client *http.Client
}

func newScraper(url string) *scraper {
	if url == "" {
		return nil
	}
	return &scraper{url: url, client: &http.Client{Timeout: 2 * time.Second}}
}

// scrape fetches and parses one exposition. Errors: HTTP or parse failures.
func (s *scraper) scrape(ctx context.Context) (serverCounters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return serverCounters{}, fmt.Errorf("bench: metrics url: %w", err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return serverCounters{}, fmt.Errorf("bench: scrape %s: %w", s.url, err)
	}
	defer func() { _ = resp.Body.Close() }() // read side: nothing to lose
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return serverCounters{}, fmt.Errorf("bench: scrape %s: HTTP %d", s.url, resp.StatusCode)
	}
	return parseCounters(resp.Body)
}

// parseCounters extracts the server counters from a text exposition.
func parseCounters(r io.Reader) (serverCounters, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return serverCounters{}, fmt.Errorf("bench: parse metrics: %w", err)
	}
	c := serverCounters{at: time.Now(), stages: parseStages(fams)}
	sum := func(name string) (float64, bool) {
		f, ok := fams[name]
		if !ok {
			return 0, false
		}
		var v float64
		for _, m := range f.GetMetric() {
			v += metricValue(m)
		}
		return v, true
	}
	c.fsyncs, c.hasWriter = sum(metricFsyncs)
	c.batches, _ = sum(metricBatches)
	c.mutations, _ = sum(metricMutations)
	c.rejects, _ = sum(metricRejects)
	c.cpu, c.hasCPU = sum(metricProcessCPU)
	if f, ok := fams[metricWriteTime]; ok {
		for _, m := range f.GetMetric() {
			c.writeSum += m.GetHistogram().GetSampleSum()
			c.writeCount += float64(m.GetHistogram().GetSampleCount())
		}
	}
	if f, ok := fams[metricBatchSize]; ok {
		byUpper := map[float64]float64{}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			c.batchSum += h.GetSampleSum()
			c.batchCount += float64(h.GetSampleCount())
			for _, b := range h.GetBucket() {
				byUpper[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		}
		for u, n := range byUpper {
			c.buckets = append(c.buckets, bucket{u, n})
		}
		sort.Slice(c.buckets, func(i, j int) bool { return c.buckets[i].upper < c.buckets[j].upper })
	}
	return c, nil
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// delta returns b − a. Batch-size percentiles come from the difference of
// the cumulative bucket counts; beyond the last finite bucket they read as
// that bound.
func delta(a, b serverCounters) ServerDelta {
	d := ServerDelta{Fsyncs: b.fsyncs - a.fsyncs, Batches: b.batches - a.batches,
		Mutations: b.mutations - a.mutations, Rejects: b.rejects - a.rejects, Stages: stageDelta(a.stages, b.stages)}
	if n := b.batchCount - a.batchCount; n > 0 {
		d.MeanBatch = (b.batchSum - a.batchSum) / n
		d.P50Batch = bucketQuantile(a.buckets, b.buckets, n, 0.50)
		d.P99Batch = bucketQuantile(a.buckets, b.buckets, n, 0.99)
	}
	if n := b.writeCount - a.writeCount; n > 0 {
		d.MeanWriteMs = 1000 * (b.writeSum - a.writeSum) / n
		if span := b.at.Sub(a.at).Seconds(); span > 0 {
			d.WriteBusy = (b.writeSum - a.writeSum) / span
		}
	}
	return d
}

func bucketQuantile(a, b []bucket, total, q float64) float64 {
	prev := map[float64]float64{}
	for _, x := range a {
		prev[x.upper] = x.count
	}
	lastFinite := 0.0
	for _, x := range b {
		if math.IsInf(x.upper, 1) {
			break
		}
		lastFinite = x.upper
		if (x.count-prev[x.upper])/total >= q {
			return x.upper
		}
	}
	return lastFinite
}
