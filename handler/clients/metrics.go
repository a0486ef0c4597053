package clients

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/codec"
)

// Collector exports the topic and client tables as the Java broker's
// gauges (metrics-conventions §3), computed at scrape time:
//
//	rocketmq_topic_number                     topics held (system topics included)
//	rocketmq_consumer_group_number            consumer groups with a live member
//	rocketmq_producer_connections{language,version,protocol_type}
//	rocketmq_consumer_connections{consumer_group,language,version,consume_mode,protocol_type,is_system}
//
// language is lower case ("java", "go"), version the client's version
// ordinal as sent in its remoting header (Java prints the MQVersion name),
// consume_mode "push", "pull" or "pop", protocol_type "remoting". One
// connection is one live (client, group) registration. Cardinality is bounded
// by the number of consumer groups.
type Collector struct {
	clients                              *ClientTable
	topicCount                           func() int
	topics, groups, producers, consumers *prometheus.Desc
}

// NewCollector returns the collector of clients; topicCount reports
// the number of topics held (rocketmq_topic_number), called at scrape time
// from the scraping goroutine.
func NewCollector(clients *ClientTable, topicCount func() int) *Collector {
	return &Collector{
		clients:    clients,
		topicCount: topicCount,
		topics:     prometheus.NewDesc("rocketmq_topic_number", "Topics held by this broker.", nil, nil),
		groups:     prometheus.NewDesc("rocketmq_consumer_group_number", "Consumer groups with a live member.", nil, nil),
		producers: prometheus.NewDesc("rocketmq_producer_connections", "Live producer registrations.",
			[]string{"language", "version", "protocol_type"}, nil),
		consumers: prometheus.NewDesc("rocketmq_consumer_connections", "Live consumer registrations.",
			[]string{"consumer_group", "language", "version", "consume_mode", "protocol_type", "is_system"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (tc *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- tc.topics
	ch <- tc.groups
	ch <- tc.producers
	ch <- tc.consumers
}

// consumeMode maps ConsumerData.consumeType to the metric label.
func consumeMode(t string) string {
	switch t {
	case codec.ConsumeActively:
		return "pull"
	case codec.ConsumePop:
		return "pop"
	}
	return "push"
}

// isSystemGroup reports RocketMQ's reserved consumer groups (MixAll.java).
func isSystemGroup(g string) bool {
	switch g {
	case "TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "__MONITOR_CONSUMER", "SELF_TEST_C_GROUP",
		"CID_ONS-HTTP-PROXY", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER", "CID_ONSAPI_PULL":
		return true
	}
	return strings.HasPrefix(g, "CID_RMQ_SYS_")
}

// Collect implements prometheus.Collector. It runs on the scraping
// goroutine and only takes the tables' read locks.
func (tc *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(tc.topics, prometheus.GaugeValue, float64(tc.topicCount()))
	groups := tc.clients.ConsumerGroups()
	ch <- prometheus.MustNewConstMetric(tc.groups, prometheus.GaugeValue, float64(len(groups)))
	type pkey struct{ lang, ver string }
	prod := map[pkey]int{}
	for _, ch := range tc.clients.ProducerChannels() {
		prod[pkey{strings.ToLower(ch.Language), strconv.Itoa(int(ch.Version))}]++
	}
	for k, n := range prod {
		ch <- prometheus.MustNewConstMetric(tc.producers, prometheus.GaugeValue, float64(n), k.lang, k.ver, "remoting")
	}
	for _, g := range groups {
		info, ok := tc.clients.Consumer(g)
		if !ok {
			continue
		}
		counts := map[pkey]int{}
		for _, c := range info.Channels {
			counts[pkey{strings.ToLower(c.Language), strconv.Itoa(int(c.Version))}]++
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(tc.consumers, prometheus.GaugeValue, float64(n),
				g, k.lang, k.ver, consumeMode(info.ConsumeType), "remoting", strconv.FormatBool(isSystemGroup(g)))
		}
	}
}
