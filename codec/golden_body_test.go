package codec

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// describeBody describes a body of the given kind and returns its
// re-encoding by popshim's encoder (nil when there is no byte-exact encoder
// for that kind, as for client-written heartbeats).
func describeBody(t *testing.T, kind string, b []byte) ([]string, []byte) {
	t.Helper()
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch kind {
	case "":
		return nil, nil
	case "records":
		msgs, err := DecodeMessages(b)
		if err != nil {
			t.Fatalf("DecodeMessages: %v", err)
		}
		var re []byte
		for i := range msgs {
			m := &msgs[i]
			add("record %d: storeSize %d magic %#x bodyCRC %d (computed %d)", i, m.StoreSize, uint32(m.MagicCode), m.BodyCRC, BodyCRC32(m.Body))
			add("record %d: topic %q queueId %d flag %d queueOffset %d physicalOffset %d sysFlag %#x", i, m.Topic, m.QueueID, m.Flag, m.QueueOffset, m.PhysicalOffset, m.SysFlag)
			add("record %d: born %d %s store %d %s reconsumeTimes %d preparedTransactionOffset %d", i, m.BornTimestamp, m.BornHost, m.StoreTimestamp, m.StoreHost, m.ReconsumeTimes, m.PreparedTransactionOffset)
			add("record %d: body %q", i, m.Body)
			add("record %d: properties %v", i, DecodeProperties(m.Properties))
			add("record %d: offsetMsgId %s msgId %s", i, m.OffsetMsgID(), m.MsgID())
			if re, err = AppendMessage(re, m); err != nil {
				t.Fatal(err)
			}
		}
		return out, re
	case "batch":
		msgs, err := DecodeBatchBody(b)
		if err != nil {
			t.Fatalf("DecodeBatchBody: %v", err)
		}
		var re []byte
		for i := range msgs {
			add("entry %d: flag %d body %q properties %v", i, msgs[i].Flag, msgs[i].Body, DecodeProperties(msgs[i].Properties))
			if re, err = AppendBatchEntry(re, &msgs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return out, re
	case "heartbeat":
		h, err := DecodeHeartbeatData(b)
		if err != nil {
			t.Fatalf("DecodeHeartbeatData: %v", err)
		}
		add("HeartbeatData: %+v", h)
		return out, nil
	case "subgroup":
		c, err := DecodeSubscriptionGroupConfig(b)
		if err != nil {
			t.Fatalf("DecodeSubscriptionGroupConfig: %v", err)
		}
		return append(out, describeSubscriptionGroup(c)...), AppendSubscriptionGroupConfig(nil, &c)
	case "subgroup-table":
		w, err := DecodeSubscriptionGroupWrapper(b)
		if err != nil {
			t.Fatalf("DecodeSubscriptionGroupWrapper: %v", err)
		}
		add("dataVersion: %+v", w.DataVersion)
		add("forbiddenTable: %v", w.ForbiddenTable)
		for _, g := range slices.Sorted(maps.Keys(w.SubscriptionGroupTable)) {
			for _, l := range describeSubscriptionGroup(w.SubscriptionGroupTable[g]) {
				add("table %s: %s", g, l)
			}
		}
		return out, AppendSubscriptionGroupWrapper(nil, &w)
	case "route-legacy":
		r, err := DecodeTopicRouteData(b)
		if err != nil {
			t.Fatalf("DecodeTopicRouteData: %v", err)
		}
		add("TopicRouteData: %+v", r)
		return out, AppendTopicRouteData(nil, &r, true)
	case "batch-ack":
		ba, err := DecodeBatchAckBody(b)
		if err != nil {
			t.Fatalf("DecodeBatchAckBody: %v", err)
		}
		add("brokerName: %s", ba.BrokerName)
		for i := range ba.Acks {
			add("ack %d: %+v", i, ba.Acks[i])
			add("ack %d: acked offsets %v", i, ba.Acks[i].AckedOffsets(64))
		}
		return out, AppendBatchAckBody(nil, &ba)
	}
	t.Fatalf("unknown body directive %q", kind)
	return nil, nil
}
