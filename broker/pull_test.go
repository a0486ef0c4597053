package broker_test

import (
	"errors"
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
)

// pullReq is a PULL of (topic, queueID) from offset for group, at most 32
// messages, no long poll.
func pullReq(group, topic string, queueID int32, offset int64) broker.PullRequest {
	var r broker.PullRequest
	r.ConsumerGroup, r.Topic, r.QueueID, r.QueueOffset, r.MaxMsgNums = group, topic, queueID, offset, 32
	r.SysFlag, r.Subscription, r.ExpressionType = codec.PullSysFlagSubscription, "*", "TAG"
	return r
}

// pullAnswer is the answer of a PULL started by pullParked.
type pullAnswer struct {
	r   broker.PullResult
	err error
}

// pullParked runs r (a suspendable PULL that parks) through the core and
// returns once it parked; its answer arrives on the channel.
func pullParked(f *brokertest.Fixture, r broker.PullRequest) <-chan pullAnswer {
	parked := make(chan struct{}, 4)
	r.OnPark = func() { parked <- struct{}{} }
	got := make(chan pullAnswer, 2)
	f.Broker.Pull(r, func(res broker.PullResult, err error) { got <- pullAnswer{res, err} })
	<-parked
	return got
}

// pull runs r through the core and waits for its answer.
func pull(t *testing.T, f *brokertest.Fixture, r broker.PullRequest) (broker.PullResult, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.PullResult, error)) { f.Broker.Pull(r, done) })
}

// putGroup creates or replaces a subscription group and waits until it is
// durable.
func putGroup(t *testing.T, f *brokertest.Fixture, g codec.SubscriptionGroupConfig) {
	t.Helper()
	err := brokertest.Await0(t, func(done func(error)) {
		if err := f.Broker.Groups.Put([]codec.SubscriptionGroupConfig{g}, done); err != nil {
			done(err)
		}
	})
	if err != nil {
		t.Fatalf("put group %s: %v", g.GroupName, err)
	}
}

// wantPull checks a PULL result's status and offsets.
func wantPull(t *testing.T, r broker.PullResult, err error, code int32, remark string, next, minOff, maxOff int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	if r.Code != code || r.Remark != remark || r.NextBeginOffset != next || r.MinOffset != minOff || r.MaxOffset != maxOff || r.SuggestWhichBrokerID != 0 {
		t.Fatalf("pull = code %d %q next %d min %d max %d broker %d; want code %d %q next %d min %d max %d broker 0",
			r.Code, r.Remark, r.NextBeginOffset, r.MinOffset, r.MaxOffset, r.SuggestWhichBrokerID, code, remark, next, minOff, maxOff)
	}
}

// bodiesOf decodes a PULL or POP body into the message bodies, in order.
func bodiesOf(t *testing.T, body []byte) []string {
	t.Helper()
	msgs, err := codec.DecodeMessages(body)
	if err != nil {
		t.Fatalf("decode body: %v", err)
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Body)
	}
	return out
}

// TestCorePullStatuses pulls through the core: FOUND with the records,
// NO_NEW_MSG at the max offset and on an empty queue, OFFSET_MOVED above
// the max offset and from a non-zero offset of an empty queue, each with
// the offsets a Java broker gives.
func TestCorePullStatuses(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicP", 2)
	appendBodies(t, f, "TopicP", 0, "p0", "p1", "p2")

	r, err := pull(t, f, pullReq("GroupP", "TopicP", 0, 0))
	wantPull(t, r, err, codec.Success, "FOUND", 3, 0, 3)
	if got := bodiesOf(t, r.Body); r.Found != 3 || len(got) != 3 || got[0] != "p0" || got[2] != "p2" {
		t.Fatalf("found %d, bodies %v; want p0 p1 p2", r.Found, got)
	}

	r, err = pull(t, f, pullReq("GroupP", "TopicP", 0, 1))
	wantPull(t, r, err, codec.Success, "FOUND", 3, 0, 3)
	if got := bodiesOf(t, r.Body); len(got) != 2 || got[0] != "p1" {
		t.Fatalf("bodies from offset 1: %v", got)
	}

	r, err = pull(t, f, pullReq("GroupP", "TopicP", 0, 3))
	wantPull(t, r, err, codec.PullNotFound, "NO_MESSAGE_IN_QUEUE", 3, 0, 3)
	if r.Body != nil || r.Found != 0 {
		t.Fatalf("no-new-message body %d bytes, found %d", len(r.Body), r.Found)
	}

	r, err = pull(t, f, pullReq("GroupP", "TopicP", 0, 10))
	wantPull(t, r, err, codec.PullOffsetMoved, "OFFSET_ILLEGAL", 3, 0, 3)

	r, err = pull(t, f, pullReq("GroupP", "TopicP", 1, 0))
	wantPull(t, r, err, codec.PullNotFound, "NO_MESSAGE_IN_QUEUE", 0, 0, 0)

	r, err = pull(t, f, pullReq("GroupP", "TopicP", 1, 5))
	wantPull(t, r, err, codec.PullOffsetMoved, "OFFSET_ILLEGAL", 0, 0, 0)
}

