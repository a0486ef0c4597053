package batch

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stage is one step of an op's way through the group-commit writer, a
// label value of popshim_writer_stage_seconds (see DESIGN.md, "Where an
// ACK's time goes").
type Stage uint8

const (
	// StageLaneWait: from Submit until the writer took the op into a batch
	// (per op, sampled).
	StageLaneWait Stage = iota
	// StageApply: building one batch, all its ops' Apply (per batch).
	StageApply
	// StageWrite: the batch's synced db.Write, WAL append + fsync (per
	// batch; the same as popshim_writer_write_seconds).
	StageWrite
	// StageCompleteWait: from the end of the batch's write until the
	// completer called the op's Done: the hand-off to the completer and
	// the Done calls of the ops before it (per op, sampled).
	StageCompleteWait
	// StageDone: the op's Done callback, i.e. encoding its reply and
	// queueing it on the connection (per op, sampled).
	StageDone
	// StageTotal: from Submit until the op's Done returned (per op,
	// sampled).
	StageTotal
	numStages
)

// String returns the label value: lane_wait, apply, write, complete_wait,
// done or total.
func (s Stage) String() string {
	switch s {
	case StageLaneWait:
		return "lane_wait"
	case StageApply:
		return "apply"
	case StageWrite:
		return "write"
	case StageCompleteWait:
		return "complete_wait"
	case StageDone:
		return "done"
	case StageTotal:
		return "total"
	}
	return "stage?"
}

// stageSampleMask: the per-op stages are observed for one op in
// stageSampleMask+1 (by accept sequence), which keeps their cost (two clock
// reads and four histogram observations) to about 40 ns per op on average.
const stageSampleMask = 3

// stageBuckets: 5 µs × 1.5^k, k = 0 … 27 (5 µs … 0.28 s): fine enough that
// bucket upper bounds read as percentiles within 50 %.
func stageBuckets() []float64 { return prometheus.ExponentialBuckets(5e-6, 1.5, 28) }

// stageMetrics are the popshim_writer_stage_seconds histograms: per op
// stages by lane, per batch stages with lane="batch".
type stageMetrics struct {
	op    [numLanes][numStages]prometheus.Observer // lane_wait, complete_wait, done, total
	batch [numStages]prometheus.Observer           // apply, write
	all   []prometheus.Collector
}

func newStageMetrics(mode Mode) *stageMetrics {
	s := &stageMetrics{}
	mk := func(stage Stage, lane string) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "popshim_writer_stage_seconds",
			Help:        "Time an op spends in each stage of the group-commit writer, seconds: lane_wait, complete_wait, done, total per op (one op in 4 sampled, label lane); apply and write per batch (lane=\"batch\"). Group mode.",
			ConstLabels: prometheus.Labels{"mode": string(mode), "stage": stage.String(), "lane": lane},
			Buckets:     stageBuckets(),
		})
		s.all = append(s.all, h)
		return h
	}
	for l := Lane(0); l < numLanes; l++ {
		for _, st := range []Stage{StageLaneWait, StageCompleteWait, StageDone, StageTotal} {
			s.op[l][st] = mk(st, l.String())
		}
	}
	s.batch[StageApply] = mk(StageApply, "batch")
	s.batch[StageWrite] = mk(StageWrite, "batch")
	return s
}

// observeOp records the per-op stages of a sampled op of lane, submitted
// at queued: taken and written are its batch's take and write-end times,
// start and end bracket its Done (all monoNanos).
func (s *stageMetrics) observeOp(lane Lane, queued, taken, written, start, end int64) {
	o := &s.op[lane%numLanes]
	o[StageLaneWait].Observe(secs(taken - queued))
	o[StageCompleteWait].Observe(secs(start - written))
	o[StageDone].Observe(secs(end - start))
	o[StageTotal].Observe(secs(end - queued))
}

func secs(ns int64) float64 { return float64(max(ns, 0)) / float64(time.Second) }
