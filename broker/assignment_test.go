package broker_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// fixedRoutes is a RouteSource over a fixed table of routes, as name
// servers would answer them. With async every look-up misses and the
// answer comes from a new goroutine, as a cache miss's fetch does.
type fixedRoutes struct {
	routes map[string]codec.TopicRouteData
	async  bool
}

func (s *fixedRoutes) Lookup(topic string, done func(broker.RouteResult)) (broker.RouteResult, bool) {
	rd, ok := s.routes[topic]
	res := broker.RouteResult{Route: rd, Found: ok}
	if !s.async {
		return res, true
	}
	go done(res)
	return broker.RouteResult{}, false
}

// twoBrokerRoute is topic on brokers "b1" (3 queues, read-write) and "b2"
// (2 queues), with a write-only "b3" that assignments must leave out.
func twoBrokerRoute() codec.TopicRouteData {
	return codec.TopicRouteData{
		BrokerDatas: []codec.BrokerData{
			{BrokerName: "b2", Cluster: "C", BrokerAddrs: map[int64]string{0: "10.0.0.2:10911"}},
			{BrokerName: "b1", Cluster: "C", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911"}},
		},
		QueueDatas: []codec.QueueData{
			{BrokerName: "b2", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6},
			{BrokerName: "b1", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6},
			{BrokerName: "b3", ReadQueueNums: 4, WriteQueueNums: 4, Perm: codec.PermWrite},
		},
	}
}

func assignment(t *testing.T, f *brokertest.Fixture, r broker.AssignmentRequest) (broker.AssignmentResult, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.AssignmentResult, error)) { f.Broker.Assignment(r, done) })
}

func setMode(t *testing.T, f *brokertest.Fixture, r broker.MessageRequestModeRequest) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) { f.Broker.SetMessageRequestMode(r, done) })
}

