package broker_test

import (
	"errors"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// TestCoreSendBack pops a message and sends it back: with a delay level
// the copy is a timer entry that reaches %RETRY%<group> when due; with
// delay level -1 (gRPC's ForwardMessageToDeadLetterQueue) the copy goes to
// %DLQ%<group> at once. Unknown offsets and groups are refused.
func TestCoreSendBack(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	f := brokertest.Start(t, cfg, nil)
	createTopic(t, f, "TopicK", 1)
	mustSend(t, f, sendReq("TopicK", 0, "k0", props(t, codec.PropertyTags, "TK")))
	mustSend(t, f, sendReq("TopicK", 0, "k1", ""))
	p, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(popReq("GroupK", "TopicK", 32), done) })
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	msgs, err := codec.DecodeMessages(p.Body)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("popped %d, err %v", len(msgs), err)
	}
	back := func(m codec.MessageExt, level int32) error {
		var r broker.SendBackRequest
		r.Group, r.Offset, r.DelayLevel, r.ClientVersion = "GroupK", m.PhysicalOffset, level, broker.VersionV3_4_9+300
		return brokertest.Await0(t, func(done func(error)) { f.Broker.SendBack(r, done) })
	}
	if err := back(msgs[0], 1); err != nil {
		t.Fatalf("send back: %v", err)
	}
	if n := f.Store.PendingTimers(); n != 1 {
		t.Fatalf("pending timers %d, want the retry copy", n)
	}
	f.Broker.AdvanceClock(1100) // level 1 is 1 s
	runTimers(t, f)
	retry := readAll(t, f, "%RETRY%GroupK", 0)
	if len(retry) != 1 {
		t.Fatalf("retry topic holds %d, want 1", len(retry))
	}
	rm := retry[0]
	if string(rm.Body) != "k0" || rm.ReconsumeTimes != 1 {
		t.Fatalf("retry copy %+v", rm)
	}
	if v, _ := rm.Property(codec.PropertyRetryTopic); v != "TopicK" {
		t.Fatalf("RETRY_TOPIC %q", v)
	}
	if v, _ := rm.Property(codec.PropertyOriginMessageID); v != msgs[0].OffsetMsgID() {
		t.Fatalf("ORIGIN_MESSAGE_ID %q, want %q", v, msgs[0].OffsetMsgID())
	}
	if v, _ := rm.Property(codec.PropertyTags); v != "TK" {
		t.Fatalf("TAGS %q", v)
	}

	if err := back(msgs[1], -1); err != nil {
		t.Fatalf("send back to DLQ: %v", err)
	}
	dlq := readAll(t, f, "%DLQ%GroupK", 0)
	if len(dlq) != 1 || string(dlq[0].Body) != "k1" {
		t.Fatalf("DLQ holds %d", len(dlq))
	}

	var bad broker.SendBackRequest
	bad.Group, bad.Offset, bad.DelayLevel = "GroupK", 1<<40, 1
	err = brokertest.Await0(t, func(done func(error)) { f.Broker.SendBack(bad, done) })
	var e *broker.Error
	if !errors.As(err, &e) || e.Code != codec.SystemError || e.Remark != "look message by offset failed, 1099511627776" {
		t.Fatalf("unknown offset: %v", err)
	}
	bad.Group = "bad group!"
	err = brokertest.Await0(t, func(done func(error)) { f.Broker.SendBack(bad, done) })
	if !errors.As(err, &e) || e.Code != codec.SystemError {
		t.Fatalf("bad group: %v", err)
	}
}

// TestCoreSendBackUnknownGroup refuses a send-back for a group that does
// not exist when auto-creation is off.
func TestCoreSendBackUnknownGroup(t *testing.T) {
	f := brokertest.Start(t, func() *conf.Config {
		cfg := brokertest.Config(t.TempDir())
		cfg.AutoCreateSubscriptionGroup = false
		return cfg
	}(), nil)
	var r broker.SendBackRequest
	r.Group, r.Offset = "NoGroup", 0
	err := brokertest.Await0(t, func(done func(error)) { f.Broker.SendBack(r, done) })
	var e *broker.Error
	if !errors.As(err, &e) || e.Code != codec.SubscriptionGroupNotExist || e.Remark != "subscription group not exist, NoGroup "+broker.FAQSuffix {
		t.Fatalf("unknown group: %v", err)
	}
}
