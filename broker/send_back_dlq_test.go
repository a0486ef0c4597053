package broker_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// TestCoreSendBackDLQLabelsOriginTopic: a retry copy sent on to the DLQ is
// counted in rocketmq_send_to_dlq_messages_total under its original topic
// (the header's originTopic, as consumerSendMsgBack labels it, else the
// copy's RETRY_TOPIC), never under %RETRY%<group>: one series per group and
// topic.
func TestCoreSendBackDLQLabelsOriginTopic(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicL", 1)
	mustSend(t, f, sendReq("TopicL", 0, "l0", ""))
	mustSend(t, f, sendReq("TopicL", 0, "l1", ""))
	p, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(popReq("GroupL", "TopicL", 32), done) })
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	msgs, err := codec.DecodeMessages(p.Body)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("popped %d, err %v", len(msgs), err)
	}
	back := func(m codec.MessageExt, level int32, origin string) {
		t.Helper()
		var r broker.SendBackRequest
		r.Group, r.Offset, r.DelayLevel, r.OriginTopic, r.ClientVersion = "GroupL", m.PhysicalOffset, level, origin, broker.VersionV3_4_9+300
		if err := brokertest.Await0(t, func(done func(error)) { f.Broker.SendBack(r, done) }); err != nil {
			t.Fatalf("send back: %v", err)
		}
	}
	for _, m := range msgs {
		back(m, 1, "TopicL")
	}
	f.Broker.AdvanceClock(1100)
	runTimers(t, f)
	retry := readAll(t, f, "%RETRY%GroupL", 0)
	if len(retry) != 2 {
		t.Fatalf("retry topic holds %d, want 2", len(retry))
	}
	back(retry[0], -1, "TopicL") // what the Java and Go clients send
	back(retry[1], -1, "")       // no originTopic: RETRY_TOPIC
	if n := len(readAll(t, f, "%DLQ%GroupL", 0)); n != 2 {
		t.Fatalf("DLQ holds %d", n)
	}
	c := f.Broker.Metrics.SendToDLQ
	if v := testutil.ToFloat64(c.WithLabelValues("TopicL", "GroupL", "false")); v != 2 {
		t.Fatalf("DLQ count of TopicL %v, want 2", v)
	}
	if n := testutil.CollectAndCount(c); n != 1 {
		t.Fatalf("%d series, want 1", n)
	}
}