// checkCoverage asks the assignment of every client of group over topic
// with strategy and checks that together they hold each queue of want
// exactly once, in mode.
func checkCoverage(t *testing.T, f *brokertest.Fixture, topic, group, strategy string, cids []string, want []codec.MessageQueue) {
	t.Helper()
	seen := map[codec.MessageQueue]int{}
	for _, cid := range cids {
		res, err := assignment(t, f, broker.AssignmentRequest{Topic: topic, ConsumerGroup: group, ClientID: cid,
			StrategyName: strategy, MessageModel: codec.MessageModelCluster})
		if err != nil || res.KeepCurrent || res.Mode != codec.MessageRequestModePull {
			t.Fatalf("%s %s: %+v %v", strategy, cid, res, err)
		}
		for _, mq := range res.Queues {
			seen[mq]++
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("%s over %d clients: %d distinct queues %v, want %d", strategy, len(cids), len(seen), seen, len(want))
	}
	for _, mq := range want {
		if seen[mq] != 1 {
			t.Fatalf("%s over %d clients: queue %+v assigned %d times", strategy, len(cids), mq, seen[mq])
		}
	}
}

// TestCoreAssignmentCoversEveryQueueOnce: in PULL mode the shares of 1
// and of 3 registered clients hold every queue of the topic exactly once,
// with both strategies; in the default POP mode every client gets the
// whole broker (queueId -1).
func TestCoreAssignmentCoversEveryQueueOnce(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicQA", 8)
	var want []codec.MessageQueue
	for i := int32(0); i < 8; i++ {
		want = append(want, codec.MessageQueue{Topic: "TopicQA", BrokerName: brokertest.BrokerName, QueueID: i})
	}

	res, err := assignment(t, f, broker.AssignmentRequest{Topic: "TopicQA", ConsumerGroup: "GroupQA", ClientID: "c0",
		StrategyName: broker.StrategyAvg, MessageModel: codec.MessageModelCluster})
	wantPop := []codec.MessageQueue{{Topic: "TopicQA", BrokerName: brokertest.BrokerName, QueueID: -1}}
	if err != nil || res.Mode != codec.MessageRequestModePop || !slices.Equal(res.Queues, wantPop) {
		t.Fatalf("default POP assignment %+v %v", res, err)
	}

	if err := setMode(t, f, broker.MessageRequestModeRequest{Topic: "TopicQA", ConsumerGroup: "GroupQA", Mode: codec.MessageRequestModePull}); err != nil {
		t.Fatalf("set mode: %v", err)
	}
	// One client, not even registered yet: it counts as the only member.
	for _, s := range []string{broker.StrategyAvg, broker.StrategyAvgByCircle} {
		checkCoverage(t, f, "TopicQA", "GroupQA", s, []string{"c0"}, want)
	}
	cids := []string{"c0", "c1", "c2"}
	for i, cid := range cids {
		mustHeartbeat(t, f, consumerHeartbeat(cid, uint64(i+1), "GroupQA"))
	}
	for _, s := range []string{broker.StrategyAvg, broker.StrategyAvgByCircle} {
		checkCoverage(t, f, "TopicQA", "GroupQA", s, cids, want)
	}

	// Broadcasting: every queue to everyone.
	res, err = assignment(t, f, broker.AssignmentRequest{Topic: "TopicQA", ConsumerGroup: "GroupQA", ClientID: "c1",
		MessageModel: codec.MessageModelBroadcst})
	if err != nil || !slices.Equal(res.Queues, want) {
		t.Fatalf("broadcast %+v %v", res, err)
	}
}

// TestCoreAssignmentEdges: %RETRY% topics get an empty list, an unknown
// topic or strategy keeps the current assignment, and a missing field is
// SYSTEM_ERROR naming it.
func TestCoreAssignmentEdges(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicE", 2)
	base := broker.AssignmentRequest{Topic: "TopicE", ConsumerGroup: "GroupE", ClientID: "c0",
		StrategyName: broker.StrategyAvg, MessageModel: codec.MessageModelCluster}

	r := base
	r.Topic = codec.RetryGroupTopic("GroupE")
	if res, err := assignment(t, f, r); err != nil || res.KeepCurrent || res.Queues == nil || len(res.Queues) != 0 {
		t.Fatalf("retry topic %+v %v", res, err)
	}
	r = base
	r.Topic = "NoSuchTopic"
	if res, err := assignment(t, f, r); err != nil || !res.KeepCurrent || res.Queues != nil {
		t.Fatalf("unknown topic %+v %v", res, err)
	}
	r = base
	r.StrategyName = "CONSISTENT_HASH"
	if res, err := assignment(t, f, r); err != nil || !res.KeepCurrent {
		t.Fatalf("unsupported strategy %+v %v", res, err)
	}
	for field, mod := range map[string]func(*broker.AssignmentRequest){
		"topic":         func(r *broker.AssignmentRequest) { r.Topic = "" },
		"consumerGroup": func(r *broker.AssignmentRequest) { r.ConsumerGroup = "" },
		"clientId":      func(r *broker.AssignmentRequest) { r.ClientID = "" },
	} {
		r := base
		mod(&r)
		_, err := assignment(t, f, r)
		if e := wantCode(t, err, codec.SystemError); e.Remark != "query assignment: the custom field <"+field+"> is null" {
			t.Fatalf("remark %q", e.Remark)
		}
	}
}

// TestCoreRouteAndAssignmentFromRouteSource: with a RouteSource the route
// is the name servers' (every broker, sorted, addresses joined), answered
// also after a miss from another goroutine, and assignments cover the
// readable queues of every broker; a topic the source lacks falls back to
// this broker's own route; neither → TOPIC_NOT_EXIST.
func TestCoreRouteAndAssignmentFromRouteSource(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "LocalOnly", 2)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			f.Broker.SetRouteSource(&fixedRoutes{routes: map[string]codec.TopicRouteData{"TopicC": twoBrokerRoute()}, async: async})
			rt, err := brokertest.Await(t, func(done func(broker.TopicRoute, error)) { f.Broker.Route("TopicC", done) })
			if err != nil || len(rt.Brokers) != 3 {
				t.Fatalf("route %+v %v", rt, err)
			}
			if b := rt.Brokers[0]; b.BrokerName != "b1" || b.Addrs[0] != "10.0.0.1:10911" || b.ReadQueueNums != 3 || b.Perm != 6 {
				t.Fatalf("first broker %+v", b)
			}
			if b := rt.Brokers[2]; b.BrokerName != "b3" || b.Addrs != nil || b.Perm != codec.PermWrite {
				t.Fatalf("write-only broker %+v", b)
			}
			var want []codec.MessageQueue
			for _, bq := range []struct {
				name string
				n    int32
			}{{"b1", 3}, {"b2", 2}} {
				for i := int32(0); i < bq.n; i++ {
					want = append(want, codec.MessageQueue{Topic: "TopicC", BrokerName: bq.name, QueueID: i})
				}
			}
			if got := rt.ReadableQueues(); !slices.Equal(got, want) {
				t.Fatalf("readable queues %v, want %v", got, want)
			}
			// The default POP mode: one -1 queue per readable broker.
			res, err := assignment(t, f, broker.AssignmentRequest{Topic: "TopicC", ConsumerGroup: "GroupP", ClientID: "c0",
				StrategyName: broker.StrategyAvg, MessageModel: codec.MessageModelCluster})
			wantPop := []codec.MessageQueue{{Topic: "TopicC", BrokerName: "b1", QueueID: -1}, {Topic: "TopicC", BrokerName: "b2", QueueID: -1}}
			if err != nil || !slices.Equal(res.Queues, wantPop) {
				t.Fatalf("POP assignment %+v %v", res, err)
			}
			// PULL shares over 3 members (setting the mode creates TopicC
			// here too, which the name servers' route overrides).
			if err := setMode(t, f, broker.MessageRequestModeRequest{Topic: "TopicC", ConsumerGroup: "GroupC", Mode: codec.MessageRequestModePull}); err != nil {
				t.Fatalf("set mode: %v", err)
			}
			cids := []string{"c0", "c1", "c2"}
			for i, cid := range cids {
				mustHeartbeat(t, f, consumerHeartbeat(cid, uint64(i+1), "GroupC"))
			}
			for _, s := range []string{broker.StrategyAvg, broker.StrategyAvgByCircle} {
				checkCoverage(t, f, "TopicC", "GroupC", s, cids, want)
			}

			rt, err = brokertest.Await(t, func(done func(broker.TopicRoute, error)) { f.Broker.Route("LocalOnly", done) })
			if err != nil || len(rt.Brokers) != 1 || rt.Brokers[0].BrokerName != brokertest.BrokerName {
				t.Fatalf("fallback route %+v %v", rt, err)
			}
			_, err = brokertest.Await(t, func(done func(broker.TopicRoute, error)) { f.Broker.Route("Nowhere", done) })
			if e := wantCode(t, err, codec.TopicNotExist); e.Remark != "No topic route info in name server for the topic: Nowhere"+broker.FAQSuffix {
				t.Fatalf("remark %q", e.Remark)
			}
		})
	}
}

