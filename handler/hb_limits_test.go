package handler_test

// HEART_BEAT bounds and name checks over real TCP (heart_beat.go): counts
// above --max-heartbeat-groups, --max-heartbeat-subscriptions and
// --max-conn-client-channels are INVALID_PARAMETER naming the flag and
// register nothing; invalid names are skipped and the rest is served.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// hbConsumer is a push consumer entry as the Java client builds it: the
// given topics plus %RETRY%<group>.
func hbConsumer(group string, topics ...string) codec.ConsumerData {
	cd := codec.ConsumerData{GroupName: group, ConsumeType: codec.ConsumePassively,
		MessageModel: codec.MessageModelCluster, ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET"}
	for _, tp := range append(topics, codec.RetryGroupTopic(group)) {
		cd.SubscriptionDataSet = append(cd.SubscriptionDataSet,
			codec.SubscriptionData{Topic: tp, SubString: "*", ExpressionType: "TAG"})
	}
	return cd
}

// beat sends one HEART_BEAT and returns the reply.
func beat(t *testing.T, c *client.Conn, hb codec.HeartbeatData) *codec.Command {
	t.Helper()
	return call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, codec.EncodeHeartbeatData(&hb)))
}

// consumerIDs asks GET_CONSUMER_LIST_BY_GROUP; nil when the group has no
// consumer.
func consumerIDs(t *testing.T, c *client.Conn, group string) []string {
	t.Helper()
	resp := call(t, c, codec.NewRequest(codec.RequestGetConsumerListByGroup, 0, map[string]string{"consumerGroup": group}, nil))
	if resp.Code == codec.SystemError && strings.HasPrefix(resp.Remark, "no consumer for this group") {
		return nil
	}
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	l, err := codec.DecodeConsumerListBody(resp.Body)
	require.NoError(t, err)
	return l.ConsumerIDList
}

// topicExists asks GET_TOPIC_CONFIG.
func topicExists(t *testing.T, c *client.Conn, topic string) bool {
	t.Helper()
	resp := call(t, c, codec.NewRequest(codec.RequestGetTopicConfig, 0, map[string]string{"topic": topic}, nil))
	require.Contains(t, []int32{codec.Success, codec.TopicNotExist}, resp.Code, resp.Remark)
	return resp.Code == codec.Success
}

func producerClientIDs(h *harness) []string {
	var out []string
	for _, ch := range h.b().Clients.ProducerChannels() {
		out = append(out, ch.ClientID)
	}
	return out
}

// TestHB_GroupLimit: a heartbeat listing exactly --max-heartbeat-groups
// consumer groups registers them all; one more is INVALID_PARAMETER naming
// the flag, registers none of its new groups, creates no retry topic and
// keeps the earlier registrations. The same holds for producer groups.
func TestHB_GroupLimit(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.MaxHeartbeatGroups = 3 })
	c := h.dial()

	atLimit := codec.HeartbeatData{ClientID: "10.0.0.1@1#1",
		ProducerDataSet: []codec.ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}, {GroupName: "P1"}, {GroupName: "P2"}},
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T"), hbConsumer("G2", "T"), hbConsumer("G3", "T")}}
	resp := beat(t, c, atLimit)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	for _, g := range []string{"G1", "G2", "G3"} {
		assert.Equal(t, []string{"10.0.0.1@1#1"}, consumerIDs(t, c, g), g)
		assert.True(t, topicExists(t, c, codec.RetryGroupTopic(g)), g)
	}
	prodBefore, consBefore := h.b().Clients.Counts()
	require.Equal(t, 3, prodBefore)
	require.Equal(t, 3, consBefore)

	over := codec.HeartbeatData{ClientID: "10.0.0.2@2#2",
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T"), hbConsumer("G4", "T"), hbConsumer("G5", "T"), hbConsumer("G6", "T")}}
	resp = beat(t, c, over)
	require.Equal(t, codec.InvalidParameter, resp.Code, resp.Remark)
	assert.Equal(t, "heartbeat lists 4 consumer groups, above --max-heartbeat-groups 3", resp.Remark)
	for _, g := range []string{"G4", "G5", "G6"} {
		assert.Nil(t, consumerIDs(t, c, g), g)
		assert.False(t, topicExists(t, c, codec.RetryGroupTopic(g)), "refused heartbeat created %%RETRY%%%s", g)
		_, stored := h.b().Store.Group(g)
		assert.False(t, stored, "refused heartbeat stored group %s", g)
	}
	assert.Equal(t, []string{"10.0.0.1@1#1"}, consumerIDs(t, c, "G1"), "G1 gained no member")

	overP := codec.HeartbeatData{ClientID: "10.0.0.3@3#3", ProducerDataSet: []codec.ProducerData{
		{GroupName: "CLIENT_INNER_PRODUCER"}, {GroupName: "Q1"}, {GroupName: "Q2"}, {GroupName: "Q3"}}}
	resp = beat(t, c, overP)
	require.Equal(t, codec.InvalidParameter, resp.Code, resp.Remark)
	assert.Equal(t, "heartbeat lists 4 producer groups, above --max-heartbeat-groups 3", resp.Remark)

	prod, cons := h.b().Clients.Counts()
	assert.Equal(t, prodBefore, prod, "refused heartbeats registered producers")
	assert.Equal(t, consBefore, cons, "refused heartbeats registered consumers")
	for _, g := range []string{"G1", "G2", "G3"} {
		assert.Equal(t, []string{"10.0.0.1@1#1"}, consumerIDs(t, c, g), "%s lost", g)
	}
	resp = beat(t, c, atLimit)
	assert.Equal(t, codec.Success, resp.Code, "the connection still takes heartbeats: %s", resp.Remark)
}

