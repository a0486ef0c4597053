package broker_test

import (
	"testing"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
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

func popReq(group, topic string, max int32) broker.PopRequest {
	var r broker.PopRequest
	r.ConsumerGroup, r.Topic, r.QueueID, r.MaxMsgNums, r.InvisibleTime = group, topic, -1, max, 60_000
	return r
}
