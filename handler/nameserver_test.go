package handler

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
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

func TestRouteAutoCreateOn(t *testing.T) {
	cfg := d2Config(t.TempDir())
	cfg.DefaultTopicQueueNums = 6
	st := d2Start(t, cfg)
	ns := dialAddr(t, st.NamesrvAddr())

	// Unknown topic: created with TBW102's defaults and routed to us.
	r := routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "TopicA"}, nil))
	assert.Equal(t, map[int64]string{0: st.BrokerAddr()}, r.BrokerDatas[0].BrokerAddrs)
	assert.Equal(t, "broker-d2", r.BrokerDatas[0].BrokerName)
	assert.Equal(t, "ClusterD2", r.BrokerDatas[0].Cluster)
	assert.Equal(t, codec.QueueData{BrokerName: "broker-d2", Perm: 6, ReadQueueNums: 6, WriteQueueNums: 6}, r.QueueDatas[0])

	// Now it exists: GET_TOPIC_CONFIG on the broker port sees it.
	bc := dialAddr(t, st.BrokerAddr())
	resp := d2Call(t, bc, codec.RequestGetTopicConfig, map[string]string{"topic": "TopicA"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)

	// TBW102, cluster-name and broker-name topics: system topics, perm 7.
	for _, name := range []string{"TBW102", "ClusterD2", "broker-d2"} {
		r := routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": name}, nil))
		assert.Equal(t, int32(7), r.QueueDatas[0].Perm, name)
	}
	// Invalid names are never created.
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

	for _, name := range []string{"TopicB", "TBW102", "%DLQ%g1"} {
		resp := d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": name}, nil)
		assert.Equal(t, codec.TopicNotExist, resp.Code, name)
		assert.Contains(t, resp.Remark, name)
	}
	// Retry topics always get a route (RET-06), with one queue.
	r := routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "%RETRY%groupX"}, nil))
	assert.Equal(t, int32(1), r.QueueDatas[0].ReadQueueNums)
	assert.Equal(t, int32(6), r.QueueDatas[0].Perm)
	// The cluster-name topic exists regardless (the proxy needs it).
	routeOK(t, d2Call(t, ns, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": "ClusterD2"}, nil))

	// After UPDATE_AND_CREATE_TOPIC the route is there at once.
	bc := dialAddr(t, st.BrokerAddr())
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

		resp = d2Call(t, c, requestGetKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "T"}, nil)
		assert.Equal(t, codec.QueryNotFound, resp.Code)
		assert.Equal(t, "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T", resp.Remark)
		resp = d2Call(t, c, requestDeleteKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "T"}, nil)
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
	resp = d2Call(t, ns, requestGetKVConfig, map[string]string{"namespace": "x"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<key>")
	resp = d2Call(t, ns, requestDeleteKVConfig, map[string]string{"key": "x"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<namespace>")
	resp = d2Call(t, ns, 9999, nil, nil)
	assert.Equal(t, codec.RequestCodeNotSupported, resp.Code)
}
