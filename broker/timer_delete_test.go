package broker_test

import (
	"encoding/base64"
	"errors"
	"strconv"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/timer"
	"github.com/popshim/popshim/codec"
)

// timerSend is a SEND of body to topic queue 0 with UNIQ_KEY uniq, due at
// dueMillis (TIMER_DELIVER_MS), plus extra properties.
func timerSend(t *testing.T, topic, uniq, body string, dueMillis int64, extra ...string) broker.SendRequest {
	kv := append([]string{codec.PropertyUniqClientMessageIDKeyIdx, uniq, codec.PropertyTimerDeliverMS,
		strconv.FormatInt(dueMillis, 10)}, extra...)
	return sendReq(topic, 0, body, props(t, kv...))
}

// bodies returns the bodies stored in topic queue 0, in order.
func bodies(t *testing.T, f *brokertest.Fixture, topic string) []string {
	var out []string
	for _, m := range readAll(t, f, topic, 0) {
		out = append(out, string(m.Body))
	}
	return out
}

// TestCoreTimerDeleteUniqKey: a SEND with TIMER_DEL_UNIQKEY names a
// pending timer message of the same slot and key, whichever comes first;
// that one is dropped when due, the marker is never delivered, and a
// message of another key in the slot, one of the same key in another
// slot and a delay-level message of the key are delivered. A marker due
// now or past is MESSAGE_ILLEGAL. Markers and targets survive a restart.
func TestCoreTimerDeleteUniqKey(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TD", 1)
	now := f.Broker.Now()
	due := (now/1000+10)*1000 + 300 // a slot ten seconds ahead, not on a whole second
	key := timer.DeleteKeyOf("TD", "U1")

	// The marker arrives first for U2, after the target for U1.
	mustSend(t, f, timerSend(t, "TD", "M2", "marker-2", due+100, codec.PropertyTimerDelUniqKey, timer.DeleteKeyOf("TD", "U2")))
	res := mustSend(t, f, timerSend(t, "TD", "U1", "cancel-me", due))
	if res.RecallHandle == "" || res.DeliverAtMillis != due {
		t.Fatalf("timer SEND result %+v: want a recall handle", res)
	}
	mustSend(t, f, timerSend(t, "TD", "U2", "cancel-me-too", due+500))
	mustSend(t, f, timerSend(t, "TD", "U3", "other-key", due))
	mustSend(t, f, timerSend(t, "TD", "U1", "other-slot", due+1000))
	lvl := sendReq("TD", 0, "delay-level", props(t, codec.PropertyUniqClientMessageIDKeyIdx, "U1", codec.PropertyDelayTimeLevel, "1"))
	if r := mustSend(t, f, lvl); r.RecallHandle != "" {
		t.Fatalf("a delay-level message got a recall handle %q", r.RecallHandle)
	}
	marker := mustSend(t, f, timerSend(t, "TD", "M1", "marker-1", due+600, codec.PropertyTimerDelUniqKey, key))
	if marker.DeliverAtMillis != due+600 || marker.QueueOffset != 0 || marker.OffsetMsgID == "" || marker.MsgID != "M1" {
		t.Fatalf("marker SEND result %+v", marker)
	}
	if e := sendCode(t, f, timerSend(t, "TD", "M9", "late", now-1, codec.PropertyTimerDelUniqKey, key)); e.Code != codec.MessageIllegal {
		t.Fatalf("marker in the past: %+v", e)
	}

	f.Restart()
	f.Broker.AdvanceClock(due + 2000 - now)
	runTimers(t, f)
	got := bodies(t, f, "TD")
	want := map[string]bool{"other-key": true, "other-slot": true, "delay-level": true}
	if len(got) != len(want) {
		t.Fatalf("delivered %q, want %v", got, want)
	}
	for _, b := range got {
		if !want[b] {
			t.Fatalf("delivered %q, want %v", got, want)
		}
	}
	if n := f.Broker.Timers.Cancelled(); n != 2 {
		t.Fatalf("cancelled %d, want 2", n)
	}
	if n := f.Store.PendingTimers(); n != 0 {
		t.Fatalf("%d timers still pending", n)
	}
}

