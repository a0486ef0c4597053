package broker_test

import (
	"testing"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// updateOffset commits group's consume offset of (topic, queueID) through
// the core and waits until it is durable.
func updateOffset(t *testing.T, f *brokertest.Fixture, group, topic string, queueID int32, offset int64) {
	t.Helper()
	if err := tryUpdateOffset(t, f, group, topic, queueID, offset); err != nil {
		t.Fatalf("update offset %s/%s/%d = %d: %v", group, topic, queueID, offset, err)
	}
}

// tryUpdateOffset is updateOffset returning the core's error.
func tryUpdateOffset(t *testing.T, f *brokertest.Fixture, group, topic string, queueID int32, offset int64) error {
	t.Helper()
	var r broker.UpdateConsumerOffsetRequest
	r.ConsumerGroup, r.Topic, r.QueueID, r.CommitOffset = group, topic, queueID, offset
	return brokertest.Await0(t, func(done func(error)) { f.Broker.UpdateConsumerOffset(r, done) })
}

// queryOffset asks the core for group's committed offset of (topic,
// queueID), setZeroIfNotFound as given.
func queryOffset(f *brokertest.Fixture, group, topic string, queueID int32, setZero bool) (int64, *broker.Error) {
	var r broker.QueryConsumerOffsetRequest
	r.ConsumerGroup, r.Topic, r.QueueID, r.SetZeroIfNotFound = group, topic, queueID, setZero
	type answer struct {
		off int64
		e   *broker.Error
	}
	ch := make(chan answer, 1)
	f.Broker.QueryConsumerOffset(r, func(off int64, e *broker.Error) { ch <- answer{off, e} })
	a := <-ch
	return a.off, a.e
}

// TestCoreConsumerOffsetSurvivesRestart commits an offset, queries it,
// restarts the core over the same directory and queries it again.
func TestCoreConsumerOffsetSurvivesRestart(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicO", 2)
	appendBodies(t, f, "TopicO", 1, "o0", "o1", "o2")

	if off, e := queryOffset(f, "GroupO", "TopicO", 1, true); e != nil || off != 0 {
		t.Fatalf("before commit (setZero): %d %v, want 0", off, e)
	}
	off, e := queryOffset(f, "GroupO", "TopicO", 1, false)
	wantCodeRemark(t, e, codec.QueryNotFound, broker.QueryNotFoundRemark)
	if off != 0 {
		t.Fatalf("not found offset %d", off)
	}

	// UPDATE_CONSUMER_OFFSET never creates the group (ConsumerManageProcessor).
	wantCodeRemark(t, tryUpdateOffset(t, f, "GroupO", "TopicO", 1, 2), codec.SubscriptionGroupNotExist, "Group GroupO not exist!")
	putGroup(t, f, codec.NewSubscriptionGroupConfig("GroupO"))
	updateOffset(t, f, "GroupO", "TopicO", 1, 2)
	if off, e := queryOffset(f, "GroupO", "TopicO", 1, false); e != nil || off != 2 {
		t.Fatalf("after commit: %d %v, want 2", off, e)
	}
	f.Restart()
	if off, e := queryOffset(f, "GroupO", "TopicO", 1, false); e != nil || off != 2 {
		t.Fatalf("after restart: %d %v, want 2", off, e)
	}
	if off, e := queryOffset(f, "GroupO", "TopicO", 0, false); e == nil {
		t.Fatalf("other queue after restart: %d, want QUERY_NOT_FOUND", off)
	}
}

// TestCoreUpdateConsumerOffsetRefusals checks UPDATE_CONSUMER_OFFSET's
// refusal codes and remarks; nothing is written.
func TestCoreUpdateConsumerOffsetRefusals(t *testing.T) {
	cfg := brokertest.Config(t.TempDir())
	cfg.AutoCreateSubscriptionGroup = false
	f := brokertest.Start(t, cfg, nil)
	createTopic(t, f, "TopicU", 1)
	putGroup(t, f, codec.NewSubscriptionGroupConfig("GroupU"))

	wantCodeRemark(t, tryUpdateOffset(t, f, "NoSuchGroup", "TopicU", 0, 1), codec.SubscriptionGroupNotExist, "Group NoSuchGroup not exist!")
	wantCodeRemark(t, tryUpdateOffset(t, f, "GroupU", "NoSuchTopic", 0, 1), codec.TopicNotExist, "Topic NoSuchTopic not exist!")
	wantCodeRemark(t, tryUpdateOffset(t, f, "GroupU", "TopicU", 1, 1), codec.InvalidParameter, "queueId 1 out of range for topic TopicU")
	wantCodeRemark(t, tryUpdateOffset(t, f, "GroupU", "TopicU", 0, -1), codec.InvalidParameter, "commitOffset must not be negative")
	if _, ok := f.Store.ConsumerOffset("GroupU", "TopicU", 0); ok {
		t.Fatalf("a refused update wrote an offset")
	}
}

// appendOldAndNew stores "old0", "old1" on (topic, 0), then moves the
// broker clock 10 s ahead and stores "new0", "new1"; it returns a time
// between the two pairs' store times.
func appendOldAndNew(t *testing.T, f *brokertest.Fixture, topic string) int64 {
	t.Helper()
	appendBodies(t, f, topic, 0, "old0", "old1")
	mid := f.Broker.Now() + 5_000
	f.Broker.AdvanceClock(10_000)
	appendBodies(t, f, topic, 0, "new0", "new1")
	return mid
}

// resetOffset runs a reset through the core and waits for it.
func resetOffset(t *testing.T, f *brokertest.Fixture, r broker.ResetOffsetRequest) (broker.ResetOffsetResult, error) {
	t.Helper()
	return brokertest.Await(t, func(done func(broker.ResetOffsetResult, error)) { f.Broker.ResetOffset(r, done) })
}

// TestCoreResetOffsetByTimestamp resets a group's offsets of every queue
// to the first message stored at or after a time; the reset is durable
// across a restart. A negative timestamp resets to the max offset, an
// explicit offset outside the queue's range is refused.
func TestCoreResetOffsetByTimestamp(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicZ", 2)
	putGroup(t, f, codec.NewSubscriptionGroupConfig("GroupZ"))
	mid := appendOldAndNew(t, f, "TopicZ")
	updateOffset(t, f, "GroupZ", "TopicZ", 0, 4)

	var r broker.ResetOffsetRequest
	r.Group, r.Topic, r.QueueID, r.Timestamp = "GroupZ", "TopicZ", -1, mid
	res, err := resetOffset(t, f, r)
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	want := []codec.QueueOffset{
		{Queue: codec.MessageQueue{Topic: "TopicZ", BrokerName: brokertest.BrokerName, QueueID: 0}, Offset: 2},
		{Queue: codec.MessageQueue{Topic: "TopicZ", BrokerName: brokertest.BrokerName, QueueID: 1}, Offset: 0},
	}
	if len(res.Offsets) != len(want) || res.Offsets[0] != want[0] || res.Offsets[1] != want[1] {
		t.Fatalf("reset offsets %+v, want %+v", res.Offsets, want)
	}
	f.Restart()
	if off, e := queryOffset(f, "GroupZ", "TopicZ", 0, false); e != nil || off != 2 {
		t.Fatalf("after reset and restart: %d %v, want 2", off, e)
	}
	p, err := pull(t, f, pullReq("GroupZ", "TopicZ", 0, 2))
	wantPull(t, p, err, codec.Success, "FOUND", 4, 0, 4)
	if b := bodiesOf(t, p.Body); len(b) != 2 || b[0] != "new0" {
		t.Fatalf("bodies after the reset point %v, want new0 new1", b)
	}

	r.QueueID, r.Timestamp = 0, -1
	if res, err = resetOffset(t, f, r); err != nil || len(res.Offsets) != 1 || res.Offsets[0].Offset != 4 {
		t.Fatalf("reset to max: %+v %v, want offset 4", res, err)
	}
	r.Offset, r.HasOffset = 9, true
	_, err = resetOffset(t, f, r)
	wantCodeRemark(t, err, codec.SystemError, "Target offset 9 not in consume queue range [0-4]")
	if off, e := queryOffset(f, "GroupZ", "TopicZ", 0, false); e != nil || off != 4 {
		t.Fatalf("after a refused reset: %d %v, want 4", off, e)
	}

	r.Group = "NoSuchGroup"
	_, err = resetOffset(t, f, r)
	wantCodeRemark(t, err, codec.SubscriptionGroupNotExist, "Group NoSuchGroup does not exist")
	r.Topic = "NoSuchTopic"
	_, err = resetOffset(t, f, r)
	wantCodeRemark(t, err, codec.TopicNotExist, "Topic NoSuchTopic does not exist")
}

// TestCoreSearchOffset searches by store time with both boundaries, and
// answers 0 for an unknown queue.
func TestCoreSearchOffset(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicS", 1)
	mid := appendOldAndNew(t, f, "TopicS")
	search := func(topic string, ts int64, boundary string) int64 {
		t.Helper()
		var r broker.SearchOffsetRequest
		r.Topic, r.QueueID, r.Timestamp, r.BoundaryType = topic, 0, ts, boundary
		off, err := brokertest.Await(t, func(done func(int64, error)) { f.Broker.SearchOffset(r, done) })
		if err != nil {
			t.Fatalf("search %s %d %s: %v", topic, ts, boundary, err)
		}
		return off
	}
	if got := search("TopicS", mid, codec.BoundaryLower); got != 2 {
		t.Fatalf("LOWER at mid = %d, want 2 (first new message)", got)
	}
	if got := search("TopicS", mid, codec.BoundaryUpper); got != 1 {
		t.Fatalf("UPPER at mid = %d, want 1 (last old message)", got)
	}
	if got := search("TopicS", 0, codec.BoundaryUpper); got != 0 {
		t.Fatalf("UPPER before every message = %d, want the min offset 0", got)
	}
	if got := search("TopicS", mid+3_600_000, codec.BoundaryLower); got != 4 {
		t.Fatalf("LOWER after every message = %d, want the max offset 4", got)
	}
	if got := search("NoSuchTopic", mid, codec.BoundaryLower); got != 0 {
		t.Fatalf("unknown queue = %d, want 0", got)
	}
}

// TestCoreQueueOffsets: max, min and earliest store time of a queue with
// messages, and of an unknown topic (0, 0, -1).
func TestCoreQueueOffsets(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TopicM", 1)
	appendBodies(t, f, "TopicM", 0, "m0", "m1", "m2")

	if off, e := f.Broker.MaxOffset("TopicM", 0); e != nil || off != 3 {
		t.Fatalf("max offset %d %v, want 3", off, e)
	}
	if off, e := f.Broker.MinOffset("TopicM", 0); e != nil || off != 0 {
		t.Fatalf("min offset %d %v, want 0", off, e)
	}
	if off, e := f.Broker.MaxOffset("NoSuchTopic", 0); e != nil || off != 0 {
		t.Fatalf("max offset of unknown topic %d %v, want 0", off, e)
	}
	if off, e := f.Broker.MinOffset("NoSuchTopic", 0); e != nil || off != 0 {
		t.Fatalf("min offset of unknown topic %d %v, want 0", off, e)
	}
	earliest := func(topic string) int64 {
		t.Helper()
		ts, err := brokertest.Await(t, func(done func(int64, error)) { f.Broker.EarliestMsgStoreTime(topic, 0, done) })
		if err != nil {
			t.Fatalf("earliest %s: %v", topic, err)
		}
		return ts
	}
	first, err := f.Store.ReadMessage("TopicM", 0, 0)
	if err != nil {
		t.Fatalf("read first message: %v", err)
	}
	want, ok := popstore.StoreTimestamp(first)
	if ts := earliest("TopicM"); !ok || ts != want || ts <= 0 {
		t.Fatalf("earliest store time %d, want %d (first message's STORETIMESTAMP)", ts, want)
	}
	if ts := earliest("NoSuchTopic"); ts != -1 {
		t.Fatalf("earliest of unknown topic %d, want -1", ts)
	}
}
