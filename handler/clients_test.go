package handler

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

func TestClientTableExpiryAndRemoval(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ct := NewClientTable(zerolog.Nop())
	ct.SetClock(func() time.Time { return now })
	reg := ConsumerRegistration{Group: "G", ConsumeType: codec.ConsumePassively, MessageModel: codec.MessageModelCluster,
		Subscriptions: []Subscription{{Topic: "T", SubString: "*"}}}

	assert.True(t, ct.RegisterConsumer(reg, ClientChannel{ClientID: "c2", ConnID: 2}))
	assert.True(t, ct.RegisterConsumer(reg, ClientChannel{ClientID: "c1", ConnID: 1}))
	assert.False(t, ct.RegisterConsumer(reg, ClientChannel{ClientID: "c1", ConnID: 1}), "second heartbeat is not new")
	ct.RegisterProducer("P", ClientChannel{ClientID: "c1", ConnID: 1})
	assert.Equal(t, []string{"c1", "c2"}, ct.ConsumerIDs("G"))
	p, c := ct.Counts()
	assert.Equal(t, 1, p)
	assert.Equal(t, 2, c)
	assert.Len(t, ct.ProducerChannels(), 1)

	// c2 goes silent; c1 keeps heartbeating. Exactly at 120 s c2 is alive,
	// one millisecond later it is gone.
	now = now.Add(60 * time.Second)
	ct.RegisterConsumer(reg, ClientChannel{ClientID: "c1", ConnID: 1})
	now = now.Add(60 * time.Second)
	assert.Equal(t, []string{"c1", "c2"}, ct.ConsumerIDs("G"))
	now = now.Add(time.Millisecond)
	assert.Equal(t, []string{"c1"}, ct.ConsumerIDs("G"))
	info, ok := ct.Consumer("G")
	require.True(t, ok)
	assert.Len(t, info.Channels, 1)
	assert.Equal(t, "*", info.Subscriptions["T"].SubString)

	// Connection 1 closes: c1 leaves the group and the producer group.
	assert.Equal(t, []string{"G"}, ct.RemoveConn(1))
	assert.Nil(t, ct.ConsumerIDs("G"))
	p, _ = ct.Counts()
	assert.Equal(t, 0, p)

	// Unregister removes only what it names.
	ct.RegisterConsumer(reg, ClientChannel{ClientID: "c3", ConnID: 3})
	ct.RegisterProducer("P", ClientChannel{ClientID: "c3", ConnID: 3})
	assert.True(t, ct.Unregister("c3", "P", ""))
	assert.Equal(t, []string{"c3"}, ct.ConsumerIDs("G"))
	assert.True(t, ct.Unregister("c3", "", "G"))
	assert.Nil(t, ct.ConsumerIDs("G"))
	assert.False(t, ct.Unregister("c3", "P", "G"))
	assert.Empty(t, ct.ConsumerGroups())
}

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
