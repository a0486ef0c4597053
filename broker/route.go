package broker

// Route: a topic's route over every broker that holds it, for QueryRoute
// of gRPC (the proxy's RouteActivity) and the queue set of Assignment
// (broker/.../topic/TopicRouteInfoManager.java keeps the same routes in a
// Java broker).
//
// Behaviour:
//   - With a RouteSource installed (SetRouteSource; --namesrv-addr: the
//     Apache name servers' routes, cached and refreshed by
//     handler/namesrv.RouteCache) the route is the one the name servers
//     hold. A cache miss is answered from the source's fetch goroutine
//     when it completes (at most 3 s), never on the caller's goroutine.
//     When the name servers know no route or cannot be reached, this
//     broker's own route is used, so a client that reached popshim keeps
//     working while the name servers catch up.
//   - Without one (the embedded name server) the route is this broker
//     alone, as GET_ROUTEINFO_BY_TOPIC answers it: --broker-name,
//     --cluster-name, the advertised address as master (brokerId 0), and
//     the topic's queue counts, perm and topicSysFlag.
//   - A route look-up never creates a topic (ProvisionalRoute answers
//     what an auto-created one would get).
//
// Response codes: SUCCESS (0); TOPIC_NOT_EXIST (17) "No topic route info
// in name server for the topic: <t>" and the FAQ line, as a 5.5 name
// server, when neither the name servers nor this broker hold the topic.

import (
	"cmp"
	"slices"

	"github.com/popshim/popshim/codec"
)

// RouteResult is the outcome of one RouteSource look-up.
type RouteResult struct {
	// Route is the topic's route as the name servers answered it
	// (route/TopicRouteData.java); valid when Found.
	Route codec.TopicRouteData
	// Found is false when the name servers answered TOPIC_NOT_EXIST (17)
	// or none answered (then Err is set).
	Found bool
	// Err is why no name server answered (dial error, timeout, unexpected
	// response code); nil for SUCCESS and TOPIC_NOT_EXIST.
	Err error
}

// RouteSource supplies the routes other name servers hold
// (handler/namesrv.RouteCache).
type RouteSource interface {
	// Lookup returns topic's cached route and true, or, on a miss, false
	// and arranges for done to be called exactly once, on another
	// goroutine, with the fetched result (or an error result if the
	// source is closed). done is not called when Lookup returns true.
	// Called on any goroutine, including event loops: it must not wait on
	// the network.
	Lookup(topic string, done func(RouteResult)) (RouteResult, bool)
}

// TopicRoute is a topic's route: its queues on every broker that holds it.
type TopicRoute struct {
	Topic string
	// Brokers has one entry per QueueData of the route, sorted by
	// BrokerName (stable).
	Brokers []BrokerQueues
}

// BrokerQueues is one broker's part of a route: a QueueData
// (route/QueueData.java) with the addresses of the BrokerData of the same
// brokerName (route/BrokerData.java).
type BrokerQueues struct {
	BrokerName string
	Cluster    string // "" when the route has no BrokerData for BrokerName
	// Addrs maps brokerId to "ip:port"; 0 is the master, the only one
	// clients publish to and pop from. Empty when the route has no
	// BrokerData for BrokerName. Shared with the RouteSource's cache:
	// read only.
	Addrs          map[int64]string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32 // codec.Perm* bits: 2 write, 4 read, 6 both
	TopicSysFlag   int32
}

// ReadableQueues lists queues 0..ReadQueueNums-1 of every broker whose
// perm allows reading, sorted by (topic, brokerName, queueId) without
// repeats, as TopicRouteInfoManager.topicRouteData2TopicSubscribeInfo
// builds the set Assignment allocates from. Never nil.
func (r *TopicRoute) ReadableQueues() []codec.MessageQueue {
	out := []codec.MessageQueue{}
	for _, bq := range r.Brokers {
		if bq.Perm&codec.PermRead == 0 {
			continue
		}
		for i := int32(0); i < bq.ReadQueueNums; i++ {
			out = append(out, codec.MessageQueue{Topic: r.Topic, BrokerName: bq.BrokerName, QueueID: i})
		}
	}
	slices.SortFunc(out, compareQueues)
	return slices.CompactFunc(out, func(a, b codec.MessageQueue) bool { return compareQueues(a, b) == 0 })
}

