package broker_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
)

// sendPeer is the born host of every test send.
var sendPeer = netip.MustParseAddrPort("10.1.2.3:45678")

// props encodes a properties string from key/value pairs.
func props(t *testing.T, kv ...string) string {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	s, err := codec.EncodeProperties(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sendReq is a single-message SendRequest from a current client.
func sendReq(topic string, queueID int32, body, props string) broker.SendRequest {
	return broker.SendRequest{ProducerGroup: "PG", Topic: topic, QueueID: queueID, BornTimestamp: 1_700_000_000_000,
		Properties: props, ClientVersion: broker.VersionV3_4_9 + 300, BornHost: sendPeer, Body: []byte(body)}
}

// batchReq is a SendRequest of a batch with one entry per body, each with
// entryProps.
func batchReq(t *testing.T, topic string, queueID int32, entryProps string, bodies ...string) broker.SendRequest {
	t.Helper()
	r := sendReq(topic, queueID, "", "")
	r.Batch, r.Body = true, nil
	for _, b := range bodies {
		var err error
		if r.Body, err = codec.AppendBatchEntry(r.Body, &codec.Message{Body: []byte(b), Properties: entryProps}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// mustSend sends r through the core and fails the test unless it stored.
func mustSend(t *testing.T, f *brokertest.Fixture, r broker.SendRequest) broker.SendResult {
	t.Helper()
	res, err := brokertest.Await(t, func(done func(broker.SendResult, error)) { f.Broker.Send(r, done) })
	if err != nil {
		t.Fatalf("send to %s: %v", r.Topic, err)
	}
	return res
}

// sendCode sends r and returns the *broker.Error it was refused with; it
// also checks that the refusal completed before Send returned (nothing
// was queued).
func sendCode(t *testing.T, f *brokertest.Fixture, r broker.SendRequest) *broker.Error {
	t.Helper()
	var got error
	called := false
	f.Broker.Send(r, func(_ broker.SendResult, err error) { got, called = err, true })
	if !called {
		t.Fatalf("send to %s: refusal did not complete on the caller's goroutine", r.Topic)
	}
	var e *broker.Error
	if !errors.As(got, &e) {
		t.Fatalf("send to %s: err = %v, want *broker.Error", r.Topic, got)
	}
	return e
}

// readAll returns the decoded messages of (topic, queueId) from offset 0.
func readAll(t *testing.T, f *brokertest.Fixture, topic string, queueID int32) []codec.MessageExt {
	t.Helper()
	recs, _, err := f.Store.ReadMessages(topic, queueID, 0, 100, 1<<20)
	if err != nil {
		t.Fatalf("read %s/%d: %v", topic, queueID, err)
	}
	out := make([]codec.MessageExt, len(recs))
	for i, rec := range recs {
		if out[i], _, err = codec.DecodeMessage(rec); err != nil {
			t.Fatalf("decode %s/%d #%d: %v", topic, queueID, i, err)
		}
	}
	return out
}

// runTimers runs timer passes until one that started after the call has
// completed: every timer due at the broker clock before the call has been
// delivered durably. Bounded by brokertest.AwaitTimeout.
func runTimers(t *testing.T, f *brokertest.Fixture) {
	t.Helper()
	tl := f.Broker.Timers
	start := tl.Passes()
	deadline := time.Now().Add(brokertest.AwaitTimeout)
	for tl.Passes() < start+2 {
		if time.Now().After(deadline) {
			t.Fatal("timer passes did not run")
		}
		tl.Trigger()
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCoreSendThenPop sends through the core (no socket) and pops the
// message back: body, flag and user properties kept, POP_CK stripped,
// UNIQ_KEY (the result's MsgID) and CLUSTER added, born host the request's,
// and the result's offsetMsgId, queue and offset those of the record.
func TestCoreSendThenPop(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicS", 2)
	r := sendReq("TopicS", 1, "hello", props(t, codec.PropertyTags, "TagA", codec.PropertyKeys, "k1 k2", "user", "u1",
		codec.PropertyPopCK, "0 1 2 0 0 b 0 0"))
	r.Flag, r.SysFlag = 5, 0
	res := mustSend(t, f, r)
	if res.Topic != "TopicS" || res.QueueID != 1 || res.QueueOffset != 0 || res.Count != 1 || res.DeliverAtMillis != 0 {
		t.Fatalf("result %+v", res)
	}
	if len(res.MsgID) != 32 {
		t.Fatalf("MsgID %q: want a 32-digit UNIQ_KEY minted by the broker", res.MsgID)
	}
	stored := readAll(t, f, "TopicS", 1)
	if len(stored) != 1 || stored[0].OffsetMsgID() != res.OffsetMsgID {
		t.Fatalf("stored %d records, result offsetMsgId %q", len(stored), res.OffsetMsgID)
	}
	if ck, ok := stored[0].Property(codec.PropertyPopCK); ok {
		t.Fatalf("the producer's POP_CK was stored: %q", ck)
	}

	p, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(popReq("GroupS", "TopicS", 32), done) })
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	msgs, err := codec.DecodeMessages(p.Body)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("popped %d messages, err %v", len(msgs), err)
	}
	m := msgs[0]
	want := map[string]string{codec.PropertyTags: "TagA", codec.PropertyKeys: "k1 k2", "user": "u1",
		codec.PropertyUniqClientMessageIDKeyIdx: res.MsgID, codec.PropertyCluster: "ClusterPop"}
	for k, v := range want {
		if got, _ := m.Property(k); got != v {
			t.Errorf("property %s = %q, want %q", k, got, v)
		}
	}
	if string(m.Body) != "hello" || m.Flag != 5 || m.BornHost != sendPeer || m.BornTimestamp != r.BornTimestamp || m.QueueID != 1 {
		t.Fatalf("popped %+v", m)
	}
	if m.MsgID() != res.MsgID {
		t.Fatalf("popped msgId %q, sent %q", m.MsgID(), res.MsgID)
	}

	// The producer's own UNIQ_KEY is kept; queueId -1 lets the broker pick.
	r2 := sendReq("TopicS", -1, "picked", props(t, codec.PropertyUniqClientMessageIDKeyIdx, "UNIQ-OWN"))
	res2 := mustSend(t, f, r2)
	if res2.MsgID != "UNIQ-OWN" || (res2.QueueID != 0 && res2.QueueID != 1) {
		t.Fatalf("second result %+v", res2)
	}
}

// TestCoreSendRefusals checks the refusals' codes and remarks, each given
// before anything is queued.
func TestCoreSendRefusals(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateTopic = false
	cfg.MaxMessageSize = 1024
	f := brokertest.Start(t, cfg, nil)
	createTopic(t, f, "TopicR", 2)
	cases := []struct {
		name   string
		req    broker.SendRequest
		code   int32
		remark string // exact when not ""
	}{
		{"unknown topic", sendReq("NoSuchTopic", 0, "x", ""), codec.TopicNotExist, "topic[NoSuchTopic] not exist, apply first please!"},
		{"body too large", sendReq("TopicR", 0, strings.Repeat("x", 1025), ""), codec.MessageIllegal, "the message body size 1025 over max value 1024"},
		{"queue out of range", sendReq("TopicR", 2, "x", ""), codec.InvalidParameter, "request queueId[2] is illegal, topic:[TopicR] topicConfig.writeQueueNums:[2]"},
		{"half without producer group", func() broker.SendRequest {
			r := sendReq("TopicR", 0, "x", props(t, codec.PropertyTransactionPrepared, "true"))
			r.ProducerGroup = ""
			return r
		}(), codec.MessageIllegal, "transaction: half message without producer group"},
		{"half to a forbidden topic", sendReq(transaction.HalfTopic, 0, "x", props(t, codec.PropertyTransactionPrepared, "true")), codec.NoPermission,
			"Sending message to topic[" + transaction.HalfTopic + "] is forbidden."},
		{"batch with a transaction sysFlag", func() broker.SendRequest {
			r := batchReq(t, "TopicR", 0, "", "a")
			r.SysFlag = codec.SysFlagTransactionPrepared
			return r
		}(), codec.MessageIllegal, "the message is illegal, maybe msg body or properties length not matched. msg body length limit 1024B, msg properties length limit 32KB."},
		{"forbidden topic", sendReq("SELF_TEST_TOPIC", 0, "x", ""), codec.NoPermission, "Sending message to topic[SELF_TEST_TOPIC] is forbidden."},
		{"bad topic name", sendReq("bad topic!", 0, "x", ""), codec.InvalidParameter,
			"The specified topic: bad topic!, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"timer too far", sendReq("TopicR", 0, "x", props(t, codec.PropertyTimerDelaySec, "999999999")), codec.MessageIllegal, f.Broker.Delay.IllegalRemark()},
		{"timer not a number", sendReq("TopicR", 0, "x", props(t, codec.PropertyTimerDeliverMS, "soon")), codec.MessageIllegal, f.Broker.Delay.IllegalRemark()},
		{"batch to a retry topic", batchReq(t, "%RETRY%G", 0, "", "a"), codec.MessageIllegal, "batch request does not support retry group %RETRY%G"},
		{"batch too large", batchReq(t, "TopicR", 0, "", strings.Repeat("x", 1000), "y"), codec.MessageIllegal, ""},
		{"empty batch", batchReq(t, "TopicR", 0, ""), codec.MessageIllegal, "invalid batch body: empty batch"},
		{"batch undecodable", func() broker.SendRequest {
			r := batchReq(t, "TopicR", 0, "", "a")
			r.Body = r.Body[:len(r.Body)-1]
			return r
		}(), codec.MessageIllegal, ""},
		{"batch with delay", func() broker.SendRequest {
			r := batchReq(t, "TopicR", 0, "", "a")
			r.Properties = props(t, codec.PropertyDelayTimeLevel, "2")
			return r
		}(), codec.MessageIllegal, "the message is illegal, maybe msg body or properties length not matched. msg body length limit 1024B, msg properties length limit 32KB."},
		{"batch to an unknown topic", batchReq(t, "NoSuchTopic", 0, "", "a"), codec.TopicNotExist, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := sendCode(t, f, tc.req)
			if e.Code != tc.code || (tc.remark != "" && e.Remark != tc.remark) {
				t.Fatalf("refused with %d %q, want %d %q", e.Code, e.Remark, tc.code, tc.remark)
			}
		})
	}
	if n := f.Store.MaxOffset("TopicR", 0) + f.Store.MaxOffset("TopicR", 1); n != 0 {
		t.Fatalf("%d messages stored by refused sends", n)
	}
	if _, ok := f.Broker.Topics.Get("NoSuchTopic"); ok {
		t.Fatal("unknown topic created with auto-create off")
	}
}

// TestCoreSendDelayLevelDeliveredWhenDue stores a DELAY level 2 (5 s)
// message as a timer entry and sees it in its queue only once the broker
// clock passed the due time.
func TestCoreSendDelayLevelDeliveredWhenDue(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicD", 1)
	before := f.Broker.Now()
	res := mustSend(t, f, sendReq("TopicD", 0, "later", props(t, codec.PropertyDelayTimeLevel, "2", "user", "u")))
	if res.DeliverAtMillis < before+5000 || res.QueueOffset != 0 || res.OffsetMsgID == "" {
		t.Fatalf("delayed result %+v (sent at %d)", res, before)
	}
	if n := f.Store.PendingTimers(); n != 1 {
		t.Fatalf("pending timers %d, want 1", n)
	}
	runTimers(t, f)
	if n := f.Store.MaxOffset("TopicD", 0); n != 0 {
		t.Fatalf("delivered before due: max offset %d", n)
	}
	f.Broker.AdvanceClock(4000)
	runTimers(t, f)
	if n := f.Store.MaxOffset("TopicD", 0); n != 0 {
		t.Fatalf("delivered 1 s early: max offset %d", n)
	}
	f.Broker.AdvanceClock(1100)
	runTimers(t, f)
	got := readAll(t, f, "TopicD", 0)
	if len(got) != 1 || string(got[0].Body) != "later" {
		t.Fatalf("after due: %d messages", len(got))
	}
	m := got[0]
	if v, _ := m.Property("user"); v != "u" {
		t.Fatalf("user property %q", v)
	}
	if v, _ := m.Property(codec.PropertyRealTopic); v != "TopicD" {
		t.Fatalf("REAL_TOPIC %q", v)
	}
	if m.MsgID() != res.MsgID {
		t.Fatalf("delivered msgId %q, sent %q", m.MsgID(), res.MsgID)
	}
	if n := f.Store.PendingTimers(); n != 0 {
		t.Fatalf("pending timers after delivery %d", n)
	}
}

// TestCoreSendRetryOverMaxGoesToDLQ sends to a %RETRY% topic: within the
// request's maxReconsumeTimes it stays there, beyond it goes to %DLQ%; an
// old client's maxReconsumeTimes is ignored for the group's limit (16).
func TestCoreSendRetryOverMaxGoesToDLQ(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	over := sendReq("%RETRY%GroupX", 0, "over", "")
	over.ReconsumeTimes, over.MaxReconsumeTimes, over.HasMaxReconsumeTimes = 3, 2, true
	res := mustSend(t, f, over)
	if res.Topic != "%DLQ%GroupX" || res.QueueID != 0 || res.QueueOffset != 0 {
		t.Fatalf("over the limit: %+v", res)
	}
	within := over
	within.ReconsumeTimes, within.Body = 2, []byte("within")
	if res := mustSend(t, f, within); res.Topic != "%RETRY%GroupX" {
		t.Fatalf("within the limit: %+v", res)
	}
	old := over
	old.ClientVersion, old.Body = broker.VersionV3_4_9-1, []byte("old")
	if res := mustSend(t, f, old); res.Topic != "%RETRY%GroupX" {
		t.Fatalf("old client under the group's limit: %+v", res)
	}
	if n := f.Store.MaxOffset("%DLQ%GroupX", 0); n != 1 {
		t.Fatalf("DLQ holds %d, want 1", n)
	}
	if n := f.Store.MaxOffset("%RETRY%GroupX", 0); n != 2 {
		t.Fatalf("retry topic holds %d, want 2", n)
	}
	if got := readAll(t, f, "%DLQ%GroupX", 0); string(got[0].Body) != "over" || got[0].ReconsumeTimes != 3 {
		t.Fatalf("DLQ record %+v", got[0])
	}
}

// TestCoreSendBatch stores a batch: one record per entry with consecutive
// offsets, the entries' own properties (POP_CK stripped, no UNIQ_KEY
// added) and the comma-joined offsetMsgIds.
func TestCoreSendBatch(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicB", 1)
	mustSend(t, f, sendReq("TopicB", 0, "first", ""))
	res := mustSend(t, f, batchReq(t, "TopicB", 0, props(t, codec.PropertyTags, "TB", codec.PropertyPopCK, "x"), "b0", "b1", "b2"))
	ids := strings.Split(res.OffsetMsgID, ",")
	if res.Count != 3 || res.QueueOffset != 1 || res.MsgID != "" || len(ids) != 3 {
		t.Fatalf("batch result %+v", res)
	}
	got := readAll(t, f, "TopicB", 0)
	if len(got) != 4 {
		t.Fatalf("%d records, want 4", len(got))
	}
	for i, m := range got[1:] {
		if string(m.Body) != "b"+string(rune('0'+i)) || m.QueueOffset != int64(1+i) || m.OffsetMsgID() != ids[i] || m.BornHost != sendPeer {
			t.Fatalf("entry %d: %+v (ids %v)", i, m, ids)
		}
		if v, _ := m.Property(codec.PropertyTags); v != "TB" {
			t.Fatalf("entry %d TAGS %q", i, v)
		}
		for _, k := range []string{codec.PropertyPopCK, codec.PropertyUniqClientMessageIDKeyIdx} {
			if _, ok := m.Property(k); ok {
				t.Fatalf("entry %d has %s", i, k)
			}
		}
		// Only the entry's own properties: a 5.5 broker no longer appends
		// the batch's CLUSTER, MSG_REGION and TRACE_ON (apache/rocketmq #9417).
		for _, k := range []string{codec.PropertyCluster, codec.PropertyMsgRegion, codec.PropertyTraceSwitch} {
			if v, ok := m.Property(k); ok {
				t.Fatalf("entry %d has %s=%q", i, k, v)
			}
		}
	}
}

// TestCoreSendDurableAcrossRestart: what a Send completed is there after a
// restart — single and batch records, and a delayed message's timer entry,
// delivered once when due after the restart.
func TestCoreSendDurableAcrossRestart(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicP", 1)
	mustSend(t, f, sendReq("TopicP", 0, "p0", ""))
	mustSend(t, f, batchReq(t, "TopicP", 0, "", "p1", "p2"))
	delayed := mustSend(t, f, sendReq("TopicP", 0, "p3", props(t, codec.PropertyTimerDelaySec, "30")))
	f.Restart()
	if n := f.Store.PendingTimers(); n != 1 {
		t.Fatalf("pending timers after restart %d, want 1", n)
	}
	got := readAll(t, f, "TopicP", 0)
	if len(got) != 3 || string(got[0].Body) != "p0" || string(got[2].Body) != "p2" {
		t.Fatalf("after restart %d records", len(got))
	}
	f.Broker.AdvanceClock(delayed.DeliverAtMillis - f.Broker.Now() + 100)
	runTimers(t, f)
	f.Restart()
	got = readAll(t, f, "TopicP", 0)
	if len(got) != 4 || string(got[3].Body) != "p3" || f.Store.PendingTimers() != 0 {
		t.Fatalf("after delivery and restart: %d records, %d timers", len(got), f.Store.PendingTimers())
	}
	// The offsets continue after the restart.
	if res := mustSend(t, f, sendReq("TopicP", 0, "p4", "")); res.QueueOffset != 4 {
		t.Fatalf("offset after restart %d, want 4", res.QueueOffset)
	}
}
