package handler_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler"
)

// TestRuntimeInfoFigures: after 10 SENDs and a POP of 4, GET_BROKER_RUNTIME_INFO
// carries every key clusterList and brokerStatus read, as numbers (no key
// missing, so the tools never print null), the put/get totals and the data
// directory's used ratio.
func TestRuntimeInfoFigures(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	h.createTopic("rtT", 1)
	resp := call(t, c, codec.NewRequest(codec.RequestGetBrokerRuntimeInfo, 0, nil, nil))
	require.Equal(t, codec.Success, resp.Code)
	kv, err := codec.DecodeKVTable(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "-1", kv.Table["earliestMessageTimeStamp"], "no message yet, as Java")
	before := time.Now().UnixMilli()
	sendN(t, c, "rtT", 0, 10, "m", sendOpts{})
	popAll(t, c, popArgs{group: "rtG", topic: "rtT", queueID: -1, max: 4}, 4)

	resp = call(t, c, codec.NewRequest(codec.RequestGetBrokerRuntimeInfo, 0, nil, nil))
	require.Equal(t, codec.Success, resp.Code)
	kv, err = codec.DecodeKVTable(resp.Body)
	require.NoError(t, err)
	tab := kv.Table
	earliest, err := strconv.ParseInt(tab["earliestMessageTimeStamp"], 10, 64)
	require.NoError(t, err)
	assert.True(t, earliest >= before-1 && earliest <= time.Now().UnixMilli(), "earliest %d, first SEND at %d", earliest, before)
	assert.Equal(t, "10", tab["msgPutTotalTodayNow"])
	assert.Equal(t, "4", tab["msgGetTotalTodayNow"])
	assert.Equal(t, "0", tab["msgPutTotalTodayMorning"], "booted today")
	for _, k := range append([]string{"msgPutTotalYesterdayMorning", "msgGetTotalYesterdayMorning",
		"msgGetTotalTodayMorning", "bootTimestamp"}, handler.ZeroRuntimeKeys...) {
		_, err := strconv.ParseInt(tab[k], 10, 64)
		assert.NoError(t, err, "key %s = %q", k, tab[k])
	}
	var put, p60, p600 float64
	_, err = fmt.Sscan(tab["putTps"], &put, &p60, &p600)
	require.NoError(t, err, "putTps %q", tab["putTps"])
	assert.Greater(t, put, 0.0)
	ratio, err := strconv.ParseFloat(tab["commitLogDiskRatio"], 64)
	require.NoError(t, err)
	want, _, err := h.b().Store.DiskUsage()
	require.NoError(t, err)
	assert.InDelta(t, want, ratio, 0.01)
	assert.Equal(t, "0.0", tab["timerEnqueueTps"])
	// The commit log's extent: from the first segment (offset 0) to past
	// the ten records, as DefaultMessageStore.getMinPhyOffset/getMaxPhyOffset.
	assert.Equal(t, "0", tab["commitLogMinOffset"])
	recs, _, err := h.b().Store.ReadMessages("rtT", 0, 9, 1, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	last := int64(binary.BigEndian.Uint64(recs[0][28:])) + int64(len(recs[0]))
	assert.Equal(t, strconv.FormatInt(last, 10), tab["commitLogMaxOffset"])
}

// TestGetSystemTopicListFromBroker: 305 lists TopicValidator's fixed names
// and the broker's own system topics, not user topics.
func TestGetSystemTopicListFromBroker(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	h.createTopic("userT", 1)
	resp := call(t, c, codec.NewRequest(codec.RequestGetSystemTopicListFromBroker, 0, nil, nil))
	require.Equal(t, codec.Success, resp.Code)
	var body struct {
		TopicList []string `json:"topicList"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &body))
	assert.Contains(t, body.TopicList, "TBW102")
	assert.Contains(t, body.TopicList, "SCHEDULE_TOPIC_XXXX")
	assert.Contains(t, body.TopicList, h.b().Cfg.ClusterName)
	assert.Contains(t, body.TopicList, h.b().Cfg.BrokerName)
	assert.NotContains(t, body.TopicList, "userT")
}

// TestRuntimeTpsSampledWithoutRequests: the put rate of the last 10 s
// falls to 0 once SENDs stop, although no runtime-info request came in
// between (the broker samples its counters every second, as a Java
// broker's StoreStatsService); the 60 s figure still shows them.
func TestRuntimeTpsSampledWithoutRequests(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	h.createTopic("rtS", 1)
	sendN(t, c, "rtS", 0, 20, "m", sendOpts{})
	time.Sleep(11 * time.Second)
	resp := call(t, c, codec.NewRequest(codec.RequestGetBrokerRuntimeInfo, 0, nil, nil))
	require.Equal(t, codec.Success, resp.Code)
	kv, err := codec.DecodeKVTable(resp.Body)
	require.NoError(t, err)
	var p10, p60, p600 float64
	_, err = fmt.Sscan(kv.Table["putTps"], &p10, &p60, &p600)
	require.NoError(t, err, "putTps %q", kv.Table["putTps"])
	assert.Zero(t, p10, "putTps %q", kv.Table["putTps"])
	assert.Greater(t, p60, 0.0, "putTps %q", kv.Table["putTps"])
}
