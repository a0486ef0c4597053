package broker_test

// Set-up and calls shared by the core tests: they drive the core's
// operations, tables and writer directly, without a socket.

import (
	"errors"
	"testing"

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
func createTopic(t *testing.T, f *brokertest.Fixture, topic string, queues int32) {
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
func appendBodies(t *testing.T, f *brokertest.Fixture, topic string, queueID int32, bodies ...string) {
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

// popReq is a POP of up to max messages from any queue of topic for
// group, with a 60 s invisible time and no long poll.
func popReq(group, topic string, max int32) broker.PopRequest {
	var r broker.PopRequest
	r.ConsumerGroup, r.Topic, r.QueueID, r.MaxMsgNums, r.InvisibleTime = group, topic, -1, max, 60_000
	return r
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
