package handler_test

import (
	"encoding/json"
	"math"

	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler"
)

// queryMessage sends QUERY_MESSAGE (12) and returns the response and the
// decoded messages.
func queryMessage(t *testing.T, c *client.Conn, h codec.QueryMessageRequestHeader) (*codec.Command, []codec.MessageExt) {
	t.Helper()
	req := codec.NewRequest(codec.RequestQueryMessage, 0, nil, nil)
	h.Encode(req)
	resp := call(t, c, req)
	_, err := codec.DecodeQueryMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err, "both index fields are always in the header")
	if resp.Code != codec.Success {
		return resp, nil
	}
	ms, err := codec.DecodeMessages(resp.Body)
	require.NoError(t, err)
	return resp, ms
}

func byKey(topic, key string, maxNum int32) codec.QueryMessageRequestHeader {
	return codec.QueryMessageRequestHeader{Topic: topic, Key: key, MaxNum: maxNum, EndTimestamp: math.MaxInt64}
}

func bodiesOf(ms []codec.MessageExt) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Body))
	}
	return out
}

// TestQueryMessage: QUERY_MESSAGE finds SENT messages by each KEYS element
// and by UNIQ_KEY (the unique-key flag lifts maxNum to 32), honours the time
// range and maxNum, answers QUERY_NOT_FOUND as Java for nothing found or an
// unknown topic, and finds the same after a restart.
func TestQueryMessage(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	h.createTopic("TQ", 2)
	before := time.Now().UnixMilli()
	first := send(t, c, "TQ", 0, "one", sendOpts{props: map[string]string{"KEYS": "order-1  order-2", "UNIQ_KEY": "UQ1"}})
	send(t, c, "TQ", 1, "two", sendOpts{tag: "tagQ", props: map[string]string{"KEYS": "order-1", "UNIQ_KEY": "UQ2"}})
	send(t, c, "TQ", 1, "three", sendOpts{props: map[string]string{"KEYS": "order-1", "UNIQ_KEY": "UQ3"}})
	after := time.Now().UnixMilli()

	resp, ms := queryMessage(t, c, byKey("TQ", "order-1", 64))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, []string{"one", "two", "three"}, bodiesOf(ms))
	assert.Equal(t, "TQ", ms[0].Topic)
	assert.Equal(t, first.MsgID, ms[0].OffsetMsgID())
	rh, _ := codec.DecodeQueryMessageResponseHeader(resp.ExtFields)
	assert.Equal(t, ms[2].PhysicalOffset, rh.IndexLastUpdatePhyoffset)
	assert.Equal(t, ms[2].StoreTimestamp, rh.IndexLastUpdateTimestamp)

	_, ms = queryMessage(t, c, byKey("TQ", "order-2", 64))
	assert.Equal(t, []string{"one"}, bodiesOf(ms))
	_, ms = queryMessage(t, c, byKey("TQ", "order-1", 2))
	assert.Equal(t, []string{"two", "three"}, bodiesOf(ms), "maxNum keeps the newest")
	uq := byKey("TQ", "order-1", 1)
	uq.UniqueKey = true
	_, ms = queryMessage(t, c, uq)
	assert.Len(t, ms, 3, "_UNIQUE_KEY_QUERY: maxNum is the broker's 32")
	uq.Key = "UQ2"
	_, ms = queryMessage(t, c, uq)
	require.Len(t, ms, 1)
	u, _ := ms[0].Property(codec.PropertyUniqClientMessageIDKeyIdx)
	assert.Equal(t, "UQ2", u)

	tagQ := byKey("TQ", "tagQ", 64)
	tagQ.IndexType = codec.IndexTypeTags
	_, ms = queryMessage(t, c, tagQ)
	assert.Equal(t, []string{"two"}, bodiesOf(ms), "5.5 indexType T: by tag")

	inRange := byKey("TQ", "order-1", 64)
	inRange.BeginTimestamp, inRange.EndTimestamp = before-1000, after+1000
	_, ms = queryMessage(t, c, inRange)
	assert.Len(t, ms, 3)
	for _, q := range []codec.QueryMessageRequestHeader{
		{Topic: "TQ", Key: "order-1", MaxNum: 64, BeginTimestamp: after + 1000, EndTimestamp: math.MaxInt64},
		byKey("TQ", "order-1  order-2", 64),
		byKey("NoSuchTopic", "order-1", 64),
		byKey("TQ", "order-3", 64),
	} {
		resp, _ = queryMessage(t, c, q)
		assert.Equal(t, codec.QueryNotFound, resp.Code, "%+v", q)
		assert.Equal(t, "can not find message, maybe time range not correct", resp.Remark)
	}
	bad := codec.NewRequest(codec.RequestQueryMessage, 0, map[string]string{"topic": "TQ", "key": "k", "beginTimestamp": "0", "endTimestamp": "1"}, nil)
	resp = call(t, c, bad)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<maxNum>")

	h.restart()
	c = h.dial()
	_, ms = queryMessage(t, c, byKey("TQ", "order-1", 64))
	assert.Equal(t, []string{"one", "two", "three"}, bodiesOf(ms), "the index is durable")
}