// TestCoreLocalRoute: without a RouteSource a topic routes to this broker
// alone with its queue counts and perm, and the advertised address.
func TestCoreLocalRoute(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicLR", 3)
	rt, err := brokertest.Await(t, func(done func(broker.TopicRoute, error)) { f.Broker.Route("TopicLR", done) })
	if err != nil || rt.Topic != "TopicLR" || len(rt.Brokers) != 1 {
		t.Fatalf("route %+v %v", rt, err)
	}
	b := rt.Brokers[0]
	if b.BrokerName != brokertest.BrokerName || b.Cluster != f.Cfg.ClusterName || b.Addrs[0] != f.Broker.AdvertisedAddr() ||
		b.ReadQueueNums != 3 || b.WriteQueueNums != 3 || b.Perm != 6 {
		t.Fatalf("broker %+v", b)
	}
	_, err = brokertest.Await(t, func(done func(broker.TopicRoute, error)) { f.Broker.Route("NoSuchTopic", done) })
	_ = wantCode(t, err, codec.TopicNotExist)
}

// TestCoreSetMessageRequestMode: a stored mode survives a restart; the
// refusals carry RocketMQ's codes.
func TestCoreSetMessageRequestMode(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateTopic = false
	f := brokertest.Start(t, cfg, nil)
	createTopic(t, f, "TopicM", 4)
	if err := setMode(t, f, broker.MessageRequestModeRequest{Topic: "TopicM", ConsumerGroup: "GroupM",
		Mode: codec.MessageRequestModePop, PopShareQueueNum: 1}); err != nil {
		t.Fatalf("set mode: %v", err)
	}
	f.Restart()
	m, ok := f.Broker.Topics.RequestMode("TopicM", "GroupM")
	if !ok || m.Mode != codec.MessageRequestModePop || m.PopShareQueueNum != 1 {
		t.Fatalf("mode after restart %+v %v", m, ok)
	}

	cases := []struct {
		name   string
		r      broker.MessageRequestModeRequest
		code   int32
		remark string
	}{
		{"no topic", broker.MessageRequestModeRequest{ConsumerGroup: "G", Mode: "PULL"}, codec.SystemError,
			"set message request mode: the custom field <topic> is null"},
		{"retry topic", broker.MessageRequestModeRequest{Topic: "%RETRY%G", ConsumerGroup: "G", Mode: "PULL"}, codec.NoPermission,
			"retry topic is not allowed to set mode"},
		{"bad group", broker.MessageRequestModeRequest{Topic: "TopicM", ConsumerGroup: "bad group!", Mode: "PULL"}, codec.InvalidParameter, ""},
		{"bad mode", broker.MessageRequestModeRequest{Topic: "TopicM", ConsumerGroup: "G", Mode: "PUSH"}, codec.InvalidParameter,
			"mode must be POP or PULL, got PUSH"},
		{"unknown topic", broker.MessageRequestModeRequest{Topic: "NoSuchTopic", ConsumerGroup: "G", Mode: "PULL"}, codec.TopicNotExist,
			"topic NoSuchTopic not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := wantCode(t, setMode(t, f, tc.r), tc.code)
			if tc.remark != "" && e.Remark != tc.remark {
				t.Fatalf("remark %q, want %q", e.Remark, tc.remark)
			}
		})
	}
	if _, ok := f.Broker.Topics.Get("NoSuchTopic"); ok {
		t.Fatal("refused mode created its topic")
	}
}
