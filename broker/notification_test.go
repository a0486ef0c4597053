package broker_test

import (
	"errors"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// notifyReq is a NOTIFICATION of group on every queue of topic, no long
// poll.
func notifyReq(group, topic string) broker.NotificationRequest {
	var r broker.NotificationRequest
	r.ConsumerGroup, r.Topic, r.QueueID = group, topic, -1
	return r
}

// notify runs r through the core and waits for its answer.
func notify(t *testing.T, f *brokertest.Fixture, r broker.NotificationRequest) (broker.NotificationResult, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.NotificationResult, error)) { f.Broker.Notification(r, done) })
}

// TestCoreNotificationHasMsg: hasMsg is false on an empty topic, true once
// a message is stored beyond the group's (absent) offset, and false again
// when the group's committed offset reaches the max offset.
func TestCoreNotificationHasMsg(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicN", 2)

	res, err := notify(t, f, notifyReq("GroupN", "TopicN"))
	if err != nil || res.HasMsg || res.PollingFull {
		t.Fatalf("empty topic: %+v %v, want hasMsg=false", res, err)
	}

	appendBodies(t, f, "TopicN", 1, "n0")
	res, err = notify(t, f, notifyReq("GroupN", "TopicN"))
	if err != nil || !res.HasMsg {
		t.Fatalf("one message: %+v %v, want hasMsg=true", res, err)
	}
	q0 := notifyReq("GroupN", "TopicN")
	q0.QueueID = 0
	if res, err = notify(t, f, q0); err != nil || res.HasMsg {
		t.Fatalf("queue 0 only: %+v %v, want hasMsg=false", res, err)
	}

	updateOffset(t, f, "GroupN", "TopicN", 1, 1)
	res, err = notify(t, f, notifyReq("GroupN", "TopicN"))
	if err != nil || res.HasMsg {
		t.Fatalf("offset at max: %+v %v, want hasMsg=false", res, err)
	}
}

// TestCoreNotificationLongPollWokenByAppend parks a NOTIFICATION with a
// poll time and answers hasMsg=true when a message is appended.
func TestCoreNotificationLongPollWokenByAppend(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicNL", 1)
	parked := make(chan struct{}, 4)
	r := notifyReq("GroupNL", "TopicNL")
	r.PollTime, r.ConnID = 20_000, 11
	r.OnPark = func() { parked <- struct{}{} }
	type answer struct {
		r   broker.NotificationResult
		err error
	}
	got := make(chan answer, 2)
	f.Broker.Notification(r, func(res broker.NotificationResult, err error) { got <- answer{res, err} })
	<-parked
	appendBodies(t, f, "TopicNL", 0, "wake")
	if a := <-got; a.err != nil || !a.r.HasMsg {
		t.Fatalf("woken notification: %+v %v, want hasMsg=true", a.r, a.err)
	}
}

// TestCoreNotificationRefusals checks the refusal codes and remarks.
func TestCoreNotificationRefusals(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicNR", 1)
	cases := []struct {
		name   string
		mod    func(r *broker.NotificationRequest)
		code   int32
		remark string
	}{
		{"unknown topic", func(r *broker.NotificationRequest) { r.Topic = "NoSuchTopic" }, codec.TopicNotExist,
			"topic[NoSuchTopic] not exist, apply first please!"},
		{"queue out of range", func(r *broker.NotificationRequest) { r.QueueID = 1 }, codec.InvalidParameter,
			"queueId[1] is illegal, topic:[TopicNR] topicConfig.readQueueNums:[1]"},
		{"timeout too much", func(r *broker.NotificationRequest) { r.BornTime = f.Broker.Now() - 60_000 }, codec.PollingTimeout,
			"the broker[" + brokertest.BrokerName + "] pop message is timeout too much"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := notifyReq("GroupNR", "TopicNR")
			tc.mod(&r)
			_, err := notify(t, f, r)
			var e *broker.Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Remark != tc.remark {
				t.Fatalf("err = %v, want code %d %q", err, tc.code, tc.remark)
			}
		})
	}
}
