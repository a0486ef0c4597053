package clients

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/popshim/popshim/codec"
)

// Collector exports the topic and client tables as the Java broker's
// gauges (broker/.../metrics/BrokerMetricsConstant.java), computed at scrape time:
//
//	rocketmq_topic_number                     topics held (system topics included)
//	rocketmq_consumer_group_number            subscription groups held (the group table, as Java)
//	rocketmq_producer_connections{language,version,protocol_type}
//	rocketmq_consumer_connections{consumer_group,language,version,consume_mode,protocol_type,is_system}
//
// language is lower case ("java", "go"), version the lower-case MQVersion
// name of the client's remoting header version ("v5_5_0" for 513, as
// BrokerMetricsManager's MQVersion.getVersionDesc(...).toLowerCase()),
// consume_mode "push", "pull" or "pop", protocol_type "remoting", or
// "grpc" for clients of the gRPC endpoint (ClientChannel.Protocol). One
// connection is one live (client, group) registration. Cardinality is bounded
// by the number of consumer groups.
type Collector struct {
	clients                              *ClientTable
	topicCount, groupCount               func() int
	topics, groups, producers, consumers *prometheus.Desc
}

// NewCollector returns the collector of clients; topicCount reports the
// number of topics held (rocketmq_topic_number) and groupCount the number of
// subscription groups held (rocketmq_consumer_group_number, Java's
// subscriptionGroupTable size), both called at scrape time from the
// scraping goroutine.
func NewCollector(clients *ClientTable, topicCount, groupCount func() int) *Collector {
	return &Collector{
		clients:    clients,
		topicCount: topicCount,
		groupCount: groupCount,
		topics:     prometheus.NewDesc("rocketmq_topic_number", "Topics held by this broker.", nil, nil),
		groups:     prometheus.NewDesc("rocketmq_consumer_group_number", "Subscription groups held by this broker.", nil, nil),
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

// versionLabel is the version label of a client's remoting version ordinal.
func versionLabel(v int32) string { return strings.ToLower(codec.VersionName(v)) }

// protocolLabel is the protocol_type label of a ClientChannel.Protocol:
// "remoting" when empty.
func protocolLabel(p string) string {
	if p == "" {
		return "remoting"
	}
	return p
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
	ch <- prometheus.MustNewConstMetric(tc.groups, prometheus.GaugeValue, float64(tc.groupCount()))
	groups := tc.clients.ConsumerGroups()
	type pkey struct{ lang, ver, proto string }
	prod := map[pkey]int{}
	for _, ch := range tc.clients.ProducerChannels() {
		prod[pkey{strings.ToLower(ch.Language), versionLabel(ch.Version), protocolLabel(ch.Protocol)}]++
	}
	for k, n := range prod {
		ch <- prometheus.MustNewConstMetric(tc.producers, prometheus.GaugeValue, float64(n), k.lang, k.ver, k.proto)
	}
	for _, g := range groups {
		info, ok := tc.clients.Consumer(g)
		if !ok {
			continue
		}
		counts := map[pkey]int{}
		for _, c := range info.Channels {
			counts[pkey{strings.ToLower(c.Language), versionLabel(c.Version), protocolLabel(c.Protocol)}]++
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(tc.consumers, prometheus.GaugeValue, float64(n),
				g, k.lang, k.ver, consumeMode(info.ConsumeType), k.proto, strconv.FormatBool(isSystemGroup(g)))
		}
	}
}