// TestCorePullTagFilter: a subscription in the request that matches
// nothing answers PULL_RETRY_IMMEDIATELY past the scanned range.
func TestCorePullTagFilter(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicT", 1)
	appendBodies(t, f, "TopicT", 0, "untagged0", "untagged1")

	r := pullReq("GroupT", "TopicT", 0, 0)
	r.SysFlag |= codec.PullSysFlagSubscription
	r.ExpressionType, r.Subscription = "TAG", "TagA"
	res, err := pull(t, f, r)
	wantPull(t, res, err, codec.PullRetryImmediately, "NO_MATCHED_MESSAGE", 2, 0, 2)
}

// TestCorePullLongPollWokenByAppend parks a suspendable PULL at the max
// offset, calls OnPark, and answers FOUND once a message is appended.
func TestCorePullLongPollWokenByAppend(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicW", 1)
	appendBodies(t, f, "TopicW", 0, "old")
	r := pullReq("GroupW", "TopicW", 0, 1)
	r.SysFlag |= codec.PullSysFlagSuspend
	r.SuspendTimeoutMillis, r.ConnID = 20_000, 9
	got := pullParked(f, r)
	appendBodies(t, f, "TopicW", 0, "new")
	a := <-got
	wantPull(t, a.r, a.err, codec.Success, "FOUND", 2, 0, 2)
	if b := bodiesOf(t, a.r.Body); len(b) != 1 || b[0] != "new" {
		t.Fatalf("woken pull bodies %v, want [new]", b)
	}
}

// TestCorePullRefusals checks the core's PULL refusals: codes, remarks and
// the forbiddenType of a disabled group.
func TestCorePullRefusals(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateSubscriptionGroup = false
	f := brokertest.Start(t, cfg, nil)
	createTopic(t, f, "TopicR", 1)
	putGroup(t, f, codec.NewSubscriptionGroupConfig("GroupR"))
	off := codec.NewSubscriptionGroupConfig("GroupOff")
	off.ConsumeEnable = false
	putGroup(t, f, off)

	cases := []struct {
		name   string
		mod    func(r *broker.PullRequest)
		code   int32
		remark string
	}{
		{"unknown group", func(r *broker.PullRequest) { r.ConsumerGroup = "NoSuchGroup" }, codec.SubscriptionGroupNotExist,
			broker.GroupNotExistRemark("NoSuchGroup")},
		{"illegal group name", func(r *broker.PullRequest) { r.ConsumerGroup = "bad group!" }, codec.SubscriptionGroupNotExist, ""},
		{"unknown topic", func(r *broker.PullRequest) { r.Topic = "NoSuchTopic" }, codec.TopicNotExist,
			"topic[NoSuchTopic] not exist, apply first please!"},
		{"queue out of range", func(r *broker.PullRequest) { r.QueueID = 3 }, codec.InvalidParameter,
			"queueId[3] is illegal, topic:[TopicR] topicConfig.readQueueNums:[1]"},
		{"sql92 that does not compile", func(r *broker.PullRequest) {
			r.SysFlag |= codec.PullSysFlagSubscription
			r.ExpressionType, r.Subscription = "SQL92", "a >"
		}, codec.SubscriptionParseFailed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := pullReq("GroupR", "TopicR", 0, 0)
			tc.mod(&r)
			res, err := pull(t, f, r)
			var e *broker.Error
			if !errors.As(err, &e) || e.Code != tc.code || (tc.remark != "" && e.Remark != tc.remark) {
				t.Fatalf("err = %v, want code %d %q", err, tc.code, tc.remark)
			}
			if res.ForbiddenType != 0 || res.Body != nil {
				t.Fatalf("refusal result %+v", res)
			}
		})
	}

	res, err := pull(t, f, pullReq("GroupOff", "TopicR", 0, 0))
	var e *broker.Error
	if !errors.As(err, &e) || e.Code != codec.NoPermission || e.Remark != broker.GroupNoPermissionRemark("GroupOff") {
		t.Fatalf("disabled group: err = %v", err)
	}
	if res.ForbiddenType != broker.ForbiddenTypeGroup {
		t.Fatalf("disabled group: forbiddenType %d, want %d", res.ForbiddenType, broker.ForbiddenTypeGroup)
	}
}
