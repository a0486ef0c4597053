package handler_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler"
)

// UPDATE_BROKER_CONFIG (25) applies autoCreateSubscriptionGroup and
// autoCreateTopicEnable at once and durably (they survive a restart),
// accepts an unchanged value of another key, and refuses any other change
// with NO_PERMISSION naming the key, applying nothing.
func TestUpdateBrokerConfig(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.DiskSpaceWarningLevelRatio, c.DiskSpaceCleanForciblyRatio = 0.95, 0.8 })
	h.createTopic("T", 1)
	c := h.dial()
	cfgText := func() string {
		resp := d2Call(t, c, codec.RequestGetBrokerConfig, nil, nil)
		require.Equal(t, codec.Success, resp.Code)
		return string(resp.Body)
	}
	require.Contains(t, cfgText(), "autoCreateSubscriptionGroup=true\n")
	require.Contains(t, cfgText(), "diskSpaceWarningLevelRatio=95\n", "Java's percentages")
	require.Contains(t, cfgText(), "diskSpaceCleanForciblyRatio=80\n")

	resp := d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("autoCreateSubscriptionGroup=false\n"))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Contains(t, cfgText(), "autoCreateSubscriptionGroup=false\n")
	resp, _ = pop(t, c, popArgs{group: "GNEW", topic: "T", queueID: -1, max: 1, invisible: 60000})
	assert.Equal(t, codec.SubscriptionGroupNotExist, resp.Code, "auto-create is off now")
	resp = d2Call(t, c, codec.RequestGetBrokerConfig, nil, nil)
	assert.Contains(t, resp.ExtFields["version"], `"counter":1`)

	resp = d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("maxMessageSize=4194304\nbatch-max-ops=4096\n"))
	assert.Equal(t, codec.Success, resp.Code, "unchanged values are accepted: %s", resp.Remark)
	resp = d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("autoCreateTopicEnable=false\nmaxMessageSize=1024\n"))
	assert.Equal(t, codec.NoPermission, resp.Code)
	assert.Contains(t, resp.Remark, "maxMessageSize")
	assert.Contains(t, cfgText(), "autoCreateTopicEnable=true\n", "nothing applied when one key is refused")
	resp = d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("autoCreateTopicEnable=maybe"))
	assert.Equal(t, codec.InvalidParameter, resp.Code)
	assert.Contains(t, resp.Remark, "autoCreateTopicEnable")
	resp = d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, nil)
	assert.Equal(t, codec.Success, resp.Code)

	h.restart()
	c = h.dial()
	assert.Contains(t, cfgText(), "autoCreateSubscriptionGroup=false\n", "persisted, wins over the flag")
	resp, _ = pop(t, c, popArgs{group: "GNEW2", topic: "T", queueID: -1, max: 1, invisible: 60000})
	assert.Equal(t, codec.SubscriptionGroupNotExist, resp.Code)
}

