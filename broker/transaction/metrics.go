package transaction

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Refusal reasons of END_TRANSACTION (label "reason" of
// popshim_end_transaction_refused_total).
const (
	ReasonNotFound = "not_found"      // no half at commitLogOffset (unknown, or decided already)
	ReasonGroup    = "producer_group" // producerGroup differs from the half's PGROUP
	ReasonOffset   = "offset"         // tranStateTableOffset differs from the half's
	ReasonImmunity = "immunity"       // decided by the producer after CHECK_IMMUNITY_TIME_IN_SECONDS
	ReasonTopic    = "topic"          // the real topic no longer exists
	ReasonIllegal  = "illegal"        // the committed message cannot be stored (bad record, timer rules)
	// ReasonNotWritten: the writer refused or dropped the decision (lane
	// full, shed after --wait-time-mills-in-transaction-queue, disk full,
	// a failed write): the half waits for its check.
	ReasonNotWritten = "not_written"
)

// Metrics are the transaction series. Names reuse RocketMQ's
// (broker/.../metrics/BrokerMetricsConstant.java) where the meaning
// matches; the rest use the popshim_ prefix. The broker registers them.
type Metrics struct {
	// Prepared: popshim_half_messages_stored_total{topic} (real topic),
	// half messages made durable by SEND (Java keeps this count per topic
	// in TransactionMetrics behind its rocketmq_half_messages gauge).
	Prepared *prometheus.CounterVec
	// Commits: rocketmq_commit_messages_total{topic} (real topic).
	Commits *prometheus.CounterVec
	// Rollbacks: rocketmq_rollback_messages_total{topic}.
	Rollbacks *prometheus.CounterVec
	// FinishLatency: rocketmq_finish_message_latency{topic}, seconds from
	// the half's store time to its commit (Java records whole seconds
	// from the born time).
	FinishLatency *prometheus.HistogramVec
	// Checks: popshim_transaction_checks_total, check rounds made durable;
	// Unsent the rounds whose Checker found no producer connected
	// (popshim_transaction_checks_unsent_total).
	Checks, Unsent prometheus.Counter
	// CheckMax: popshim_transaction_check_max_total, halves moved to
	// TRANS_CHECK_MAX_TIME_TOPIC.
	CheckMax prometheus.Counter
	// Refused: popshim_end_transaction_refused_total{reason}.
	Refused *prometheus.CounterVec
}

// NewMetrics returns unregistered series.
func NewMetrics() *Metrics {
	return &Metrics{
		Prepared: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_half_messages_stored_total", Help: "Half messages stored by SEND, by real topic.",
		}, []string{"topic"}),
		Commits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_commit_messages_total", Help: "Half messages committed to their real topic.",
		}, []string{"topic"}),
		Rollbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_rollback_messages_total", Help: "Half messages rolled back.",
		}, []string{"topic"}),
		FinishLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rocketmq_finish_message_latency",
			Help:    "Whole seconds from a half message's born time (the producer's clock) to its commit, as the Java broker records it (its declared unit says ms; the values are seconds).",
			Buckets: []float64{5, 60, 600, 3600, 43200, 86400}, // BrokerMetricsManager's commitLatencyBuckets
		}, []string{"topic"}),
		Checks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_transaction_checks_total", Help: "CHECK_TRANSACTION_STATE rounds made durable.",
		}),
		Unsent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_transaction_checks_unsent_total", Help: "Check rounds with no producer of the group connected.",
		}),
		CheckMax: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_transaction_check_max_total", Help: "Half messages moved to TRANS_CHECK_MAX_TIME_TOPIC.",
		}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "popshim_end_transaction_refused_total", Help: "END_TRANSACTION requests refused, by reason.",
		}, []string{"reason"}),
	}
}

// Register adds every series to reg, and rocketmq_half_messages (the
// number of halves, no topic label: pending() is the total) as a gauge
// function. An already registered identical collector is tolerated.
func (m *Metrics) Register(reg prometheus.Registerer, pending func() int64) error {
	half := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rocketmq_half_messages", Help: "Half messages waiting for END_TRANSACTION.",
	}, func() float64 { return float64(pending()) })
	for _, c := range []prometheus.Collector{m.Prepared, m.Commits, m.Rollbacks, m.FinishLatency, m.Checks, m.Unsent,
		m.CheckMax, m.Refused, half} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}
