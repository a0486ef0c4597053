package handler

import (
	"errors"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/codec"
)

// popMetrics are the Prometheus series of the POP machinery. Names reuse
// RocketMQ's where the meaning matches (metrics-conventions §5); popshim
// internals use the popshim_ prefix. The constant labels cluster,
// node_type and node_id come from the registerer handed to NewBroker
// (Serve wraps its registry with them).
type popMetrics struct {
	messagesIn      *prometheus.CounterVec // rocketmq_messages_in_total{topic,message_type,is_system}
	throughputIn    *prometheus.CounterVec // rocketmq_throughput_in_total
	messagesOut     *prometheus.CounterVec // rocketmq_messages_out_total{topic,consumer_group,is_system,is_retry}
	throughputOut   *prometheus.CounterVec // rocketmq_throughput_out_total
	sendToDLQ       *prometheus.CounterVec // rocketmq_send_to_dlq_messages_total{topic,consumer_group,is_system}
	reviveRetry     *prometheus.CounterVec // rocketmq_pop_revive_retry_messages_total{consumer_group,topic,put_status}
	parkedPolls     prometheus.Gauge       // popshim_parked_polls
	reviveLagMillis prometheus.Gauge       // popshim_revive_lag_milliseconds
	revivePasses    prometheus.Counter     // popshim_revive_passes_total
	reviveDropped   prometheus.Counter     // popshim_revive_dropped_total
}

func newPopMetrics() *popMetrics {
	return &popMetrics{
		messagesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_messages_in_total", Help: "Messages stored by SEND requests.",
		}, []string{"topic", "message_type", "is_system"}),
		throughputIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_throughput_in_total", Help: "Body bytes stored by SEND requests.",
		}, []string{"topic", "message_type", "is_system"}),
		messagesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_messages_out_total", Help: "Messages returned by POP and PULL.",
		}, []string{"topic", "consumer_group", "is_system", "is_retry"}),
		throughputOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_throughput_out_total", Help: "Record bytes returned by POP and PULL.",
		}, []string{"topic", "consumer_group", "is_system", "is_retry"}),
		sendToDLQ: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_send_to_dlq_messages_total", Help: "Messages moved to %DLQ% topics.",
		}, []string{"topic", "consumer_group", "is_system"}),
		reviveRetry: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_pop_revive_retry_messages_total", Help: "Messages re-put to pop retry topics by revive.",
		}, []string{"consumer_group", "topic", "put_status"}),
		parkedPolls: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "popshim_parked_polls", Help: "Long-polling POP, PULL and NOTIFICATION requests parked now.",
		}),
		reviveLagMillis: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "popshim_revive_lag_milliseconds", Help: "How far the revive scan cursor trails the broker clock, ms.",
		}),
		revivePasses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_revive_passes_total", Help: "Revive scan passes completed.",
		}),
		reviveDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "popshim_revive_dropped_total", Help: "Checkpoints dropped by revive (message gone or attempts exhausted).",
		}),
	}
}

// register adds every series to reg; an already registered identical
// collector is tolerated (a second Broker in one test process).
func (m *popMetrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.messagesIn, m.throughputIn, m.messagesOut, m.throughputOut,
		m.sendToDLQ, m.reviveRetry, m.parkedPolls, m.reviveLagMillis, m.revivePasses, m.reviveDropped} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

func boolLabel(b bool) string { return strconv.FormatBool(b) }

// isSystemTopic returns the is_system label of a topic: "true" for
// rmq_sys_ topics and TBW102.
func isSystemTopic(topic string) string {
	return boolLabel(strings.HasPrefix(topic, codec.SystemTopicPrefix) || topic == codec.AutoCreateTopicKey)
}