// CLEAN_EXPIRED_CONSUMEQUEUE (306) answers SUCCESS; GET_CONSUMER_RUNNING_INFO
// (307) answers SYSTEM_ERROR "not online" for an unknown client, else it
// is forwarded to the client, whose answer comes back (popshim's own
// client answers REQUEST_CODE_NOT_SUPPORTED; call_consumer_test.go has
// clients that answer).
func TestCleanExpiredCQAndConsumerRunningInfo(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	resp := d2Call(t, c, codec.RequestCleanExpiredConsumeQueue, nil, nil)
	assert.Equal(t, codec.Success, resp.Code)

	resp = d2Call(t, c, codec.RequestGetConsumerRunningInfo, map[string]string{"consumerGroup": "GR", "clientId": "x@1"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "The Consumer <GR> <x@1> not online", resp.Remark)
	require.Equal(t, codec.Success, d2Call(t, c, codec.RequestHeartBeat, nil, heartbeatBody("x@1", "GR")).Code)
	resp = d2Call(t, c, codec.RequestGetConsumerRunningInfo, map[string]string{"consumerGroup": "GR", "clientId": "x@1"}, nil)
	assert.Equal(t, codec.RequestCodeNotSupported, resp.Code)
	assert.Equal(t, " request type 307 not supported", resp.Remark)
	resp = d2Call(t, c, codec.RequestGetConsumerRunningInfo, map[string]string{"consumerGroup": "GR"}, nil)
	assert.Contains(t, resp.Remark, "<clientId>")
}

// GET_BROKER_CONSUME_STATS (317) lists every subscription group's
// ConsumeStats per topic, with totalDiff over all of them.
func TestBrokerConsumeStats(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TB", 2)
	c := h.dial()
	for range 3 {
		send(t, c, "TB", 0, "m", sendOpts{})
	}
	send(t, c, "TB", 1, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "GB", topic: "TB", queueID: 0, max: 1, invisible: 60000})
	require.Len(t, ms, 1)

	resp := d2Call(t, c, codec.RequestGetBrokerConsumeStats, map[string]string{"isOrder": "false"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	// fastjson's MessageQueue-object keys are not standard JSON: check the text.
	text := string(resp.Body)
	assert.True(t, strings.HasPrefix(text, `{"brokerAddr":"`+h.addr()+`","consumeStatsList":[`), text)
	assert.Contains(t, text, `{"GB":[{"consumeTps":0.0,"offsetTable":{{"brokerName":"`+testBrokerName+`","queueId":0,"topic":"TB"}:{"brokerOffset":3,"consumerOffset":0,"lastTimestamp":0,"pullOffset":1},`)
	assert.Contains(t, text, `{"brokerName":"`+testBrokerName+`","queueId":1,"topic":"TB"}:{"brokerOffset":1,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}}}]}`)
	assert.Contains(t, text, `{"TOOLS_CONSUMER":[]}`, "every subscription group, as Java")
	// GB: queue 0 popped 1 of 3, not acked (in flight), queue 1 not consumed (0 of 1).
	assert.True(t, strings.HasSuffix(text, `"totalDiff":4,"totalInflightDiff":1}`), text)

	resp = d2Call(t, c, codec.RequestGetBrokerConsumeStats, map[string]string{"isOrder": "true"}, nil)
	require.Equal(t, codec.Success, resp.Code)
	assert.NotContains(t, string(resp.Body), `"topic":"TB"`, "TB is not an order topic")
}

// QUERY_CONSUME_QUEUE (321) reports the queue's extent and, per entry, the
// record's commit-log offset, length and tag hash code.
func TestQueryConsumeQueue(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TQ", 1)
	c := h.dial()
	r0 := send(t, c, "TQ", 0, "a", sendOpts{tag: "TagA"})
	send(t, c, "TQ", 0, "bb", sendOpts{})
	send(t, c, "TQ", 0, "ccc", sendOpts{})

	ext := map[string]string{"topic": "TQ", "queueId": "0", "index": "1", "count": "10", "consumerGroup": "GQ"}
	resp := d2Call(t, c, codec.RequestQueryConsumeQueue, ext, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	var body handler.QueryConsumeQueueBody
	require.NoError(t, json.Unmarshal(resp.Body, &body), string(resp.Body))
	assert.EqualValues(t, 3, body.MaxQueueIndex)
	assert.EqualValues(t, 0, body.MinQueueIndex)
	assert.Equal(t, "GQ@TQ is not online!", body.FilterData)
	require.Len(t, body.QueueData, 2, "entries 1 and 2")
	assert.Greater(t, body.QueueData[0].PhysicOffset, int64(0))
	assert.Equal(t, body.QueueData[0].PhysicOffset+int64(body.QueueData[0].PhysicSize), body.QueueData[1].PhysicOffset,
		"records follow each other in the commit-log offset space")
	assert.Zero(t, body.QueueData[0].TagsCode, "no tags")

	ext["index"], ext["count"] = "0", "1"
	resp = d2Call(t, c, codec.RequestQueryConsumeQueue, ext, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.NoError(t, json.Unmarshal(resp.Body, &body))
	require.Len(t, body.QueueData, 1)
	assert.EqualValues(t, codec.TagHashCode("TagA"), body.QueueData[0].TagsCode)
	assert.Equal(t, r0.MsgID[len(r0.MsgID)-16:], fmt.Sprintf("%016X", body.QueueData[0].PhysicOffset),
		"offsetMsgId ends with the commit-log offset")

	ext["index"] = "3"
	resp = d2Call(t, c, codec.RequestQueryConsumeQueue, ext, nil)
	assert.Equal(t, codec.Success, resp.Code)
	assert.Equal(t, "Index 3 of 0@TQ is not exist!", resp.Remark)
	resp = d2Call(t, c, codec.RequestQueryConsumeQueue, map[string]string{"topic": "TQ", "queueId": "5", "index": "0", "count": "1"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "5@TQ is not exist!", resp.Remark)
	resp = d2Call(t, c, codec.RequestQueryConsumeQueue, map[string]string{"topic": "TQ", "queueId": "0", "count": "1"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<index>")
}
