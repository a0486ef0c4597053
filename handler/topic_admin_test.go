package handler_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

func createTopicReq(topic, read, write, perm, attrs string) map[string]string {
	ext := map[string]string{"topic": topic, "readQueueNums": read, "writeQueueNums": write, "perm": perm,
		"defaultTopic": "TBW102", "topicFilterType": "SINGLE_TAG", "order": "false"}
	if attrs != "" {
		ext["attributes"] = attrs
	}
	return ext
}

func topicConfig(t *testing.T, c *client.Conn, topic string) (codec.TopicConfig, bool) {
	t.Helper()
	resp := d2Call(t, c, codec.RequestGetTopicConfig, map[string]string{"topic": topic, "lo": "true"}, nil)
	if resp.Code == codec.TopicNotExist {
		assert.Equal(t, "No topic in this broker. topic: "+topic, resp.Remark)
		return codec.TopicConfig{}, false
	}
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	tc, err := codec.DecodeTopicConfig(resp.Body)
	require.NoError(t, err)
	return tc, true
}

func TestTopicAdmin(t *testing.T) {
	dir := t.TempDir()
	cfg := d2Config(dir)
	cfg.AutoCreateTopic = false
	st := d2Start(t, cfg)
	bc := dialAddr(t, st.BrokerAddr())

	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicT", "4", "4", "6", "+message.type=FIFO"), nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	tc, ok := topicConfig(t, bc, "TopicT")
	require.True(t, ok)
	assert.Equal(t, codec.TopicConfig{TopicName: "TopicT", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6,
		TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{"message.type": "FIFO"}}, tc)

	// Update: queue counts change, attributes are edited in place.
	resp = d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicT", "8", "8", "6", "-message.type,+queue.type=SimpleCQ"), nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	tc, _ = topicConfig(t, bc, "TopicT")
	assert.Equal(t, int32(8), tc.ReadQueueNums)
	assert.Equal(t, map[string]string{"queue.type": "SimpleCQ"}, tc.Attributes)

	// Refusals.
	for name, ext := range map[string]map[string]string{
		"system topic":   createTopicReq("TBW102", "4", "4", "7", ""),
		"cluster topic":  createTopicReq("ClusterD2", "4", "4", "7", ""),
		"zero queues":    createTopicReq("TopicZ", "0", "0", "6", ""),
		"negative":       createTopicReq("TopicZ", "-1", "4", "6", ""),
		"bad perm":       createTopicReq("TopicZ", "4", "4", "64", ""),
		"bad attribute":  createTopicReq("TopicZ", "4", "4", "6", "+message.type=MIXED"),
		"unknown key":    createTopicReq("TopicZ", "4", "4", "6", "+color=red"),
		"attr no prefix": createTopicReq("TopicZ", "4", "4", "6", "message.type=FIFO"),
	} {
		resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, ext, nil)
		assert.Equal(t, codec.InvalidParameter, resp.Code, name)
	}
	resp = d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("bad topic", "4", "4", "6", ""), nil)
	assert.Equal(t, codec.InvalidParameter, resp.Code)
	assert.Equal(t, "The specified topic: bad topic, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$", resp.Remark)
	resp = d2Call(t, bc, codec.RequestUpdateAndCreateTopic, map[string]string{"topic": "TopicZ", "readQueueNums": "4", "writeQueueNums": "4"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<perm>")
	_, ok = topicConfig(t, bc, "TopicZ")
	assert.False(t, ok)

	// GET_ALL_TOPIC_CONFIG: the new topic and the system topics.
	resp = d2Call(t, bc, codec.RequestGetAllTopicConfig, nil, nil)
	require.Equal(t, codec.Success, resp.Code)
	all, err := codec.DecodeTopicConfigWrapper(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, all.TopicConfigTable, "TopicT")
	assert.Contains(t, all.TopicConfigTable, "ClusterD2")
	assert.Contains(t, all.TopicConfigTable, "broker-d2")
	assert.NotContains(t, all.TopicConfigTable, "TBW102", "auto-create is off")
	assert.Equal(t, len(all.TopicConfigTable), atoiT(t, resp.ExtFields["totalTopicNum"]))
	assert.Positive(t, all.DataVersion.Counter)

	// Survives a restart.
	d2Stop(t, st)
	st = d2Start(t, cfg)
	bc = dialAddr(t, st.BrokerAddr())
	tc, ok = topicConfig(t, bc, "TopicT")
	require.True(t, ok)
	assert.Equal(t, int32(8), tc.WriteQueueNums)

	// DELETE_TOPIC_IN_BROKER removes the topic and the POP retry topics of
	// known groups (RET-05), but not another topic's.
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cD", "GD"))
	for _, rt := range []string{"%RETRY%GD_TopicT", "%RETRY%GD+TopicT", "%RETRY%GD_TopicU"} {
		resp = d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq(rt, "1", "1", "6", ""), nil)
		require.Equal(t, codec.Success, resp.Code, rt+": "+resp.Remark)
	}
	d2Send(t, bc, "TopicT", 0, "doomed")
	resp = d2Call(t, bc, codec.RequestDeleteTopicInBroker, map[string]string{"topic": "TopicT"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	for _, gone := range []string{"TopicT", "%RETRY%GD_TopicT", "%RETRY%GD+TopicT"} {
		_, ok := topicConfig(t, bc, gone)
		assert.False(t, ok, gone)
	}
	_, ok = topicConfig(t, bc, "%RETRY%GD_TopicU")
	assert.True(t, ok)
	ns := dialAddr(t, st.NamesrvAddr())
	assert.Equal(t, codec.TopicNotExist, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "TopicT"}, nil).Code)
	assert.Equal(t, int64(0), offsetOf(t, d2Call(t, bc, codec.RequestGetMaxOffset, map[string]string{"topic": "TopicT", "queueId": "0"}, nil)),
		"messages of the deleted topic are gone")
	assert.Equal(t, codec.Success, d2Call(t, ns, codec.RequestDeleteTopicInNamesrv, map[string]string{"topic": "TopicT"}, nil).Code)

	assert.Equal(t, codec.InvalidParameter, d2Call(t, bc, codec.RequestDeleteTopicInBroker, map[string]string{"topic": "broker-d2"}, nil).Code)
	assert.Equal(t, codec.Success, d2Call(t, bc, codec.RequestDeleteTopicInBroker, map[string]string{"topic": "NeverWas"}, nil).Code)
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, ch := range s {
		require.True(t, ch >= '0' && ch <= '9', "not a number: %q", s)
		n = n*10 + int(ch-'0')
	}
	return n
}