// TestCoreTimerMarkersPurged: a marker whose target never came is removed
// once its slot is more than a minute over.
func TestCoreTimerMarkersPurged(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TP", 1)
	now := f.Broker.Now()
	mustSend(t, f, timerSend(t, "TP", "M", "m", now+1500, codec.PropertyTimerDelUniqKey, "TP+nobody"))
	if ms, err := f.Store.ScanTimerDeletes(0, now+10_000, 10); err != nil || len(ms) != 1 {
		t.Fatalf("markers %v %v", ms, err)
	}
	f.Broker.AdvanceClock(5_000)
	runTimers(t, f)
	if ms, _ := f.Store.ScanTimerDeletes(0, now+10_000, 10); len(ms) != 1 {
		t.Fatalf("a marker was purged within its grace: %v", ms)
	}
	f.Broker.AdvanceClock(70_000)
	runTimers(t, f)
	if ms, _ := f.Store.ScanTimerDeletes(0, now+10_000, 10); len(ms) != 0 {
		t.Fatalf("markers left after their slot: %v", ms)
	}
}

// TestCoreRecall: RECALL_MESSAGE with the SEND reply's handle cancels the
// timer message; Java's refusals in Java's order; a handle of a message
// that does not exist succeeds.
func TestCoreRecall(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TR", 1)
	createTopic(t, f, "TR2", 1)
	now := f.Broker.Now()
	res := mustSend(t, f, timerSend(t, "TR", "R1", "recall-me", now+5_000))
	mustSend(t, f, timerSend(t, "TR", "R2", "keep-me", now+5_000))
	h, ok := broker.DecodeRecallHandle(res.RecallHandle)
	if !ok || h.Topic != "TR" || h.BrokerName != brokertest.BrokerName || h.TimestampMillis != now+5_000 || h.MessageID != "R1" {
		t.Fatalf("handle %q → %+v %v", res.RecallHandle, h, ok)
	}
	recall := func(topic, handle string) (broker.RecallResult, *broker.Error) {
		r, err := brokertest.Await(t, func(done func(broker.RecallResult, error)) {
			f.Broker.Recall(broker.RecallRequest{ProducerGroup: "PG", Topic: topic, RecallHandle: handle}, done)
		})
		var e *broker.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("recall: %v", err)
		}
		return r, e
	}
	refused := func(topic, handle string, code int32, remark string) {
		t.Helper()
		if _, e := recall(topic, handle); e == nil || e.Code != code || e.Remark != remark {
			t.Fatalf("recall %s %q: %+v, want %d %q", topic, handle, e, code, remark)
		}
	}
	refused("TR", res.RecallHandle, codec.NoPermission, "recall failed, operation is forbidden")
	f.Cfg.RecallMessageEnable = true
	refused("Nope", res.RecallHandle, codec.TopicNotExist, "recall failed, the topic[Nope] not exist")
	refused("TR", "not base64!", codec.IllegalOperation, "recall handle is invalid")
	refused("TR", base64.URLEncoding.EncodeToString([]byte("v1 TR b 1")), codec.IllegalOperation, "recall handle is invalid")
	refused("TR2", res.RecallHandle, codec.IllegalOperation, "recall failed, topic not match")
	refused("TR", broker.EncodeRecallHandle("TR", "other-broker", strconv.FormatInt(now+5_000, 10), "R1"),
		codec.IllegalOperation, "recall failed, broker service not available")
	refused("TR", broker.EncodeRecallHandle("TR", brokertest.BrokerName, strconv.FormatInt(now-1, 10), "R1"),
		codec.IllegalOperation, "recall failed, timestamp invalid")
	refused("TR", broker.EncodeRecallHandle("TR", brokertest.BrokerName, strconv.FormatInt(now+4*24*3600_000, 10), "R1"),
		codec.IllegalOperation, "recall failed, timestamp invalid")

	if r, e := recall("TR", res.RecallHandle); e != nil || r.MsgID != "R1" {
		t.Fatalf("recall: %+v %+v", r, e)
	}
	ghost := broker.EncodeRecallHandle("TR", brokertest.BrokerName, strconv.FormatInt(now+5_000, 10), "nobody")
	if r, e := recall("TR", ghost); e != nil || r.MsgID != "nobody" {
		t.Fatalf("recall of a message that does not exist: %+v %+v", r, e)
	}
	f.Broker.AdvanceClock(6_000)
	runTimers(t, f)
	if got := bodies(t, f, "TR"); len(got) != 1 || got[0] != "keep-me" {
		t.Fatalf("delivered %q, want only keep-me", got)
	}
}
