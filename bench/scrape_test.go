package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"
)

// writerSeries registers series named and shaped like batch/metrics.go
// (two label sets for the counters, so summing is exercised).
type writerSeries struct {
	fsyncs, batches, mutations *prometheus.CounterVec
	size, write                prometheus.Histogram
}

func newWriterSeries(reg *prometheus.Registry) *writerSeries {
	w := &writerSeries{
		fsyncs:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricFsyncs, Help: "h"}, []string{"mode"}),
		batches:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricBatches, Help: "h"}, []string{"mode"}),
		mutations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricMutations, Help: "h"}, []string{"mode"}),
		size: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricBatchSize, Help: "h",
			Buckets: prometheus.ExponentialBuckets(1, 2, 15)}),
		write: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricWriteTime, Help: "h"}),
	}
	reg.MustRegister(w.fsyncs, w.batches, w.mutations, w.size, w.write, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return w
}

func (w *writerSeries) batch(mode string, n int) {
	w.fsyncs.WithLabelValues(mode).Inc()
	w.batches.WithLabelValues(mode).Inc()
	w.mutations.WithLabelValues(mode).Add(float64(n))
	w.size.Observe(float64(n))
	w.write.Observe(0.002) // 2 ms
}

func TestScrapeDelta(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := newWriterSeries(reg)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	s := newScraper(srv.URL)
	ctx := context.Background()

	w.batch("group", 1000) // before the run: must not count
	a, err := s.scrape(ctx)
	require.NoError(t, err)
	require.True(t, a.hasWriter)
	require.True(t, a.hasCPU, "the process collector exports process_cpu_seconds_total")

	for range 98 {
		w.batch("group", 3) // bucket ≤4
	}
	w.batch("sync", 100) // bucket ≤128
	w.batch("sync", 100)
	b, err := s.scrape(ctx)
	require.NoError(t, err)
	d := delta(a, b)
	require.InDelta(t, 100, d.Fsyncs, 1e-9)
	require.InDelta(t, 100, d.Batches, 1e-9)
	require.InDelta(t, 98*3+200, d.Mutations, 1e-9)
	require.InDelta(t, (98*3+200)/100.0, d.MeanBatch, 1e-9)
	require.InDelta(t, 4, d.P50Batch, 1e-9)
	require.InDelta(t, 128, d.P99Batch, 1e-9)
	require.InDelta(t, 2, d.MeanWriteMs, 1e-9)
	require.Positive(t, d.WriteBusy)
	require.GreaterOrEqual(t, b.cpu, a.cpu)
}

func TestScrapeErrors(t *testing.T) {
	require.Nil(t, newScraper(""))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusInternalServerError)
	}))
	defer srv.Close()
	_, err := newScraper(srv.URL).scrape(context.Background())
	require.ErrorContains(t, err, "HTTP 500")

	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("popshim_writer_fsyncs_total{mode=\"group\" 12\n"))
	}))
	defer garbage.Close()
	_, err = newScraper(garbage.URL).scrape(context.Background())
	require.ErrorContains(t, err, "parse metrics")
}

func TestBucketQuantileBeyondLastBucket(t *testing.T) {
	a := []bucket{{1, 0}, {2, 0}}
	b := []bucket{{1, 1}, {2, 1}} // 1 of 3 observations ≤ 2; the rest beyond
	require.InDelta(t, 1, bucketQuantile(a, b, 3, 0.3), 1e-9)
	require.InDelta(t, 2, bucketQuantile(a, b, 3, 0.9), 1e-9, "beyond the last finite bucket reads as that bound")
}
