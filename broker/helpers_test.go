package broker_test

// Fixtures shared by the core tests: topics, appends, POP and receipt
// helpers, a view of the durable checkpoints, and a revive pass on demand.

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// createTopic creates topic with queues queues through the core's topic
// table and waits until it is durable.
func createTopic(t testing.TB, f *brokertest.Fixture, topic string, queues int32) {
	t.Helper()
	err := brokertest.Await0(t, func(done func(error)) {
		m := popstore.TopicMeta{TopicName: topic, ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6}
		if err := f.Broker.Topics.Create(m, done); err != nil {
			done(err)
		}
	})
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// appendBodies appends one record per body to (topic, queueId) through the
// writer and waits until they are durable.
func appendBodies(t testing.TB, f *brokertest.Fixture, topic string, queueID int32, bodies ...string) {
	t.Helper()
	err := brokertest.Await0(t, func(done func(error)) {
		op := &batch.Op{Lane: batch.LaneProduce, Bytes: 64, Done: done,
			Apply: func(tx *popstore.Txn) error {
				for _, b := range bodies {
					if _, _, err := tx.AppendMessage(topic, queueID, popstoretest.Record(topic, queueID, f.Broker.Now(), []byte(b))); err != nil {
						return err
					}
				}
				return nil
			}}
		if err := f.Writer.Submit(op); err != nil {
			done(err)
		}
	})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
}

// popReq is a POP of up to max messages of any queue of topic, invisible
// for 60 s, without long polling.
func popReq(group, topic string, max int32) broker.PopRequest {
	var r broker.PopRequest
	r.ConsumerGroup, r.Topic, r.QueueID, r.MaxMsgNums, r.InvisibleTime = group, topic, -1, max, 60_000
	return r
}

// popped is one message of a POP answer with its receipt handle.
type popped struct {
	m      codec.MessageExt
	handle codec.ExtraInfo
	raw    string // the handle's text (POP_CK)
}

// popMessages runs r and returns its messages with their handles, in body
// order, and the answer's header fields; any error fails the test.
func popMessages(t testing.TB, f *brokertest.Fixture, r broker.PopRequest) (broker.PopResult, []popped) {
	t.Helper()
	res, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(r, done) })
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	msgs, err := codec.DecodeMessages(res.Body)
	if err != nil {
		t.Fatalf("decode pop body: %v", err)
	}
	out := make([]popped, 0, len(msgs))
	for _, m := range msgs {
		raw, ok := m.Property(codec.PropertyPopCK)
		if !ok {
			t.Fatalf("message %s/%d has no POP_CK", m.Topic, m.QueueOffset)
		}
		ei, err := codec.ParseExtraInfo(raw)
		if err != nil {
			t.Fatalf("POP_CK %q: %v", raw, err)
		}
		out = append(out, popped{m: m, handle: ei, raw: raw})
	}
	return res, out
}

// ackReq is the ACK of p by group, p popped from topic (the request names
// the real topic, as a client does).
func ackReq(group, topic string, p popped) broker.AckRequest {
	return broker.AckRequest{ConsumerGroup: group, Topic: p.handle.RealTopic(topic, group),
		QueueID: p.handle.QueueID, Offset: p.handle.QueueOffset, ExtraInfo: p.raw}
}

// ack runs r and returns what it completed with.
func ack(t testing.TB, f *brokertest.Fixture, r broker.AckRequest) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) { f.Broker.Ack(r, done) })
}

// changeReq is the CHANGE of p by group to invisible ms.
func changeReq(group, topic string, p popped, invisible int64) broker.ChangeRequest {
	return broker.ChangeRequest{ConsumerGroup: group, Topic: p.handle.RealTopic(topic, group),
		QueueID: p.handle.QueueID, Offset: p.handle.QueueOffset, ExtraInfo: p.raw, InvisibleTime: invisible}
}

// change runs r and returns what it completed with.
func change(t testing.TB, f *brokertest.Fixture, r broker.ChangeRequest) (broker.ChangeResult, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.ChangeResult, error)) { f.Broker.ChangeInvisible(r, done) })
}

// errCode is err's RocketMQ response code (codec.Success for nil); an
// error that is not an *broker.Error fails the test.
func errCode(t testing.TB, err error) int32 {
	t.Helper()
	if err == nil {
		return codec.Success
	}
	var e *broker.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *broker.Error", err, err)
	}
	return e.Code
}

// checkpoints lists every durable checkpoint in the store.
func checkpoints(t testing.TB, f *brokertest.Fixture) []popstore.Checkpoint {
	t.Helper()
	cks, err := f.Store.ScanCheckpoints(0, math.MaxInt64, 1000)
	if err != nil {
		t.Fatalf("scan checkpoints: %v", err)
	}
	return cks
}

// reviveNow runs revive passes until one that started after this call has
// completed, so every checkpoint due at the broker clock has been handled.
// The bound is a hang guard, not a timing assertion.
func reviveNow(t testing.TB, f *brokertest.Fixture) {
	t.Helper()
	rv := f.Broker.Revive
	start := rv.Passes()
	deadline := time.Now().Add(brokertest.AwaitTimeout)
	for rv.Passes() < start+2 {
		if time.Now().After(deadline) {
			t.Fatalf("revive passes did not run")
		}
		rv.Trigger()
		time.Sleep(2 * time.Millisecond)
	}
}

// wantCode fails the test unless err is an *broker.Error with code, and
// returns it.
func wantCode(t *testing.T, err error, code int32) *broker.Error {
	t.Helper()
	var e *broker.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err = %v, want code %d", err, code)
	}
	return e
}

// wantCodeRemark fails unless err is an *broker.Error with code and remark.
func wantCodeRemark(t *testing.T, err error, code int32, remark string) {
	t.Helper()
	if e := wantCode(t, err, code); e.Remark != remark {
		t.Fatalf("err = %v, want code %d %q", err, code, remark)
	}
}

// consumerHeartbeat is a heartbeat of clientID over connection connID
// announcing one push consumer per group, each subscribing "*" of topic
// "TopicHB".
func consumerHeartbeat(clientID string, connID uint64, groups ...string) broker.HeartbeatRequest {
	r := broker.HeartbeatRequest{ClientID: clientID, Language: "JAVA", Version: 479, ConnID: connID, RemoteAddr: "127.0.0.1:40000"}
	for _, g := range groups {
		r.Consumers = append(r.Consumers, clients.ConsumerRegistration{Group: g, ConsumeType: codec.ConsumePassively,
			MessageModel: codec.MessageModelCluster, ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
			Subscriptions: []clients.Subscription{{Topic: "TopicHB", SubString: "*", ExpressionType: "TAG"}}})
	}
	return r
}

// heartbeat runs r through the core.
func heartbeat(t *testing.T, f *brokertest.Fixture, r broker.HeartbeatRequest) (broker.HeartbeatResult, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.HeartbeatResult, error)) { f.Broker.Heartbeat(r, done) })
}

// mustHeartbeat runs r and fails the test on an error.
func mustHeartbeat(t *testing.T, f *brokertest.Fixture, r broker.HeartbeatRequest) broker.HeartbeatResult {
	t.Helper()
	res, err := heartbeat(t, f, r)
	if err != nil {
		t.Fatalf("heartbeat %s: %v", r.ClientID, err)
	}
	return res
}
