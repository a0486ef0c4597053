package handler_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

func heartbeatBody(clientID string, groups ...string) []byte {
	hb := codec.HeartbeatData{ClientID: clientID, ProducerDataSet: []codec.ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}}}
	for _, g := range groups {
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, codec.ConsumerData{
			GroupName: g, ConsumeType: codec.ConsumePassively, MessageModel: codec.MessageModelCluster,
			ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
			SubscriptionDataSet: []codec.SubscriptionData{
				{Topic: "TopicH", SubString: "*", ExpressionType: "TAG"},
				{Topic: "%RETRY%" + g, SubString: "*", ExpressionType: "TAG"},
			},
		})
	}
	return codec.EncodeHeartbeatData(&hb)
}

func TestHeartbeatConsumerListUnregister(t *testing.T) {
	cfg := d2Config(t.TempDir())
	cfg.AutoCreateTopic = false
	st := d2Start(t, cfg)
	bc := dialAddr(t, st.BrokerAddr())

	// Before any heartbeat: no consumers, no retry topic.
	resp := d2Call(t, bc, codec.RequestGetConsumerListByGroup, map[string]string{"consumerGroup": "GH"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "no consumer for this group, GH", resp.Remark)
	resp = d2Call(t, bc, codec.RequestGetTopicConfig, map[string]string{"topic": "%RETRY%GH"}, nil)
	assert.Equal(t, codec.TopicNotExist, resp.Code)

	resp = d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("10.0.0.1@123#1", "GH"))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, codec.CurrentVersion, resp.Version)
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("10.0.0.2@456#2", "GH"))

	resp = d2Call(t, bc, codec.RequestGetConsumerListByGroup, map[string]string{"consumerGroup": "GH"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	list, err := codec.DecodeConsumerListBody(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.1@123#1", "10.0.0.2@456#2"}, list.ConsumerIDList)

	// The heartbeat made %RETRY%GH (1 queue, perm 6) although auto-create is off.
	resp = d2Call(t, bc, codec.RequestGetTopicConfig, map[string]string{"topic": "%RETRY%GH"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	tc, err := codec.DecodeTopicConfig(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, int32(1), tc.ReadQueueNums)
	assert.Equal(t, int32(6), tc.Perm)

	resp = d2Call(t, bc, codec.RequestUnregisterClient, map[string]string{"clientID": "10.0.0.1@123#1", "consumerGroup": "GH"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	resp = d2Call(t, bc, codec.RequestGetConsumerListByGroup, map[string]string{"consumerGroup": "GH"}, nil)
	list, _ = codec.DecodeConsumerListBody(resp.Body)
	assert.Equal(t, []string{"10.0.0.2@456#2"}, list.ConsumerIDList)

	// Bad input.
	resp = d2Call(t, bc, codec.RequestHeartBeat, nil, []byte("not json"))
	assert.Equal(t, codec.SystemError, resp.Code)
	resp = d2Call(t, bc, codec.RequestUnregisterClient, map[string]string{"consumerGroup": "GH"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<clientID>")
	resp = d2Call(t, bc, codec.RequestGetConsumerListByGroup, nil, nil)
	assert.Contains(t, resp.Remark, "<consumerGroup>")
}

func TestConnectionCloseRemovesConsumer(t *testing.T) {
	st := d2Start(t, d2Config(t.TempDir()))
	watcher := dialAddr(t, st.BrokerAddr())
	leaver := dialAddr(t, st.BrokerAddr())
	d2Call(t, watcher, codec.RequestHeartBeat, nil, heartbeatBody("cStay", "GC"))
	d2Call(t, leaver, codec.RequestHeartBeat, nil, heartbeatBody("cLeave", "GC"))
	ids := func() []string {
		resp := d2Call(t, watcher, codec.RequestGetConsumerListByGroup, map[string]string{"consumerGroup": "GC"}, nil)
		l, _ := codec.DecodeConsumerListBody(resp.Body)
		return l.ConsumerIDList
	}
	require.Equal(t, []string{"cLeave", "cStay"}, ids())
	require.NoError(t, leaver.Close())
	eventually(t, func() bool { return len(ids()) == 1 }, "closed connection still listed")
	assert.Equal(t, []string{"cStay"}, ids())
}
