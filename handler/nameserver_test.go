package handler_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler"
)

func routeOK(t *testing.T, resp *codec.Command) codec.TopicRouteData {
	t.Helper()
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	r, err := codec.DecodeTopicRouteData(resp.Body)
	require.NoError(t, err)
	require.Len(t, r.BrokerDatas, 1)
	require.Len(t, r.QueueDatas, 1)
	return r
}

func TestRouteUnknownTopicAutoCreateOn(t *testing.T) {
	cfg := d2Config(t.TempDir())
	cfg.DefaultTopicQueueNums = 6
	st := d2Start(t, cfg)
	ns := dialAddr(t, st.NamesrvAddr())
	bc := dialAddr(t, st.BrokerAddr())

	// Unknown topic: TOPIC_NOT_EXIST with the 5.5 name server's remark, and
	// the look-up creates nothing (asked twice, on both ports).
	for _, c := range []*client.Conn{ns, bc, ns} {
		resp := d2Call(t, c, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "TopicA"}, nil)
		require.Equal(t, codec.TopicNotExist, resp.Code)
		assert.Equal(t, "No topic route info in name server for the topic: TopicA\nSee https://rocketmq.apache.org/docs/faq/ for further details.", resp.Remark)
	}
	_, ok := topicConfig(t, bc, "TopicA")
	require.False(t, ok, "a route look-up must not create the topic")
	resp := d2Call(t, ns, codec.RequestGetAllTopicListFromNameServer, nil, nil)
	require.Equal(t, codec.Success, resp.Code)
	assert.NotContains(t, string(resp.Body), `"TopicA"`)

	// TBW102, cluster-name and broker-name topics: system topics, perm 7.
	// TBW102 is what a producer falls back to.
	for _, name := range []string{"TBW102", "ClusterD2", "broker-d2"} {
		r := routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": name}, nil))
		assert.Equal(t, int32(7), r.QueueDatas[0].Perm, name)
	}
	// The producer's fallback: SEND with defaultTopic TBW102 creates the
	// topic with min(the producer's defaultTopicQueueNums 4, TBW102's 6)
	// queues; from then on it is routed to us.
	d2Send(t, bc, "TopicA", 0, "first")
	r := routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "TopicA"}, nil))
	assert.Equal(t, map[int64]string{0: st.BrokerAddr()}, r.BrokerDatas[0].BrokerAddrs)
	assert.Equal(t, "broker-d2", r.BrokerDatas[0].BrokerName)
	assert.Equal(t, "ClusterD2", r.BrokerDatas[0].Cluster)
	assert.Equal(t, codec.QueueData{BrokerName: "broker-d2", Perm: 6, ReadQueueNums: 4, WriteQueueNums: 4}, r.QueueDatas[0])

	// Deleted: 17 again, and it stays deleted (M4).
	require.Equal(t, codec.Success, d2Call(t, bc, codec.RequestDeleteTopicInBroker, map[string]string{"topic": "TopicA"}, nil).Code)
	require.Equal(t, codec.Success, d2Call(t, ns, codec.RequestDeleteTopicInNamesrv, map[string]string{"topic": "TopicA"}, nil).Code)
	for i := 0; i < 2; i++ {
		assert.Equal(t, codec.TopicNotExist, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "TopicA"}, nil).Code)
	}
	_, ok = topicConfig(t, bc, "TopicA")
	assert.False(t, ok)

	// Invalid and reserved names: 17 too.
	resp = d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "bad topic!"}, nil)
	assert.Equal(t, codec.TopicNotExist, resp.Code)
	resp = d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "rmq_sys_x"}, nil)
	assert.Equal(t, codec.TopicNotExist, resp.Code)
}

