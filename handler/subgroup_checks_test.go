package handler_test

// The group checks of the consuming request codes: --auto-create-subscription-group
// on and off, consumeEnable=false, retryMaxTimes and retryQueueNums.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

func groupPullReq(group, topic string) *codec.Command { return pullReq(group, topic, 0, 0, 32, 0, "") }

func notificationReq(group, topic string) *codec.Command {
	req := codec.NewRequest(codec.RequestNotification, 0, nil, nil)
	codec.NotificationRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: -1, BrokerName: testBrokerName}.Encode(req)
	return req
}

func sendBackReq(group string, offset int64) *codec.Command {
	req := codec.NewRequest(codec.RequestConsumerSendMsgBack, 0, nil, nil)
	codec.ConsumerSendMsgBackRequestHeader{Offset: offset, Group: group, DelayLevel: 1, OriginTopic: "T"}.Encode(req)
	return req
}

func updateOffsetReq(group, topic string) *codec.Command {
	return codec.NewRequest(codec.RequestUpdateConsumerOffset, 0, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": "0", "commitOffset": "0"}, nil)
}

// groupCodes sends every group-checked request for group and returns the
// response of each, by name.
func groupCodes(t *testing.T, h *harness, c *client.Conn, group string) map[string]*codec.Command {
	t.Helper()
	send(t, c, "T", 0, "m", sendOpts{})
	recs, _, err := h.b().Store.ReadMessages("T", 0, 0, 1, 1<<20)
	require.NoError(t, err)
	m, _, err := codec.DecodeMessage(recs[0])
	require.NoError(t, err)
	popResp, _ := pop(t, c, popArgs{group: group, topic: "T", queueID: -1, max: 1, invisible: 60000})
	return map[string]*codec.Command{
		"POP":                    popResp,
		"PULL":                   call(t, c, groupPullReq(group, "T")),
		"NOTIFICATION":           call(t, c, notificationReq(group, "T")),
		"CONSUMER_SEND_MSG_BACK": call(t, c, sendBackReq(group, m.PhysicalOffset)),
		"UPDATE_CONSUMER_OFFSET": call(t, c, updateOffsetReq(group, "T")),
		"GET_SUBSCRIPTIONGROUP":  getGroup(t, c, group),
	}
}

// TestSUB_AutoCreateOff: with --auto-create-subscription-group=false an
// unknown group gets SUBSCRIPTION_GROUP_NOT_EXIST (26) with Java's remark
// from every consuming code, HEART_BEAT skips it silently (SUCCESS, not
// registered, no retry topic), and nothing is created; a CID_RMQ_SYS_
// group is still created. After 200 creates the group, the same
// heartbeat registers it and POP serves it.
func TestSUB_AutoCreateOff(t *testing.T) {
	h := startHarness(t, func(cfg *conf.Config) { cfg.AutoCreateSubscriptionGroup = false })
	h.createTopic("T", 1)
	c := h.dial()
	got := groupCodes(t, h, c, "G")
	faq := "\nSee https://rocketmq.apache.org/docs/faq/ for further details."
	want := map[string]string{
		"POP":                    "subscription group [G] does not exist, " + faq,
		"PULL":                   "subscription group [G] does not exist, " + faq,
		"NOTIFICATION":           "subscription group [G] does not exist, " + faq,
		"CONSUMER_SEND_MSG_BACK": "subscription group not exist, G " + faq,
		"UPDATE_CONSUMER_OFFSET": "Group G not exist!",
		"GET_SUBSCRIPTIONGROUP":  "No group in this broker",
	}
	for name, remark := range want {
		require.Equal(t, codec.SubscriptionGroupNotExist, got[name].Code, "%s: %s", name, got[name].Remark)
		require.Equal(t, remark, got[name].Remark, name)
	}
	_, ok := h.b().Groups.Get("G")
	require.False(t, ok, "refused requests created the group")

	body := heartbeatBody("10.0.0.1@1#1", "G", "CID_RMQ_SYS_X")
	for range 2 { // the second one would take the fast path if it were cached
		resp := call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, body))
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
	}
	require.Empty(t, consumerIDs(t, c, "G"))
	require.False(t, topicExists(t, c, "%RETRY%G"))
	require.Equal(t, []string{"10.0.0.1@1#1"}, consumerIDs(t, c, "CID_RMQ_SYS_X"))
	eventually(t, func() bool { _, ok := h.b().Store.Group("CID_RMQ_SYS_X"); return ok }, "system-prefixed group created")

	require.Equal(t, codec.Success, putGroup(t, c, codec.NewSubscriptionGroupConfig("G")).Code)
	resp := call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, body))
	require.Equal(t, codec.Success, resp.Code)
	require.Equal(t, []string{"10.0.0.1@1#1"}, consumerIDs(t, c, "G"))
	eventually(t, func() bool { return topicExists(t, c, "%RETRY%G") }, "retry topic of the created group")
	resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 60000})
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Len(t, ms, 1)

	// Deleting it again: the cached heartbeat no longer registers it.
	require.Equal(t, codec.Success, deleteGroup(t, c, "G", false).Code)
	resp = call(t, c, codec.NewRequest(codec.RequestUnregisterClient, 0,
		map[string]string{"clientID": "10.0.0.1@1#1", "consumerGroup": "G"}, nil))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	resp = call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, body))
	require.Equal(t, codec.Success, resp.Code)
	require.Empty(t, consumerIDs(t, c, "G"))
}

