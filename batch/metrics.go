package batch

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the writer's Prometheus series (popshim_writer_*: series
// RocketMQ has no counterpart for use the popshim_ prefix, never rocketmq_).
// Counters are kept in atomics so Stats and the exposition agree.
type metrics struct {
	batchesN, mutationsN, failedN, fsyncsN atomic.Uint64
	writeNanos                             atomic.Int64

	batchSize   prometheus.Histogram
	batchBytes  prometheus.Histogram
	writeTime   prometheus.Histogram
	rejects     [numLanes]prometheus.Counter
	headWait    [numLanes]prometheus.Observer
	failedGauge prometheus.Gauge
	diskFull    prometheus.Gauge
	recoveries  prometheus.Counter
	stages      *stageMetrics
	collectors  []prometheus.Collector
}

func newMetrics(w *Writer) *metrics {
	m := &metrics{}
	mode := prometheus.Labels{"mode": string(w.opts.Mode)}
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "popshim_writer_batch_mutations", Help: "Mutations (ops) per WriteBatch.",
		ConstLabels: mode, Buckets: prometheus.ExponentialBuckets(1, 2, 15), // 1 … 16384
	})
	m.batchBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "popshim_writer_batch_bytes", Help: "Sum of Op.Bytes per WriteBatch, bytes.",
		ConstLabels: mode, Buckets: prometheus.ExponentialBuckets(256, 4, 10), // 256 B … 64 MiB
	})
	m.writeTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "popshim_writer_write_seconds", Help: "Duration of one synced db.Write (WAL append + fsync), seconds.",
		ConstLabels: mode, Buckets: prometheus.ExponentialBuckets(25e-6, 2, 16), // 25 µs … 0.8 s
	})
	m.failedGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "popshim_writer_failed", Help: "1 from a failed synced write until the store is reopened; the writer refuses work meanwhile.",
		ConstLabels: mode,
	})
	m.diskFull = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "popshim_writer_disk_full", Help: "1 while the store's filesystem is used above the warning ratio and SENDs are refused.",
		ConstLabels: mode,
	})
	m.recoveries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "popshim_writer_recoveries_total", Help: "Times the writer reopened the store after a failed write and accepted work again.",
		ConstLabels: mode,
	})
	counter := func(name, help string, v *atomic.Uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: mode},
			func() float64 { return float64(v.Load()) })
	}
	m.stages = newStageMetrics(w.opts.Mode)
	m.collectors = []prometheus.Collector{
		m.batchSize, m.batchBytes, m.writeTime, m.failedGauge, m.diskFull, m.recoveries,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "popshim_writer_queued_bytes", Help: "Sum of the sizes of the ops queued in all lanes, bytes (bounded by --queue-max-bytes).",
			ConstLabels: mode,
		}, func() float64 { return float64(w.lanes.queuedBytes()) }),
		counter("popshim_writer_batches_total", "WriteBatches written (or attempted).", &m.batchesN),
		counter("popshim_writer_mutations_total", "Mutations (ops) completed, any result.", &m.mutationsN),
		counter("popshim_writer_failed_mutations_total", "Mutations completed with an error, plus Submits refused because a failed write awaits recovery or the disk is above the warning level.", &m.failedN),
		counter("popshim_writer_fsyncs_total", "Synced db.Write calls issued (WAL fsyncs requested).", &m.fsyncsN),
	}
	m.collectors = append(m.collectors, m.stages.all...)
	for l := Lane(0); l < numLanes; l++ {
		lane := l
		labels := prometheus.Labels{"mode": string(w.opts.Mode), "lane": lane.String()}
		m.rejects[l] = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_writer_rejects_total", Help: "Ops answered SYSTEM_BUSY: Submits refused because the lane or the queued-bytes bound was full, and produce ops shed after waiting too long.",
			ConstLabels: labels,
		})
		hw := prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "popshim_writer_queue_head_wait_seconds",
			Help:        "How long the oldest op a batch took from a lane had waited in that lane's queue, seconds (group mode; one observation per lane per batch).",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(25e-6, 2, 16), // 25 µs … 0.8 s
		})
		m.headWait[l] = hw
		m.collectors = append(m.collectors, m.rejects[l], hw,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "popshim_writer_queue_depth", Help: "Ops queued in a lane, waiting for a batch.",
				ConstLabels: labels,
			}, func() float64 { return float64(w.lanes.depth(lane)) }))
	}
	return m
}

func (m *metrics) register(reg prometheus.Registerer) error {
	for _, c := range m.collectors {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// observeHeadWait records the head-of-line wait of every lane that
// contributed to a batch (negative: none).
func (m *metrics) observeHeadWait(w *[numLanes]time.Duration) {
	for l, d := range w {
		if d >= 0 {
			m.headWait[l].Observe(d.Seconds())
		}
	}
}

// observeBatch records one committed (or failed) batch of n ops.
func (m *metrics) observeBatch(n, bytes int, wrote bool, took time.Duration) {
	m.batchesN.Add(1)
	m.batchSize.Observe(float64(n))
	m.batchBytes.Observe(float64(bytes))
	if wrote {
		m.fsyncsN.Add(1)
		m.writeNanos.Add(int64(took))
		m.writeTime.Observe(took.Seconds())
		m.stages.batch[StageWrite].Observe(took.Seconds())
	}
}
