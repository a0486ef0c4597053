package handler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// brokerPermission through UPDATE_BROKER_CONFIG, as an operator drains a
// broker: 4 (read only) masks every route's perm and refuses SENDs to
// order topics and CONSUMER_SEND_MSG_BACK while other SENDs and POPs go
// on (as a Java 5.5 broker); 2 (write only) refuses POP and PULL (PULL
// with forbiddenType BROKER_FORBIDDEN); the value survives a restart and
// a bad one is INVALID_PARAMETER.
func TestBrokerPermission(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	done := make(chan error, 1)
	require.NoError(t, h.b().Topics.Create(popstore.TopicMeta{TopicName: "TO", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: 6, TopicFilterType: "SINGLE_TAG", Order: true}, func(err error) { done <- err }))
	require.NoError(t, <-done)
	c := h.dial()
	update := func(v string) *codec.Command {
		return d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("brokerPermission="+v+"\n"))
	}
	perm := func(topic string) int32 {
		return routeOK(t, d2Call(t, c, codec.RequestGetRouteInfoByTopic, map[string]string{"topic": topic}, nil)).QueueDatas[0].Perm
	}
	sent := send(t, c, "T", 0, "before", sendOpts{})
	require.Equal(t, int32(6), perm("T"))

	resp := update("4")
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	cfg := d2Call(t, c, codec.RequestGetBrokerConfig, nil, nil)
	assert.Contains(t, string(cfg.Body), "brokerPermission=4\n")
	assert.Equal(t, int32(4), perm("T"), "route perm masked with the broker's")
	send(t, c, "T", 0, "still stored", sendOpts{})
	resp = call(t, c, sendReq("TO", 0, []byte("ordered"), sendOpts{}))
	assert.Equal(t, codec.NoPermission, resp.Code)
	assert.True(t, strings.HasSuffix(resp.Remark, "sending message is forbidden"), resp.Remark)
	back := codec.ConsumerSendMsgBackRequestHeader{Offset: physOf(t, sent.MsgID), Group: "G", DelayLevel: 1, OriginTopic: "T"}
	req := codec.NewRequest(codec.RequestConsumerSendMsgBack, 0, nil, nil)
	back.Encode(req)
	assert.Equal(t, codec.NoPermission, call(t, c, req).Code)
	resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMin})
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, []string{"before", "still stored"}, bodies(ms))

	require.Equal(t, codec.Success, update("2").Code)
	resp, _ = pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
	assert.Equal(t, codec.NoPermission, resp.Code)
	assert.True(t, strings.HasSuffix(resp.Remark, "pop message is forbidden"), resp.Remark)
	pr := call(t, c, pullReq("G", "T", 0, 0, 32, 0, ""))
	assert.Equal(t, codec.NoPermission, pr.Code)
	assert.Equal(t, "1", pr.ExtFields["forbiddenType"], "BROKER_FORBIDDEN")
	assert.Equal(t, int32(2), perm("T"))

	for _, bad := range []string{"9", "-1", "rw"} {
		resp = update(bad)
		assert.Equal(t, codec.InvalidParameter, resp.Code, bad)
		assert.Contains(t, resp.Remark, "brokerPermission", bad)
	}

	h.restart()
	c = h.dial()
	assert.Equal(t, int32(2), perm("T"), "persisted, wins over the flag")
	require.Equal(t, codec.Success, update("6").Code)
	assert.Equal(t, int32(6), perm("T"))
	resp, _ = pop(t, c, popArgs{group: "G2", topic: "T", queueID: 0, max: 32, invisible: 60000, initMode: codec.ConsumeInitModeMin})
	assert.Equal(t, codec.Success, resp.Code, resp.Remark)
}

// physOf is the physical offset inside an offsetMsgId.
func physOf(t *testing.T, offsetMsgID string) int64 {
	t.Helper()
	_, phys, err := codec.DecodeOffsetMsgID(offsetMsgID)
	require.NoError(t, err)
	return phys
}

// A brokerPermission change is registered with external name servers
// before UPDATE_BROKER_CONFIG answers (registerBrokerAll), every topic's
// perm masked with it and the data version moved, so the name server
// applies it; back at 6 the perms are whole again.
func TestBrokerPermissionRegistered(t *testing.T) {
	f, nsAddr := startFakeNamesrv(t)
	cfg := d2Config(t.TempDir())
	cfg.NamesrvAddr = nsAddr
	cfg.RegisterInterval = time.Hour
	st := d2Start(t, cfg)
	c := dialAddr(t, st.BrokerAddr())
	lastPerm := func() (int32, int64) { return f.lastPerm("TBW102") }
	eventually(t, func() bool { p, _ := lastPerm(); return p == 7 }, "first registration")
	_, c0 := lastPerm()
	resp := d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("brokerPermission=4\n"))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	p, c1 := lastPerm()
	require.Equal(t, int32(4), p, "registered before the reply")
	require.Greater(t, c1, c0)
	resp = d2Call(t, c, codec.RequestUpdateBrokerConfig, nil, []byte("brokerPermission=6\n"))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	p, c2 := lastPerm()
	require.Equal(t, int32(7), p)
	require.Greater(t, c2, c1)
}