// TestSUB_AutoCreateOn: with the default flag every consuming code creates
// an unknown group (durably), and HEART_BEAT registers it.
func TestSUB_AutoCreateOn(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	for name, resp := range groupCodes(t, h, c, "G") {
		require.NotEqual(t, codec.SubscriptionGroupNotExist, resp.Code, "%s: %s", name, resp.Remark)
	}
	eventually(t, func() bool { _, ok := h.b().Store.Group("G"); return ok }, "group durable")
	for i, g := range []string{"PopOnly", "PullOnly", "NotifyOnly", "HbOnly"} {
		switch i {
		case 0:
			pop(t, c, popArgs{group: g, topic: "T", queueID: -1, max: 1, invisible: 60000})
		case 1:
			call(t, c, groupPullReq(g, "T"))
		case 2:
			call(t, c, notificationReq(g, "T"))
		case 3:
			require.Equal(t, codec.Success, call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, heartbeatBody("c1", g))).Code)
			require.Equal(t, []string{"c1"}, consumerIDs(t, c, g))
		}
		eventually(t, func() bool { _, ok := h.b().Store.Group(g); return ok }, "group %s created", g)
	}
}

// TestSUB_ConsumeDisabled: consumeEnable=false refuses POP, PULL (with
// forbiddenType=2) and NOTIFICATION with NO_PERMISSION (16) and Java's
// remark; ACK and CHANGE of earlier receipts are not group-checked.
func TestSUB_ConsumeDisabled(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 60000})
	require.Len(t, ms, 1)
	cfg := codec.NewSubscriptionGroupConfig("G")
	cfg.ConsumeEnable = false
	require.Equal(t, codec.Success, putGroup(t, c, cfg).Code)

	resp, _ := pop(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 1, invisible: 60000})
	require.Equal(t, codec.NoPermission, resp.Code)
	require.Equal(t, "subscription group no permission, G", resp.Remark)
	resp = call(t, c, groupPullReq("G", "T"))
	require.Equal(t, codec.NoPermission, resp.Code)
	require.Equal(t, "subscription group no permission, G", resp.Remark)
	require.Equal(t, "2", resp.ExtFields["forbiddenType"])
	resp = call(t, c, notificationReq("G", "T"))
	require.Equal(t, codec.NoPermission, resp.Code)
	resp, _ = change(t, c, "G", "T", ms[0], 60000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)

	cfg.ConsumeEnable = true
	require.Equal(t, codec.Success, putGroup(t, c, cfg).Code)
	resp = call(t, c, groupPullReq("G", "T"))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
}

// TestSUB_RetryMaxTimesFromAdmin: the retryMaxTimes set by 200 is revive's
// DLQ limit (here 2; the flag's 16 would not be reached).
func TestSUB_RetryMaxTimesFromAdmin(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	cfg := codec.NewSubscriptionGroupConfig("G")
	cfg.RetryMaxTimes = 2
	require.Equal(t, codec.Success, putGroup(t, c, cfg).Code)
	send(t, c, "T", 0, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 1000})
	require.Len(t, ms, 1)
	redeliverUntilDLQ(t, h, c, 2)
	recs, _, err := h.b().Store.ReadMessages(codec.DLQTopic("G"), 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 1, "moved to the DLQ after the group's retryMaxTimes")
}

// TestSUB_RetryQueueNums: HEART_BEAT creates %RETRY%<group> with the
// group's retryQueueNums queues.
func TestSUB_RetryQueueNums(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	cfg := codec.NewSubscriptionGroupConfig("GQ")
	cfg.RetryQueueNums = 4
	require.Equal(t, codec.Success, putGroup(t, c, cfg).Code)
	require.Equal(t, codec.Success, call(t, c, codec.NewRequest(codec.RequestHeartBeat, 0, nil, heartbeatBody("c1", "GQ"))).Code)
	eventually(t, func() bool { _, ok := h.b().Topics.Get("%RETRY%GQ"); return ok }, "retry topic")
	m, _ := h.b().Topics.Get("%RETRY%GQ")
	require.EqualValues(t, 4, m.ReadQueueNums)
	require.EqualValues(t, 4, m.WriteQueueNums)
}