// compareQueues orders message queues as MessageQueue.compareTo: topic,
// then brokerName, then queueId.
func compareQueues(a, b codec.MessageQueue) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.BrokerName, b.BrokerName), cmp.Compare(a.QueueID, b.QueueID))
}

// Route gives done topic's route, or an *Error (TOPIC_NOT_EXIST). done
// runs on the caller's goroutine when the route is known at once, else on
// the RouteSource's fetch goroutine. Any goroutine; never blocks.
func (b *Broker) Route(topic string, done func(TopicRoute, error)) {
	b.withRoute(topic, func(rt TopicRoute, ok bool) {
		if !ok {
			done(TopicRoute{}, &Error{Code: codec.TopicNotExist,
				Remark: "No topic route info in name server for the topic: " + topic + FAQSuffix})
			return
		}
		done(rt, nil)
	})
}

// withRoute calls then exactly once with topic's route (ok false: no
// route anywhere): at once when no RouteSource is installed or it has the
// route cached, else from the source's fetch goroutine.
func (b *Broker) withRoute(topic string, then func(rt TopicRoute, ok bool)) {
	src := b.routeSource()
	if src == nil {
		then(b.localRoute(topic))
		return
	}
	res, ok := src.Lookup(topic, func(res RouteResult) { then(b.routeFrom(topic, &res)) })
	if ok {
		then(b.routeFrom(topic, &res))
	}
}

// routeFrom is the route of topic from a RouteSource answer, falling back
// to this broker's own route when the name servers have none.
func (b *Broker) routeFrom(topic string, res *RouteResult) (TopicRoute, bool) {
	if !res.Found {
		return b.localRoute(topic)
	}
	rt := TopicRoute{Topic: topic, Brokers: make([]BrokerQueues, 0, len(res.Route.QueueDatas))}
	for _, qd := range res.Route.QueueDatas {
		bq := BrokerQueues{BrokerName: qd.BrokerName, ReadQueueNums: qd.ReadQueueNums, WriteQueueNums: qd.WriteQueueNums,
			Perm: qd.Perm, TopicSysFlag: qd.TopicSysFlag}
		for _, bd := range res.Route.BrokerDatas {
			if bd.BrokerName == qd.BrokerName {
				bq.Cluster, bq.Addrs = bd.Cluster, bd.BrokerAddrs
				break
			}
		}
		rt.Brokers = append(rt.Brokers, bq)
	}
	slices.SortStableFunc(rt.Brokers, func(x, y BrokerQueues) int { return cmp.Compare(x.BrokerName, y.BrokerName) })
	return rt, true
}

// localRoute is topic's route on this broker alone, its perm masked with
// the broker's permission (MaskTopicPerm); false when this broker does not
// hold the topic.
func (b *Broker) localRoute(topic string) (TopicRoute, bool) {
	m, ok := b.Topics.Get(topic)
	if !ok {
		return TopicRoute{}, false
	}
	return b.selfRoute(topic, m.ReadQueueNums, m.WriteQueueNums, m.Perm, m.TopicSysFlag), true
}

// selfRoute is a route of this broker alone with the given queue counts,
// perm (masked with MaskTopicPerm) and topicSysFlag.
func (b *Broker) selfRoute(topic string, read, write, perm, sysFlag int32) TopicRoute {
	return TopicRoute{Topic: topic, Brokers: []BrokerQueues{{
		BrokerName: b.Cfg.BrokerName, Cluster: b.Cfg.ClusterName,
		Addrs:         map[int64]string{0: b.AdvertisedAddr()},
		ReadQueueNums: read, WriteQueueNums: write, Perm: b.MaskTopicPerm(perm), TopicSysFlag: sysFlag,
	}}}
}

// ProvisionalRoute is the route topic would have on this broker once
// auto-created (--default-topic-queue-nums queues, perm 6 masked with the
// broker's permission), without creating it; false when the topic exists
// or would not be auto-created (TopicTable.WouldAutoCreate). The v5
// endpoint answers a route look-up of an unknown topic with it: a v5
// producer has no TBW102 fallback, and a look-up must not create a topic
// (a consumer's mistyped topic would appear). Any goroutine.
func (b *Broker) ProvisionalRoute(topic string) (TopicRoute, bool) {
	if _, ok := b.Topics.Get(topic); ok || !b.Topics.WouldAutoCreate(topic) {
		return TopicRoute{}, false
	}
	n := b.Topics.Settings().DefaultQueueNums
	return b.selfRoute(topic, n, n, codec.PermRead|codec.PermWrite, 0), true
}
