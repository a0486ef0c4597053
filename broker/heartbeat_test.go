package broker_test

import (
	"slices"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
)

// consumerIDs is the core's GET_CONSUMER_LIST_BY_GROUP answer for group
// (nil with the error when the group has no member).
func consumerIDs(t *testing.T, f *brokertest.Fixture, group string) ([]string, error) {
	t.Helper()
	return brokertest.Await(t, func(done func([]string, error)) {
		f.Broker.ConsumerList(broker.ConsumerListRequest{ConsumerGroup: group}, done)
	})
}

// TestCoreHeartbeatRegistersGroupAndRetryTopic: a heartbeat registers the
// client in its consumer group (ConsumerList sees it), auto-creates the
// group's configuration and its retry topic, and registers its producer
// group; the channel carries the connection fields of the request.
func TestCoreHeartbeatRegistersGroupAndRetryTopic(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	r := consumerHeartbeat("10.0.0.1@a", 7, "GroupHB")
	r.Producers = []string{"ProducerHB"}
	res := mustHeartbeat(t, f, r)
	if res.Dropped || res.Skipped.Count != 0 || len(res.Registered.Consumers) != 1 || len(res.Registered.Producers) != 1 {
		t.Fatalf("result %+v", res)
	}
	ids, err := consumerIDs(t, f, "GroupHB")
	if err != nil || !slices.Equal(ids, []string{"10.0.0.1@a"}) {
		t.Fatalf("consumer list = %v, %v", ids, err)
	}
	if _, ok := f.Broker.Groups.Get("GroupHB"); !ok {
		t.Fatal("group configuration not auto-created")
	}
	rt, ok := f.Broker.Topics.Get(codec.RetryGroupTopic("GroupHB"))
	if !ok || rt.ReadQueueNums != 1 || rt.Perm != codec.PermRead|codec.PermWrite {
		t.Fatalf("retry topic %+v, exists %v", rt, ok)
	}
	info, ok := f.Broker.Clients.Consumer("GroupHB")
	if !ok || len(info.Channels) != 1 {
		t.Fatalf("consumer info %+v %v", info, ok)
	}
	ch := info.Channels[0]
	if ch.ConnID != 7 || ch.Language != "JAVA" || ch.Version != 479 || ch.RemoteAddr != "127.0.0.1:40000" {
		t.Fatalf("channel %+v", ch)
	}
	if _, ok := info.Subscriptions["TopicHB"]; !ok || info.ConsumeType != codec.ConsumePassively {
		t.Fatalf("settings %+v", info)
	}
	if chans, ok := f.Broker.Clients.Producers("ProducerHB"); !ok || len(chans) != 1 {
		t.Fatalf("producer channels %v %v", chans, ok)
	}
}

// TestCoreUnregisterAndConnClosedRemoveConsumers: UNREGISTER_CLIENT takes
// one client out of its group; closing a connection takes out every
// registration made over it; an empty group answers ConsumerList with
// SYSTEM_ERROR and Java's remark.
func TestCoreUnregisterAndConnClosedRemoveConsumers(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	mustHeartbeat(t, f, consumerHeartbeat("c1", 1, "GroupU"))
	mustHeartbeat(t, f, consumerHeartbeat("c2", 2, "GroupU", "GroupV"))
	if ids, _ := consumerIDs(t, f, "GroupU"); !slices.Equal(ids, []string{"c1", "c2"}) {
		t.Fatalf("members %v, want c1 c2", ids)
	}

	err := brokertest.Await0(t, func(done func(error)) {
		f.Broker.UnregisterClient(broker.UnregisterClientRequest{ClientID: "c1", ConsumerGroup: "GroupU"}, done)
	})
	if err != nil {
		t.Fatalf("unregister: %v", err)
	}
	if ids, _ := consumerIDs(t, f, "GroupU"); !slices.Equal(ids, []string{"c2"}) {
		t.Fatalf("members after unregister %v, want c2", ids)
	}
	// Unknown clients and groups are not an error.
	err = brokertest.Await0(t, func(done func(error)) {
		f.Broker.UnregisterClient(broker.UnregisterClientRequest{ClientID: "nobody", ConsumerGroup: "NoGroup", ProducerGroup: "NoP"}, done)
	})
	if err != nil {
		t.Fatalf("unregister unknown: %v", err)
	}

	f.Broker.ConnClosed(2)
	for _, g := range []string{"GroupU", "GroupV"} {
		ids, err := consumerIDs(t, f, g)
		if e := wantCode(t, err, codec.SystemError); ids != nil || e.Remark != "no consumer for this group, "+g {
			t.Fatalf("%s after close: %v %q", g, ids, e.Remark)
		}
	}
}