// TestHB_SubscriptionLimit: a consumer group with exactly
// --max-heartbeat-subscriptions subscriptions registers; one with more
// refuses the whole heartbeat, naming the group and the flag.
func TestHB_SubscriptionLimit(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.MaxHeartbeatSubscriptions = 3 })
	c := h.dial()

	resp := beat(t, c, codec.HeartbeatData{ClientID: "c1", ConsumerDataSet: []codec.ConsumerData{hbConsumer("GS", "T1", "T2")}})
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	info, ok := h.b().Clients.Consumer("GS")
	require.True(t, ok)
	assert.Len(t, info.Subscriptions, 3)

	resp = beat(t, c, codec.HeartbeatData{ClientID: "c2", ConsumerDataSet: []codec.ConsumerData{
		hbConsumer("GOther", "T1"), hbConsumer("GS", "T1", "T2", "T3")}})
	require.Equal(t, codec.InvalidParameter, resp.Code, resp.Remark)
	assert.Equal(t, `heartbeat consumer group "GS" lists 4 subscriptions, above --max-heartbeat-subscriptions 3`, resp.Remark)
	assert.Nil(t, consumerIDs(t, c, "GOther"), "nothing of a refused heartbeat is registered")
	assert.False(t, topicExists(t, c, "%RETRY%GOther"))
	assert.Equal(t, []string{"c1"}, consumerIDs(t, c, "GS"))
	info, _ = h.b().Clients.Consumer("GS")
	assert.NotContains(t, info.Subscriptions, "T3", "the refused heartbeat replaced the subscriptions")
}

// TestHB_ConnChannelLimit: memberships accumulate per connection up to
// --max-conn-client-channels; a heartbeat that would go beyond is refused
// whole (the remark names the flag), one that only refreshes what the
// connection holds still passes, and another connection has its own budget.
func TestHB_ConnChannelLimit(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.MaxConnClientChannels = 4 })
	a := h.dial()

	first := codec.HeartbeatData{ClientID: "c1", ProducerDataSet: []codec.ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}},
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T"), hbConsumer("G2", "T")}}
	resp := beat(t, a, first) // 3 channels
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	second := codec.HeartbeatData{ClientID: "c1", ProducerDataSet: []codec.ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}},
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("G3", "T")}}
	resp = beat(t, a, second) // adds G3: 4, at the limit
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, []string{"c1"}, consumerIDs(t, a, "G3"))

	third := codec.HeartbeatData{ClientID: "c2", ConsumerDataSet: []codec.ConsumerData{hbConsumer("G1", "T"), hbConsumer("G9", "T")}}
	resp = beat(t, a, third)
	require.Equal(t, codec.InvalidParameter, resp.Code, resp.Remark)
	assert.Equal(t, "heartbeat: connection holds 4 client channels and the heartbeat adds 2, above --max-conn-client-channels 4", resp.Remark)
	assert.Equal(t, []string{"c1"}, consumerIDs(t, a, "G1"), "c2 joined G1 although refused")
	assert.Nil(t, consumerIDs(t, a, "G9"))
	assert.False(t, topicExists(t, a, "%RETRY%G9"), "refused heartbeat created a retry topic")
	for _, g := range []string{"G1", "G2", "G3"} {
		assert.Equal(t, []string{"c1"}, consumerIDs(t, a, g), "%s lost", g)
	}

	resp = beat(t, a, first) // refreshes only: adds nothing
	require.Equal(t, codec.Success, resp.Code, resp.Remark)

	b := h.dial()
	resp = beat(t, b, third)
	require.Equal(t, codec.Success, resp.Code, "another connection has its own budget: %s", resp.Remark)
	assert.Equal(t, []string{"c1", "c2"}, consumerIDs(t, b, "G1"))
	_, cons := h.b().Clients.Counts()
	assert.Equal(t, 5, cons, "c1 in G1..G3 over a, c2 in G1 and G9 over b")

	require.NoError(t, a.Close())
	eventually(t, func() bool { return consumerIDs(t, b, "G3") == nil }, "closed connection still listed")
	prod, cons := h.b().Clients.Counts()
	assert.Equal(t, 0, prod)
	assert.Equal(t, 2, cons, "only b's channels are left")
}

