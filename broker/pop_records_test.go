package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// A POP asked with Records returns what the remoting reply carries: for
// each message the same record fields, the properties without POP_CK and
// a receipt equal to the POP_CK a remoting POP of another group gets (but
// its popTime), for first deliveries and for redeliveries from the retry
// topic (shown under the original topic, reconsumeTimes 1).
func TestPopRecordsMatchReplyBody(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicT", 2)
	appendBodies(t, f, "TopicT", 0, "a0", "a1", "a2")
	appendBodies(t, f, "TopicT", 1, "b0")

	for round, retry := range []bool{false, true} {
		if retry {
			f.Broker.AdvanceClock(61_000)
			reviveNow(t, f)
		}
		_, body := popMessages(t, f, popReq("GroupBody", "TopicT", 32))
		typedReq := popReq("GroupTyped", "TopicT", 32)
		typedReq.Records = true
		res, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(typedReq, done) })
		if err != nil {
			t.Fatalf("round %d: typed pop: %v", round, err)
		}
		if len(body) != 4 || len(res.Records) != 4 || res.Found != 4 {
			t.Fatalf("round %d: %d messages in the body, %d records (found %d), want 4 and 4", round, len(body), len(res.Records), res.Found)
		}
		want := map[string]popped{}
		for _, p := range body {
			want[string(p.m.Body)] = p
		}
		for _, r := range res.Records {
			m := r.Msg
			p, ok := want[string(m.Body)]
			if !ok {
				t.Fatalf("round %d: record %q not in the remoting reply", round, m.Body)
			}
			if retry {
				// Each group's retry topic holds its own copy of a revived
				// message: its own queue offsets, commit-log offset, store
				// time and first POP time.
				if r.ExtraInfo.QueueID != m.QueueID || r.ExtraInfo.QueueOffset != m.QueueOffset {
					t.Fatalf("round %d: receipt %+v of queue %d offset %d", round, r.ExtraInfo, m.QueueID, m.QueueOffset)
				}
				p.m.QueueID, p.m.QueueOffset, p.m.PhysicalOffset, p.m.StoreTimestamp = m.QueueID, m.QueueOffset, m.PhysicalOffset, m.StoreTimestamp
				p.handle.QueueID, p.handle.QueueOffset, p.handle.CkQueueOffset = r.ExtraInfo.QueueID, r.ExtraInfo.QueueOffset, r.ExtraInfo.CkQueueOffset
			}
			props, got := codec.DeleteProperty(p.m.Properties, codec.PropertyPopCK), m.Properties
			if retry { // the revive stamps each group's own first POP time
				props, got = codec.DeleteProperty(props, codec.PropertyFirstPopTime), codec.DeleteProperty(got, codec.PropertyFirstPopTime)
			}
			if m.Topic != "TopicT" || m.Topic != p.m.Topic || m.QueueID != p.m.QueueID || m.QueueOffset != p.m.QueueOffset || got != props ||
				m.ReconsumeTimes != p.m.ReconsumeTimes || m.PhysicalOffset != p.m.PhysicalOffset ||
				m.BornTimestamp != p.m.BornTimestamp || m.StoreTimestamp != p.m.StoreTimestamp {
				t.Fatalf("round %d: record %+v, remoting entry %+v", round, m, p.m)
			}
			if _, has := m.Property(codec.PropertyPopCK); has {
				t.Fatalf("round %d: a typed record carries POP_CK", round)
			}
			if retry != (m.ReconsumeTimes == 1) {
				t.Fatalf("round %d: reconsumeTimes %d", round, m.ReconsumeTimes)
			}
			ei := p.handle
			ei.PopTime = res.PopTime
			if r.ExtraInfo != ei || r.ExtraInfo.String() != ei.String() {
				t.Fatalf("round %d: receipt %+v, remoting's %+v (popTime aside)", round, r.ExtraInfo, p.handle)
			}
			if retry != (r.ExtraInfo.RetryFlag != codec.RetryFlagNormal) {
				t.Fatalf("round %d: retry flag %d", round, r.ExtraInfo.RetryFlag)
			}
		}
	}
}
