package handler_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// queueEntry matches one MessageQueue-keyed entry of a 202/208 body and
// captures queueId and the value object.
var queueEntry = regexp.MustCompile(`\{"brokerName":"[^"]*","queueId":(\d+),"topic":"([^"]*)"\}:(\{[^}]*\})`)

// TestAdminStatsCodes covers GET_TOPIC_STATS_INFO (202), GET_CONSUME_STATS
// (208), GET_CONSUMER_CONNECTION_LIST (203), GET_PRODUCER_CONNECTION_LIST
// (204) and QUERY_TOPIC_CONSUME_BY_WHO (300) after 10 messages were sent
// and a POP consumer popped and acked 4 of them.
func TestAdminStatsCodes(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	h.createTopic("TS", 2)
	sendN(t, c, "TS", 0, 10, "m", sendOpts{})

	resp := d2Call(t, c, codec.RequestGetTopicStatsInfo, map[string]string{"topic": "TS"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	body := string(resp.Body)
	m := queueEntry.FindAllStringSubmatch(body, -1)
	require.Len(t, m, 2, body)
	assert.Equal(t, "0", m[0][1])
	assert.Regexp(t, `^\{"lastUpdateTimestamp":[1-9]\d+,"maxOffset":10,"minOffset":0\}$`, m[0][3])
	assert.Equal(t, `{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}`, m[1][3])
	assert.True(t, strings.HasSuffix(body, `},"topicPutTps":0.0}`), body)
	resp = d2Call(t, c, codec.RequestGetTopicStatsInfo, map[string]string{"topic": "nope"}, nil)
	assert.Equal(t, codec.TopicNotExist, resp.Code)
	assert.Equal(t, "topic[nope] not exist", resp.Remark)

	ms := popAll(t, c, popArgs{group: "GS", topic: "TS", queueID: 0, max: 4, invisible: 60000}, 4)
	require.Len(t, ms, 4)
	for _, p := range ms {
		require.Equal(t, codec.Success, ack(t, c, "GS", "TS", p))
	}
	resp = d2Call(t, c, codec.RequestGetConsumeStats, map[string]string{"consumerGroup": "GS"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	body = string(resp.Body)
	assert.True(t, strings.HasPrefix(body, `{"consumeTps":0.0,"offsetTable":{`), body)
	m = queueEntry.FindAllStringSubmatch(body, -1)
	require.Len(t, m, 2, body)
	assert.Regexp(t, `^\{"brokerOffset":10,"consumerOffset":4,"lastTimestamp":[1-9]\d+,"pullOffset":4\}$`, m[0][3])
	assert.Equal(t, `{"brokerOffset":0,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}`, m[1][3])
	// Three more popped, not acked: in flight, not consumed (Diff 6, Inflight 3).
	require.Len(t, popAll(t, c, popArgs{group: "GS", topic: "TS", queueID: 0, max: 3, invisible: 60000}, 3), 3)
	resp = d2Call(t, c, codec.RequestGetConsumeStats, map[string]string{"consumerGroup": "GS"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	m = queueEntry.FindAllStringSubmatch(string(resp.Body), -1)
	require.Len(t, m, 2, string(resp.Body))
	assert.Regexp(t, `^\{"brokerOffset":10,"consumerOffset":4,"lastTimestamp":[1-9]\d+,"pullOffset":7\}$`, m[0][3])
	resp = d2Call(t, c, codec.RequestGetConsumeStats, map[string]string{"consumerGroup": "nobody"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, `{"consumeTps":0.0,"offsetTable":{}}`, string(resp.Body))

	// 203 / 204 need a live client.
	resp = d2Call(t, c, codec.RequestGetConsumerConnectionList, map[string]string{"consumerGroup": "GH"}, nil)
	assert.Equal(t, codec.ConsumerNotOnline, resp.Code)
	assert.Equal(t, "the consumer group[GH] not online", resp.Remark)
	resp = d2Call(t, c, codec.RequestHeartBeat, nil, heartbeatBody("10.0.0.1@123#1", "GH"))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	resp = d2Call(t, c, codec.RequestGetConsumerConnectionList, map[string]string{"consumerGroup": "GH"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	cc, err := codec.DecodeConsumerConnection(resp.Body)
	require.NoError(t, err)
	require.Len(t, cc.ConnectionSet, 1)
	assert.Equal(t, "10.0.0.1@123#1", cc.ConnectionSet[0].ClientID)
	assert.Contains(t, cc.ConnectionSet[0].ClientAddr, "127.0.0.1:")
	assert.Equal(t, codec.ConsumePassively, cc.ConsumeType)
	assert.Equal(t, "CLUSTERING", cc.MessageModel)
	assert.Equal(t, "*", cc.SubscriptionTable["TopicH"].SubString)
	assert.Contains(t, string(resp.Body), `"codeSet":[]`)

	resp = d2Call(t, c, codec.RequestGetProducerConnectionList, map[string]string{"producerGroup": "CLIENT_INNER_PRODUCER"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	pc, err := codec.DecodeProducerConnection(resp.Body)
	require.NoError(t, err)
	require.Len(t, pc.ConnectionSet, 1)
	assert.Equal(t, "10.0.0.1@123#1", pc.ConnectionSet[0].ClientID)
	resp = d2Call(t, c, codec.RequestGetProducerConnectionList, map[string]string{"producerGroup": "PX"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "the producer group[PX] not exist", resp.Remark)

	// 328: every producer group with its live clients (mqadmin producer -b).
	resp = d2Call(t, c, codec.RequestGetAllProducerInfo, nil, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	pt, err := codec.DecodeProducerTableInfo(resp.Body)
	require.NoError(t, err, string(resp.Body))
	require.Len(t, pt.Data, 1, string(resp.Body))
	require.Len(t, pt.Data["CLIENT_INNER_PRODUCER"], 1, string(resp.Body))
	pi := pt.Data["CLIENT_INNER_PRODUCER"][0]
	assert.Equal(t, "10.0.0.1@123#1", pi.ClientID)
	assert.Regexp(t, `^/127\.0\.0\.1:\d+$`, pi.RemoteIP)
	assert.Equal(t, "JAVA", pi.Language)
	assert.InDelta(t, time.Now().UnixMilli(), pi.LastUpdateTimestamp, 60_000)

	// 300: GS by its offset, GH by its subscription.
	for topic, want := range map[string][]string{"TS": {"GS"}, "TopicH": {"GH"}, "none": {}} {
		resp = d2Call(t, c, codec.RequestQueryTopicConsumeByWho, map[string]string{"topic": topic}, nil)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		gl, err := codec.DecodeGroupList(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, want, gl.GroupList, topic)
	}
}

// TestBrokerConfigAndTopicList covers GET_BROKER_CONFIG (26),
// UPDATE_AND_CREATE_TOPIC_LIST (18) and PUT_KV_CONFIG (100).
func TestBrokerConfigAndTopicList(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	resp := d2Call(t, c, codec.RequestGetBrokerConfig, nil, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	text := string(resp.Body)
	assert.Contains(t, text, "brokerName="+testBrokerName+"\n")
	assert.Contains(t, text, fmt.Sprintf("storePathRootDir=%s\n", h.b().Cfg.DataDir))
	assert.Regexp(t, `(?m)^listenPort=\d+$`, text)
	assert.Regexp(t, `(?m)^batch-max-ops=\d+$`, text)
	// Java names (MessageStoreConfig, BrokerConfig, NettyServerConfig) in Java's units.
	cfg := h.b().Cfg
	assert.Contains(t, text, "messageDelayLevel=1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h\n")
	assert.Contains(t, text, fmt.Sprintf("timerMaxDelaySec=%d\n", cfg.TimerMaxDelaySec))
	assert.Contains(t, text, "messageIndexEnable=true\n")
	assert.NotContains(t, text, "message-index-enable=")
	assert.Contains(t, text, fmt.Sprintf("reviveInterval=%d\n", cfg.ReviveInterval.Milliseconds()))
	assert.Contains(t, text, fmt.Sprintf("serverChannelMaxIdleTimeSeconds=%d\n", int64(cfg.IdleTimeout.Seconds())))
	assert.Regexp(t, `(?m)^registerNameServerPeriod=\d+$`, text)
	assert.Regexp(t, `(?m)^cleanResourceInterval=\d+$`, text)
	assert.Contains(t, text, "\nauthenticationEnabled=false\n")
	for _, flag := range []string{"message-delay-level", "timer-max-delay-sec", "revive-interval", "idle-timeout", "register-interval", "auth-enabled", "auth-whitelist"} {
		assert.NotContains(t, text, "\n"+flag+"=", "flag with a Java name listed under its own name")
	}
	assert.NotContains(t, text, "test-slow-store")
	assert.Regexp(t, `^\{"counter":0,"stateVersion":0,"timestamp":\d+\}$`, resp.ExtFields["version"])

	list := []codec.TopicConfig{
		{TopicName: "TL1", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6, Attributes: map[string]string{"+message.type": "FIFO"}},
		{TopicName: "TL2", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6},
	}
	resp = d2Call(t, c, codec.RequestUpdateAndCreateTopicList, nil, codec.EncodeCreateTopicListRequestBody(list))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	tc, ok := topicConfig(t, c, "TL1")
	require.True(t, ok)
	assert.Equal(t, int32(2), tc.ReadQueueNums)
	assert.Equal(t, map[string]string{"message.type": "FIFO"}, tc.Attributes)
	_, ok = topicConfig(t, c, "TL2")
	assert.True(t, ok)

	// One bad entry refuses the whole list before anything is written.
	bad := []codec.TopicConfig{{TopicName: "TL3", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6},
		{TopicName: "TL4", ReadQueueNums: 0, WriteQueueNums: 0, Perm: 6}}
	resp = d2Call(t, c, codec.RequestUpdateAndCreateTopicList, nil, codec.EncodeCreateTopicListRequestBody(bad))
	assert.Equal(t, codec.InvalidParameter, resp.Code)
	_, ok = topicConfig(t, c, "TL3")
	assert.False(t, ok)
	resp = d2Call(t, c, codec.RequestUpdateAndCreateTopicList, nil, []byte(`{}`))
	assert.Equal(t, codec.SystemError, resp.Code)

	resp = d2Call(t, c, codec.RequestPutKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "TL1", "value": "b:2"}, nil)
	assert.Equal(t, codec.Success, resp.Code, resp.Remark)
	resp = d2Call(t, c, codec.RequestPutKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "TL1"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
}