// TestHB_InvalidNamesSkipped: as a Java broker, a heartbeat with some
// illegal names is still SUCCESS; consumer groups failing ValidateGroup are
// not registered and get no retry topic, invalid producer groups are not
// registered, and subscriptions with illegal topics are dropped from an
// otherwise registered group. A group listed twice takes its later entry.
// Subscribed topics are never created.
func TestHB_InvalidNamesSkipped(t *testing.T) {
	h := startHarness(t, nil) // --auto-create-topic on: still nothing from subscriptions
	c := h.dial()
	long := strings.Repeat("g", codec.MaxGroupLength+1)
	good := hbConsumer("GOK", "TopicSub", "bad topic", strings.Repeat("t", codec.MaxTopicLength+1), "")
	hb := codec.HeartbeatData{ClientID: "10.0.0.9@9#9",
		ProducerDataSet: []codec.ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}, {GroupName: "bad producer"}, {GroupName: ""}},
		ConsumerDataSet: []codec.ConsumerData{hbConsumer("GOK", "TopicOld"), hbConsumer("bad group", "T"), hbConsumer("", "T"),
			hbConsumer(long, "T"), good, hbConsumer("G/x", "T")}}
	resp := beat(t, c, hb)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, codec.CurrentVersion, resp.Version)

	assert.Equal(t, []string{"10.0.0.9@9#9"}, consumerIDs(t, c, "GOK"))
	info, ok := h.b().Clients.Consumer("GOK")
	require.True(t, ok)
	subs := make([]string, 0, len(info.Subscriptions))
	for tp := range info.Subscriptions {
		subs = append(subs, tp)
	}
	assert.ElementsMatch(t, []string{"TopicSub", "%RETRY%GOK"}, subs, "illegal subscription topics are dropped; GOK's later entry wins")
	assert.True(t, topicExists(t, c, "%RETRY%GOK"))
	assert.False(t, topicExists(t, c, "TopicSub"), "a heartbeat must not create subscribed topics")

	assert.Equal(t, []string{"GOK"}, h.b().Clients.ConsumerGroups(), "only the valid consumer group is registered")
	for _, g := range []string{"bad group", long, "G/x"} {
		_, made := h.b().Topics.Get(codec.RetryGroupTopic(g))
		assert.False(t, made, "retry topic of invalid group %.20q", g)
		_, stored := h.b().Store.Group(g)
		assert.False(t, stored, "config of invalid group %.20q", g)
	}
	prod, cons := h.b().Clients.Counts()
	assert.Equal(t, 1, prod, "only CLIENT_INNER_PRODUCER is registered")
	assert.Equal(t, 1, cons)
	assert.Equal(t, []string{"10.0.0.9@9#9"}, producerClientIDs(h))
}

// TestHB_JavaShapedHeartbeat: the body a Java push consumer sends (fastjson
// member order, numeric codeSet, heartbeatFingerprint 0, withoutSub false,
// CLIENT_INNER_PRODUCER beside its own producer group) registers everything
// under the default bounds.
func TestHB_JavaShapedHeartbeat(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	body := fmt.Sprintf(`{"clientID":"192.168.0.7@12345#8823467871","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",`+
		`"consumeType":"CONSUME_PASSIVELY","groupName":"GJava","messageModel":"CLUSTERING","subscriptionDataSet":[`+
		`{"classFilterMode":false,"codeSet":[%d],"expressionType":"TAG","subString":"TagA","subVersion":1700000000000,"tagsSet":["TagA"],"topic":"TopicJ"},`+
		`{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1700000000001,"tagsSet":[],"topic":"%%RETRY%%GJava"}],`+
		`"unitMode":false}],"heartbeatFingerprint":0,"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"},{"groupName":"PJava"}],"withoutSub":false}`,
		codec.TagHashCode("TagA"))
	resp := call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, []byte(body)))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, codec.CurrentVersion, resp.Version)

	assert.Equal(t, []string{"192.168.0.7@12345#8823467871"}, consumerIDs(t, c, "GJava"))
	info, ok := h.b().Clients.Consumer("GJava")
	require.True(t, ok)
	assert.Equal(t, codec.ConsumePassively, info.ConsumeType)
	assert.Equal(t, []string{"TagA"}, info.Subscriptions["TopicJ"].Tags)
	assert.Equal(t, "*", info.Subscriptions["%RETRY%GJava"].SubString)
	assert.True(t, topicExists(t, c, "%RETRY%GJava"))
	prod, cons := h.b().Clients.Counts()
	assert.Equal(t, 2, prod)
	assert.Equal(t, 1, cons)
}
