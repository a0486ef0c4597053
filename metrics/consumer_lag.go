package metrics

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// MaxLagGroupTopics bounds the scrape-time consumer gauges
// (ConsumerLagCollector): the most (consumerGroup, topic) pairs with a
// committed offset, or with checkpoints in flight, for which they are
// computed; past it a scrape leaves those series out and exports
// popshim_consumer_metrics_skipped 1.
const MaxLagGroupTopics = 2000

// ConsumerLagCollector exports Java's ConsumerLagCalculator gauges
// (broker/.../metrics/ConsumerLagCalculator.java, BrokerMetricsManager),
// computed at scrape time on the scraping goroutine from the figures
// GET_CONSUME_STATS (208) reports:
//
//	rocketmq_consumer_ready_messages{topic,consumer_group,is_retry,is_system}    Σ max offset − committed (POP) offset
//	rocketmq_consumer_inflight_messages{...}                                    popped, not acked: durable checkpoints
//	rocketmq_consumer_lag_messages{...}                                         not acked: ready + inflight
//	popshim_consumer_metrics_skipped                                            1 when a bound left series out
//
// topic is the original topic (a pop retry topic %RETRY%<group>+<topic>
// reports <topic> with is_retry="true"; %RETRY%<group> keeps its name).
// is_system is true for a system topic or group. Cost per scrape: one pass
// over the in-memory offsets and one over the in-memory in-flight counts
// (popstore.Store.InflightCheckpoints), each bounded by MaxLagGroupTopics
// pairs; nothing is read from RocksDB. (Until 2026-12-02 a scrape counted
// checkpoints with a key scan of up to 200,000 keys; with millions of
// checkpoints and the tombstones of acknowledged ones, a once-a-second
// scrape took about a third of the ACK throughput at saturation.) The latency
// gauges (rocketmq_consumer_lag_latency, rocketmq_consumer_queueing_latency)
// are not exported: they need a store read per queue and per in-flight
// message.
type ConsumerLagCollector struct {
	store                         *popstore.Store
	ready, inflight, lag, skipped *prometheus.Desc
}

// NewConsumerLagCollector returns the collector over store's in-memory
// consumer offsets, max offsets and in-flight counts; register it with the
// broker's Prometheus registry.
func NewConsumerLagCollector(store *popstore.Store) *ConsumerLagCollector {
	labels := []string{"topic", "consumer_group", "is_retry", "is_system"}
	return &ConsumerLagCollector{
		store:    store,
		ready:    prometheus.NewDesc("rocketmq_consumer_ready_messages", "Messages stored and not yet popped or pulled (max offset − consumer offset).", labels, nil),
		inflight: prometheus.NewDesc("rocketmq_consumer_inflight_messages", "Messages popped and not yet acked (in-flight checkpoints).", labels, nil),
		lag:      prometheus.NewDesc("rocketmq_consumer_lag_messages", "Messages not yet acked: ready plus in flight.", labels, nil),
		skipped:  prometheus.NewDesc("popshim_consumer_metrics_skipped", "1 when the last scrape left consumer gauges out because more than 2000 group-topic pairs have offsets or checkpoints in flight.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (cc *ConsumerLagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cc.ready
	ch <- cc.inflight
	ch <- cc.lag
	ch <- cc.skipped
}

// lagLabels are the label values of one series.
type lagLabels struct{ topic, group, isRetry, isSystem string }

func labelsOf(group, topic string) lagLabels {
	l := lagLabels{topic: topic, group: group, isRetry: strconv.FormatBool(codec.IsRetryTopic(topic))}
	if t, _, ok := codec.ParsePopRetryTopic(topic, group); ok {
		l.topic = t
	}
	sys := broker.IsSystemTopic(l.topic) == "true" || isSystemConsumerGroup(group)
	l.isSystem = strconv.FormatBool(sys)
	return l
}

// isSystemConsumerGroup reports RocketMQ's reserved consumer groups
// (MixAll.java), as BrokerMetricsManager.isSystemGroup.
func isSystemConsumerGroup(g string) bool {
	switch g {
	case "TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "__MONITOR_CONSUMER", "SELF_TEST_C_GROUP",
		"CID_ONS-HTTP-PROXY", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER", "CID_ONSAPI_PULL":
		return true
	}
	return strings.HasPrefix(g, "CID_RMQ_SYS_")
}

// Collect implements prometheus.Collector (scraping goroutine; in-memory
// reads only).
func (cc *ConsumerLagCollector) Collect(ch chan<- prometheus.Metric) {
	skipped := 0.0
	defer func() { ch <- prometheus.MustNewConstMetric(cc.skipped, prometheus.GaugeValue, skipped) }()
	pairs, ok := cc.store.ConsumerOffsetsByGroupTopic(MaxLagGroupTopics)
	if !ok {
		skipped = 1
		return
	}
	ready := make(map[lagLabels]float64, len(pairs))
	for gt, queues := range pairs {
		var n int64
		for _, q := range queues {
			n += max(cc.store.MaxOffset(gt.Topic, q.QueueId)-max(q.Offset, 0), 0)
		}
		ready[labelsOf(gt.Group, gt.Topic)] += float64(n)
	}
	counts, complete := cc.store.InflightCheckpoints(MaxLagGroupTopics)
	inflight := make(map[lagLabels]float64, len(counts))
	if !complete {
		skipped = 1
	} else {
		for gt, n := range counts {
			l := labelsOf(gt.Group, gt.Topic)
			if _, ok := ready[l]; !ok && len(ready)+len(inflight) >= MaxLagGroupTopics {
				continue
			}
			inflight[l] += float64(n)
		}
	}
	for l, n := range ready {
		ch <- prometheus.MustNewConstMetric(cc.ready, prometheus.GaugeValue, n, l.topic, l.group, l.isRetry, l.isSystem)
	}
	if skipped == 1 {
		return
	}
	for l := range inflight {
		if _, ok := ready[l]; !ok {
			ready[l] = 0
		}
	}
	for l, r := range ready {
		ch <- prometheus.MustNewConstMetric(cc.inflight, prometheus.GaugeValue, inflight[l], l.topic, l.group, l.isRetry, l.isSystem)
		ch <- prometheus.MustNewConstMetric(cc.lag, prometheus.GaugeValue, r+inflight[l], l.topic, l.group, l.isRetry, l.isSystem)
	}
}