// TestQueryMessageIndexDisabled: with --message-index-enable=false SEND
// writes no index entry and QUERY_MESSAGE finds nothing.
func TestQueryMessageIndexDisabled(t *testing.T) {
	h := startHarness(t, func(cfg *conf.Config) { cfg.MessageIndexEnable = false })
	c := h.dial()
	h.createTopic("TQ", 1)
	send(t, c, "TQ", 0, "one", sendOpts{props: map[string]string{"KEYS": "k"}})
	resp, _ := queryMessage(t, c, byKey("TQ", "k", 64))
	assert.Equal(t, codec.QueryNotFound, resp.Code)
}

// TestViewBrokerStatsData: VIEW_BROKER_STATS_DATA (315) answers the
// statsAll items from the message counters: TOPIC_PUT_NUMS after SENDs,
// GROUP_GET_NUMS after a POP, BROKER_PUT_NUMS by cluster name, and Java's
// SYSTEM_ERROR for an item without traffic.
func TestViewBrokerStatsData(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	h.createTopic("TS", 1)
	sendN(t, c, "TS", 0, 5, "m", sendOpts{})
	stats := func(name, key string) (*codec.Command, handler.BrokerStatsData) {
		t.Helper()
		req := codec.NewRequest(handler.RequestViewBrokerStatsData, 0, nil, nil)
		codec.ViewBrokerStatsDataRequestHeader{StatsName: name, StatsKey: key}.Encode(req)
		resp := call(t, c, req)
		var d handler.BrokerStatsData
		if resp.Code == codec.Success {
			require.NoError(t, jsonUnmarshal(resp.Body, &d), string(resp.Body))
		}
		return resp, d
	}
	resp, d := stats(handler.StatsTopicPutNums, "TS")
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Contains(t, string(resp.Body), `"statsMinute":{"sum":5,"tps":`)
	for _, f := range []handler.StatsFigure{d.StatsMinute, d.StatsHour, d.StatsDay} {
		assert.Equal(t, uint64(5), f.Sum)
		assert.Greater(t, f.Tps, 0.0)
	}
	resp, d = stats(handler.StatsTopicPutSize, "TS")
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, uint64(5*len("m-0")), d.StatsDay.Sum)
	resp, d = stats(handler.StatsBrokerPutNums, h.cfg.ClusterName)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, uint64(5), d.StatsMinute.Sum)

	resp, _ = stats(handler.StatsGroupGetNums, "TS@GS")
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "The stats <GROUP_GET_NUMS> <TS@GS> not exist", resp.Remark)
	require.Len(t, popAll(t, c, popArgs{group: "GS", topic: "TS", queueID: 0, max: 3, invisible: 60000}, 3), 3)
	// The POP path counts after its reply is written.
	eventually(t, func() bool {
		resp, d = stats(handler.StatsGroupGetNums, "TS@GS")
		return resp.Code == codec.Success && d.StatsMinute.Sum == 3
	}, "GROUP_GET_NUMS TS@GS: %d %s %+v", resp.Code, resp.Remark, d)

	for _, k := range [][2]string{{handler.StatsTopicPutNums, "Nope"}, {"SNDBCK_PUT_NUMS", "TS"}, {handler.StatsBrokerPutNums, "OtherCluster"}} {
		resp, _ = stats(k[0], k[1])
		assert.Equal(t, codec.SystemError, resp.Code, k)
		assert.Equal(t, "The stats <"+k[0]+"> <"+k[1]+"> not exist", resp.Remark)
	}
	resp = call(t, c, codec.NewRequest(handler.RequestViewBrokerStatsData, 0, map[string]string{"statsName": "TOPIC_PUT_NUMS"}, nil))
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<statsKey>")
}

// jsonUnmarshal is json.Unmarshal (kept here so the test reads as the handler).
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