func TestRouteAutoCreateOff(t *testing.T) {
	cfg := d2Config(t.TempDir())
	cfg.AutoCreateTopic = false
	st := d2Start(t, cfg)
	ns := dialAddr(t, st.NamesrvAddr())
	bc := dialAddr(t, st.BrokerAddr())

	for _, name := range []string{"TopicB", "TBW102", "%DLQ%g1", "%RETRY%groupX"} {
		resp := d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": name}, nil)
		assert.Equal(t, codec.TopicNotExist, resp.Code, name)
		assert.Equal(t, handler.NoRouteRemark(name), resp.Remark)
	}
	// A consumer group's retry topic gets its route (1 queue) from the
	// group's first HEART_BEAT (RET-06), whatever --auto-create-topic says.
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cX", "groupX"))
	r := routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "%RETRY%groupX"}, nil))
	assert.Equal(t, int32(1), r.QueueDatas[0].ReadQueueNums)
	assert.Equal(t, int32(6), r.QueueDatas[0].Perm)
	// The cluster-name topic exists regardless (the proxy needs it).
	routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "ClusterD2"}, nil))
	// No TBW102 to fall back to: SEND to an unknown topic is refused.
	req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte("x"))
	codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "TopicB", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 0, BornTimestamp: 1}.EncodeV2(req)
	assert.Equal(t, codec.TopicNotExist, d2Invoke(t, bc, req).Code)

	// After UPDATE_AND_CREATE_TOPIC the route is there at once (the proxy's
	// start: DefaultHeartBeatSyncerTopic, F3).
	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, map[string]string{
		"topic": "TopicB", "readQueueNums": "3", "writeQueueNums": "2", "perm": "6", "defaultTopic": "TBW102",
		"topicFilterType": "SINGLE_TAG", "order": "false",
	}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	r = routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "TopicB"}, nil))
	assert.Equal(t, int32(3), r.QueueDatas[0].ReadQueueNums)
	assert.Equal(t, int32(2), r.QueueDatas[0].WriteQueueNums)
}

func TestRouteJSONKeyStyle(t *testing.T) {
	st := d2Start(t, d2Config(t.TempDir()))
	ns := dialAddr(t, st.NamesrvAddr())
	call := func(version int32, ext map[string]string) string {
		req := codec.NewRequest(codec.RequestGetRouteInfoByTopic, 0, ext, nil)
		req.Version = version
		resp := d2Invoke(t, ns, req)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		_, err := codec.DecodeTopicRouteData(resp.Body)
		require.NoError(t, err)
		return string(resp.Body)
	}
	bc := dialAddr(t, st.BrokerAddr())
	require.Equal(t, codec.Success, d2Call(t, bc, codec.RequestUpdateAndCreateTopic, createTopicReq("TopicJ", "4", "4", "6", ""), nil).Code)
	legacy := call(317, map[string]string{"topic": "TopicJ"}) // the Go client's version
	assert.Contains(t, legacy, `"brokerAddrs":{0:"`+st.BrokerAddr()+`"}`)
	standard := call(479, map[string]string{"topic": "TopicJ"})
	assert.Contains(t, standard, `"brokerAddrs":{"0":"`+st.BrokerAddr()+`"}`)
	forced := call(317, map[string]string{"topic": "TopicJ", "acceptStandardJsonOnly": "true"})
	assert.Contains(t, forced, `"brokerAddrs":{"0":"`)
	assert.False(t, strings.ContainsAny(standard, " \n\t"), "route JSON must be compact: %s", standard)
}

func TestNameServerCodesOnBothPorts(t *testing.T) {
	st := d2Start(t, d2Config(t.TempDir()))
	for _, addr := range []string{st.NamesrvAddr(), st.BrokerAddr()} {
		c := dialAddr(t, addr)
		resp := d2Call(t, c, codec.RequestGetBrokerClusterInfo, nil, nil)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		info, err := codec.DecodeClusterInfo(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, map[string][]string{"ClusterD2": {"broker-d2"}}, info.ClusterAddrTable)
		assert.Equal(t, st.BrokerAddr(), info.BrokerAddrTable["broker-d2"].BrokerAddrs[0])

		resp = d2Call(t, c, handler.RequestGetKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "T"}, nil)
		assert.Equal(t, codec.QueryNotFound, resp.Code)
		assert.Equal(t, "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T", resp.Remark)
		resp = d2Call(t, c, handler.RequestDeleteKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "T"}, nil)
		assert.Equal(t, codec.Success, resp.Code, resp.Remark)

		resp = d2Call(t, c, codec.RequestGetAllTopicListFromNameServer, nil, nil)
		require.Equal(t, codec.Success, resp.Code)
		assert.Contains(t, string(resp.Body), `"ClusterD2"`)
	}
	// The name-server port does not serve broker codes.
	ns := dialAddr(t, st.NamesrvAddr())
	resp := d2Call(t, ns, codec.RequestHeartBeat, nil, []byte(`{"clientID":"c1"}`))
	assert.Equal(t, codec.RequestCodeNotSupported, resp.Code)
}

func TestNameServerHeaderErrors(t *testing.T) {
	st := d2Start(t, d2Config(t.TempDir()))
	ns := dialAddr(t, st.NamesrvAddr())
	resp := d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<topic>")
	resp = d2Call(t, ns, handler.RequestGetKVConfig, map[string]string{"namespace": "x"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<key>")
	resp = d2Call(t, ns, handler.RequestDeleteKVConfig, map[string]string{"key": "x"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<namespace>")
	resp = d2Call(t, ns, 9999, nil, nil)
	assert.Equal(t, codec.RequestCodeNotSupported, resp.Code)
}