// TestCoreHeartbeatRefusals: a heartbeat without clientID, above a bound
// or above the connection's channel limit is refused with RocketMQ's code
// and registers nothing.
func TestCoreHeartbeatRefusals(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.MaxHeartbeatGroups = 2
	cfg.MaxHeartbeatSubscriptions = 2
	cfg.MaxConnClientChannels = 3
	f := brokertest.Start(t, cfg, nil)

	_, err := heartbeat(t, f, consumerHeartbeat("", 1, "GroupR"))
	if e := wantCode(t, err, codec.SystemError); e.Remark != "heartbeat: the custom field <clientID> is null" {
		t.Fatalf("remark %q", e.Remark)
	}
	_, err = heartbeat(t, f, consumerHeartbeat("c1", 1, "G1", "G2", "G3"))
	if e := wantCode(t, err, codec.InvalidParameter); e.Remark != "heartbeat lists 3 consumer groups, above --max-heartbeat-groups 2" {
		t.Fatalf("remark %q", e.Remark)
	}
	r := consumerHeartbeat("c1", 1, "G1")
	r.Consumers[0].Subscriptions = append(r.Consumers[0].Subscriptions,
		clients.Subscription{Topic: "A", SubString: "*"}, clients.Subscription{Topic: "B", SubString: "*"})
	_, err = heartbeat(t, f, r)
	if e := wantCode(t, err, codec.InvalidParameter); e.Remark != `heartbeat consumer group "G1" lists 3 subscriptions, above --max-heartbeat-subscriptions 2` {
		t.Fatalf("remark %q", e.Remark)
	}
	mustHeartbeat(t, f, consumerHeartbeat("c1", 1, "G1", "G2"))
	_, err = heartbeat(t, f, consumerHeartbeat("c2", 1, "G3", "G4"))
	if e := wantCode(t, err, codec.InvalidParameter); e.Remark !=
		"heartbeat: connection holds 2 client channels and the heartbeat adds 2, above --max-conn-client-channels 3" {
		t.Fatalf("remark %q", e.Remark)
	}
	if _, ok := f.Broker.Topics.Get(codec.RetryGroupTopic("G3")); ok {
		t.Fatal("a refused heartbeat created a retry topic")
	}
	if ids, err := consumerIDs(t, f, "G3"); err == nil {
		t.Fatalf("a refused heartbeat registered %v", ids)
	}
}

// TestCoreHeartbeatSkipsInvalidAndUnknown: entries with invalid names are
// skipped and counted, the rest registered; with auto-creation off an
// unknown group is left out (Dropped) until an admin creates it.
func TestCoreHeartbeatSkipsInvalidAndUnknown(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateSubscriptionGroup = false
	f := brokertest.Start(t, cfg, nil)
	err := brokertest.Await0(t, func(done func(error)) {
		f.Broker.UpdateSubscriptionGroups(broker.UpdateSubscriptionGroupsRequest{
			Configs: []codec.SubscriptionGroupConfig{codec.NewSubscriptionGroupConfig("Known")}}, done)
	})
	if err != nil {
		t.Fatalf("create group: %v", err)
	}

	r := consumerHeartbeat("c1", 1, "Known", "bad group!", "Unknown")
	r.Consumers[0].Subscriptions = append(r.Consumers[0].Subscriptions, clients.Subscription{Topic: "bad topic!", SubString: "*"})
	r.Producers = []string{"P1", "bad producer!"}
	res := mustHeartbeat(t, f, r)
	if res.Skipped.Count != 3 || !res.Dropped {
		t.Fatalf("skipped %+v dropped %v, want 3 skipped and dropped", res.Skipped, res.Dropped)
	}
	if len(res.Registered.Consumers) != 1 || res.Registered.Consumers[0].Group != "Known" ||
		len(res.Registered.Consumers[0].Subscriptions) != 1 || !slices.Equal(res.Registered.Producers, []string{"P1"}) {
		t.Fatalf("registered %+v", res.Registered)
	}
	if _, ok := f.Broker.Topics.Get(codec.RetryGroupTopic("Unknown")); ok {
		t.Fatal("unknown group got a retry topic")
	}
	if _, err := consumerIDs(t, f, "Unknown"); err == nil {
		t.Fatal("unknown group registered")
	}

	err = brokertest.Await0(t, func(done func(error)) {
		f.Broker.UpdateSubscriptionGroups(broker.UpdateSubscriptionGroupsRequest{
			Configs: []codec.SubscriptionGroupConfig{codec.NewSubscriptionGroupConfig("Unknown")}}, done)
	})
	if err != nil {
		t.Fatalf("create group: %v", err)
	}
	if res := mustHeartbeat(t, f, consumerHeartbeat("c1", 1, "Known", "Unknown")); res.Dropped {
		t.Fatal("created group still dropped")
	}
	if ids, _ := consumerIDs(t, f, "Unknown"); !slices.Equal(ids, []string{"c1"}) {
		t.Fatalf("members %v", ids)
	}
}

// TestCoreRefreshHeartbeat: the fast path applies while the registration
// stands, and refuses (full path needed) once the client unregistered or
// a group was deleted with auto-creation off.
func TestCoreRefreshHeartbeat(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateSubscriptionGroup = false
	f := brokertest.Start(t, cfg, nil)
	err := brokertest.Await0(t, func(done func(error)) {
		f.Broker.UpdateSubscriptionGroups(broker.UpdateSubscriptionGroupsRequest{
			Configs: []codec.SubscriptionGroupConfig{codec.NewSubscriptionGroupConfig("GroupF")}}, done)
	})
	if err != nil {
		t.Fatalf("create group: %v", err)
	}
	res := mustHeartbeat(t, f, consumerHeartbeat("c1", 1, "GroupF"))
	if !f.Broker.RefreshHeartbeat(&res.Registered, res.Skipped) {
		t.Fatal("refresh of a standing registration refused")
	}
	f.Broker.Clients.Unregister("c1", "", "GroupF")
	if f.Broker.RefreshHeartbeat(&res.Registered, res.Skipped) {
		t.Fatal("refresh after unregister accepted")
	}
	res = mustHeartbeat(t, f, consumerHeartbeat("c1", 1, "GroupF"))
	err = brokertest.Await0(t, func(done func(error)) {
		f.Broker.DeleteSubscriptionGroups(broker.DeleteSubscriptionGroupsRequest{Groups: []string{"GroupF"}}, done)
	})
	if err != nil {
		t.Fatalf("delete group: %v", err)
	}
	if f.Broker.RefreshHeartbeat(&res.Registered, res.Skipped) {
		t.Fatal("refresh of a deleted group accepted")
	}
}
