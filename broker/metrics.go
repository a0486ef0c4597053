package broker

import (
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/broker/meta"
)

// Metrics are the Prometheus series of the POP machinery. Names reuse
// RocketMQ's where the meaning matches (BrokerMetricsConstant.java); popshim
// internals use the popshim_ prefix. The constant labels cluster,
// node_type and node_id come from the registerer handed to NewBroker
// (Serve wraps its registry with them).
type Metrics struct {
	MessagesIn      *prometheus.CounterVec // rocketmq_messages_in_total{topic,message_type,is_system}
	ThroughputIn    *prometheus.CounterVec // rocketmq_throughput_in_total
	MessagesOut     *prometheus.CounterVec // rocketmq_messages_out_total{topic,consumer_group,is_system,is_retry}
	ThroughputOut   *prometheus.CounterVec // rocketmq_throughput_out_total
	SendToDLQ       *prometheus.CounterVec // rocketmq_send_to_dlq_messages_total{topic,consumer_group,is_system}
	ReviveRetry     *prometheus.CounterVec // rocketmq_pop_revive_retry_messages_total{consumer_group,topic,put_status}
	ParkedPolls     prometheus.Gauge       // popshim_parked_polls
	ReviveLagMillis prometheus.Gauge       // popshim_revive_lag_milliseconds
	RevivePasses    prometheus.Counter     // popshim_revive_passes_total
	ReviveDropped   prometheus.Counter     // popshim_revive_dropped_total
	TimingMessages  prometheus.Gauge       // rocketmq_timing_messages (no topic label: the total)
	TimerEnqueued   prometheus.Counter     // rocketmq_timer_enqueue_total
	TimerDequeued   prometheus.Counter     // rocketmq_timer_dequeue_total
	TimerLateness   prometheus.Histogram   // popshim_timer_lateness_milliseconds
	TimerDropped    prometheus.Counter     // popshim_timer_dropped_total

	// PutNums counts messages stored by SEND requests since start, retry
	// and DLQ topics included (StoreStatsService.putMessageTimesTotal, the
	// msgPutTotal* figures of GET_BROKER_RUNTIME_INFO). Any goroutine.
	PutNums atomic.Uint64
	// GetNums counts messages returned by POP and PULL since start
	// (BrokerStatsManager's transferred-message count, the msgGetTotal*
	// figures of GET_BROKER_RUNTIME_INFO). Any goroutine.
	GetNums atomic.Uint64

	inCache inCache // the children of MessagesIn and ThroughputIn (Metrics.in)
}

// NewMetrics returns unregistered series (see Register).
func NewMetrics() *Metrics {
	return &Metrics{
		MessagesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_messages_in_total", Help: "Messages stored by SEND requests.",
		}, []string{"topic", "message_type", "is_system"}),
		ThroughputIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_throughput_in_total", Help: "Body bytes stored by SEND requests.",
		}, []string{"topic", "message_type", "is_system"}),
		MessagesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_messages_out_total", Help: "Messages returned by POP and PULL.",
		}, []string{"topic", "consumer_group", "is_system", "is_retry"}),
		ThroughputOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_throughput_out_total", Help: "Record bytes returned by POP and PULL.",
		}, []string{"topic", "consumer_group", "is_system", "is_retry"}),
		SendToDLQ: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_send_to_dlq_messages_total", Help: "Messages moved to %DLQ% topics.",
		}, []string{"topic", "consumer_group", "is_system"}),
		ReviveRetry: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_pop_revive_retry_messages_total", Help: "Messages re-put to pop retry topics by revive.",
		}, []string{"consumer_group", "topic", "put_status"}),
		ParkedPolls: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "popshim_parked_polls", Help: "Long-polling POP, PULL and NOTIFICATION requests parked now.",
		}),
		ReviveLagMillis: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "popshim_revive_lag_milliseconds", Help: "How far the revive scan cursor trails the broker clock, ms.",
		}),
		RevivePasses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_revive_passes_total", Help: "Revive scan passes completed.",
		}),
		ReviveDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_revive_dropped_total", Help: "Checkpoints dropped by revive (message gone or attempts exhausted).",
		}),
		TimingMessages: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rocketmq_timing_messages", Help: "Delay-level and timer messages waiting for their time.",
		}),
		TimerEnqueued: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rocketmq_timer_enqueue_total", Help: "Delayed messages stored as timers.",
		}),
		TimerDequeued: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rocketmq_timer_dequeue_total", Help: "Timers delivered to their real topic.",
		}),
		TimerLateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "popshim_timer_lateness_milliseconds",
			Help:    "How long after its due time a timer was delivered (durable in its real topic), ms.",
			Buckets: []float64{5, 10, 25, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 60000},
		}),
		TimerDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_timer_dropped_total", Help: "Due timers dropped (topic deleted or entry unreadable).",
		}),
	}
}

// Register adds every series to reg; an already registered identical
// collector is tolerated (a second Broker in one test process).
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.MessagesIn, m.ThroughputIn, m.MessagesOut, m.ThroughputOut,
		m.SendToDLQ, m.ReviveRetry, m.ParkedPolls, m.ReviveLagMillis, m.RevivePasses, m.ReviveDropped,
		m.TimingMessages, m.TimerEnqueued, m.TimerDequeued, m.TimerLateness, m.TimerDropped} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

// BoolLabel is the label value of b ("true" or "false").
func BoolLabel(b bool) string { return strconv.FormatBool(b) }

// IsSystemTopic returns the is_system label of a topic: "true" for the
// names TopicValidator.isSystemTopic calls system topics (TBW102,
// RMQ_SYS_TRACE_TOPIC, SCHEDULE_TOPIC_XXXX, the transaction topics, every
// rmq_sys_ name; meta.IsReservedSystemTopic), as BrokerMetricsManager
// .isSystem labels them.
func IsSystemTopic(topic string) string {
	return BoolLabel(meta.IsReservedSystemTopic(topic))
}
