package broker_test

import (
	"testing"
	"time"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

func createTopicReq(t *testing.T, f *brokertest.Fixture, r broker.CreateTopicRequest) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) { f.Broker.CreateTopic(r, done) })
}

func deleteTopic(t *testing.T, f *brokertest.Fixture, topic string) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) { f.Broker.DeleteTopic(broker.DeleteTopicRequest{Topic: topic}, done) })
}

// TestCoreTopicCreateDeleteDurable: a created topic (queue counts, perm,
// attributes) and its update survive a restart; a deletion takes the
// topic's POP retry topics of known groups with it and survives a restart
// too.
func TestCoreTopicCreateDeleteDurable(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	err := createTopicReq(t, f, broker.CreateTopicRequest{Topic: "TopicD", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6,
		Attributes: "+message.type=FIFO"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	f.Restart()
	m, ok := f.Broker.Topics.Get("TopicD")
	if !ok || m.ReadQueueNums != 4 || m.WriteQueueNums != 4 || m.Perm != 6 || m.Attributes["message.type"] != "FIFO" ||
		m.TopicFilterType != codec.TopicFilterSingleTag {
		t.Fatalf("after restart %+v %v", m, ok)
	}

	// An update replaces the counts and applies the attribute change.
	err = createTopicReq(t, f, broker.CreateTopicRequest{Topic: "TopicD", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 4,
		Attributes: "-message.type"})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	f.Restart()
	if m, _ := f.Broker.Topics.Get("TopicD"); m.ReadQueueNums != 8 || m.Perm != 4 || m.Attributes != nil {
		t.Fatalf("after update and restart %+v", m)
	}

	mustHeartbeat(t, f, consumerHeartbeat("c1", 1, "GroupD"))
	retry := codec.RetryGroupTopic("GroupD") + codec.PopRetrySeparatorV2 + "TopicD"
	if err := createTopicReq(t, f, broker.CreateTopicRequest{Topic: retry, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}); err != nil {
		t.Fatalf("create %s: %v", retry, err)
	}
	if err := deleteTopic(t, f, "TopicD"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	for _, name := range []string{"TopicD", retry} {
		if _, ok := f.Broker.Topics.Get(name); ok {
			t.Fatalf("%s still there after delete", name)
		}
	}
	f.Restart()
	for _, name := range []string{"TopicD", retry} {
		if _, ok := f.Broker.Topics.Get(name); ok {
			t.Fatalf("%s back after restart", name)
		}
	}
	if err := deleteTopic(t, f, "NeverThere"); err != nil {
		t.Fatalf("deleting an unknown topic: %v", err)
	}

	// The names reported (and logged) are the topic and the retry topics
	// that existed, not every candidate name of every known group.
	for _, name := range []string{"TopicE", retry[:len(retry)-len("TopicD")] + "TopicE"} {
		if err := createTopicReq(t, f, broker.CreateTopicRequest{Topic: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	got := make(chan []string, 1)
	if err := f.Broker.Topics.Delete("TopicE", []string{"OtherGroup"}, func(d []string, err error) {
		if err != nil {
			t.Errorf("delete: %v", err)
		}
		got <- d
	}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if d := <-got; len(d) != 2 || d[0] != "TopicE" || d[1] != codec.PopRetryTopicV2("GroupD", "TopicE") {
		t.Fatalf("deleted names %q", d)
	}
}

// TestCoreTopicRefusals: system topics, invalid names, bad queue counts,
// perm bits and attributes are refused with the remoting codes and
// remarks, and nothing is written.
func TestCoreTopicRefusals(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	ok := broker.CreateTopicRequest{Topic: "TopicOK", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}
	cases := []struct {
		name   string
		mod    func(r *broker.CreateTopicRequest)
		code   int32
		remark string
	}{
		{"TBW102", func(r *broker.CreateTopicRequest) { r.Topic = codec.AutoCreateTopicKey }, codec.InvalidParameter,
			"The topic[TBW102] is conflict with system topic."},
		{"broker-name topic", func(r *broker.CreateTopicRequest) { r.Topic = brokertest.BrokerName }, codec.InvalidParameter,
			"The topic[" + brokertest.BrokerName + "] is conflict with system topic."},
		{"rmq_sys_", func(r *broker.CreateTopicRequest) { r.Topic = "rmq_sys_anything" }, codec.InvalidParameter, ""},
		{"invalid name", func(r *broker.CreateTopicRequest) { r.Topic = "bad topic!" }, codec.InvalidParameter,
			"The specified topic: bad topic!, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"empty name", func(r *broker.CreateTopicRequest) { r.Topic = "" }, codec.InvalidParameter, "The specified topic is blank."},
		{"too many queues", func(r *broker.CreateTopicRequest) { r.ReadQueueNums = broker.MaxTopicQueueNums + 1 }, codec.InvalidParameter,
			"queue nums must be within 0..1024, got read 1025 write 4"},
		{"no queues", func(r *broker.CreateTopicRequest) { r.ReadQueueNums, r.WriteQueueNums = 0, 0 }, codec.InvalidParameter,
			"readQueueNums and writeQueueNums are both 0"},
		{"perm bits", func(r *broker.CreateTopicRequest) { r.Perm = 16 }, codec.InvalidParameter, "perm 16 has unknown bits"},
		{"unknown attribute", func(r *broker.CreateTopicRequest) { r.Attributes = "+color=red" }, codec.InvalidParameter,
			`unsupported attribute key "color"`},
		{"bad attribute value", func(r *broker.CreateTopicRequest) { r.Attributes = "+message.type=BIG" }, codec.InvalidParameter,
			"attribute message.type=BIG: value must be one of NORMAL, FIFO, DELAY, TRANSACTION"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.mod(&r)
			e := wantCode(t, createTopicReq(t, f, r), tc.code)
			if tc.remark != "" && e.Remark != tc.remark {
				t.Fatalf("remark %q, want %q", e.Remark, tc.remark)
			}
		})
	}
	if _, found := f.Broker.Topics.Get("TopicOK"); found {
		t.Fatal("a refused request created its topic")
	}
	if e := wantCode(t, deleteTopic(t, f, codec.AutoCreateTopicKey), codec.InvalidParameter); e.Remark != "The topic[TBW102] is conflict with system topic." {
		t.Fatalf("delete system topic remark %q", e.Remark)
	}
	_ = wantCode(t, deleteTopic(t, f, "bad topic!"), codec.InvalidParameter)
}

// TestCoreCreateTopicsAllOrNothing: the list form checks every topic
// first (the first refusal, prefixed with the topic, answers and nothing
// is written), then writes them all durably.
func TestCoreCreateTopicsAllOrNothing(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	create := func(rs ...broker.CreateTopicRequest) error {
		return brokertest.Await0(t, func(done func(error)) { f.Broker.CreateTopics(rs, done) })
	}
	good := broker.CreateTopicRequest{Topic: "TopicL1", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}
	bad := broker.CreateTopicRequest{Topic: "TopicL2", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 32}
	if e := wantCode(t, create(good, bad), codec.InvalidParameter); e.Remark != "topic TopicL2: perm 32 has unknown bits" {
		t.Fatalf("remark %q", e.Remark)
	}
	if _, ok := f.Broker.Topics.Get("TopicL1"); ok {
		t.Fatal("the list was refused but its first topic was created")
	}
	if err := create(); err != nil {
		t.Fatalf("empty list: %v", err)
	}
	bad.Perm = 6
	if err := create(good, bad); err != nil {
		t.Fatalf("create list: %v", err)
	}
	f.Restart()
	for _, name := range []string{"TopicL1", "TopicL2"} {
		if m, ok := f.Broker.Topics.Get(name); !ok || m.ReadQueueNums != 2 {
			t.Fatalf("%s after restart %+v %v", name, m, ok)
		}
	}
}

// TestCoreCreateTopicWaitsForRegistrar: with a topic registrar installed
// the answer comes only after the registrar's done, and the topic is
// already durable and visible when the registrar is called.
func TestCoreCreateTopicWaitsForRegistrar(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	calls := make(chan func(), 2)
	f.Broker.SetTopicRegistrar(func(done func()) {
		if _, ok := f.Broker.Topics.Get("TopicReg"); !ok {
			t.Error("registrar called before the topic is in the table")
		}
		calls <- done
	})
	answered := make(chan error, 1)
	f.Broker.CreateTopic(broker.CreateTopicRequest{Topic: "TopicReg", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6},
		func(err error) { answered <- err })
	var registered func()
	select {
	case registered = <-calls:
	case <-time.After(brokertest.AwaitTimeout):
		t.Fatal("registrar not called")
	}
	select {
	case err := <-answered:
		t.Fatalf("answered (%v) before the registrar's done", err)
	default:
	}
	registered()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("create: %v", err)
		}
	case <-time.After(brokertest.AwaitTimeout):
		t.Fatal("no answer after the registrar's done")
	}
	f.Broker.SetTopicRegistrar(nil)
	if err := createTopicReq(t, f, broker.CreateTopicRequest{Topic: "TopicNoReg", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}); err != nil {
		t.Fatalf("create without registrar: %v", err)
	}
	if len(calls) != 0 {
		t.Fatal("registrar called after it was removed")
	}
}
