package handler_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

func TestAllocateAvg(t *testing.T) {
	// 8 queues over 3 consumers: 3, 3, 2 (the first queues%consumers get one more).
	assert.Equal(t, []int{0, 1, 2}, broker.AllocateAvg(8, 3, 0))
	assert.Equal(t, []int{3, 4, 5}, broker.AllocateAvg(8, 3, 1))
	assert.Equal(t, []int{6, 7}, broker.AllocateAvg(8, 3, 2))
	// More consumers than queues: one each, the rest none.
	assert.Equal(t, []int{1}, broker.AllocateAvg(2, 3, 1))
	assert.Empty(t, broker.AllocateAvg(2, 3, 2))
	assert.Nil(t, broker.AllocateAvg(4, 2, 5))
	assert.Equal(t, []int{1, 4, 7}, broker.AllocateAvgByCircle(8, 3, 1))
}

func queryAssignment(t *testing.T, c *client.Conn, topic, group, client, strategy string) *codec.QueryAssignmentResponseBody {
	t.Helper()
	body, _ := json.Marshal(codec.QueryAssignmentRequestBody{ClientID: client, ConsumerGroup: group,
		MessageModel: codec.MessageModelCluster, StrategyName: strategy, Topic: topic})
	resp := d2Call(t, c, codec.RequestQueryAssignment, nil, body)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	out, err := codec.DecodeQueryAssignmentResponseBody(resp.Body)
	require.NoError(t, err)
	return &out
}

func queueIDs(a *codec.QueryAssignmentResponseBody, mode string) []int32 {
	var ids []int32
	for _, x := range a.MessageQueueAssignments {
		if x.Mode == mode {
			ids = append(ids, x.MessageQueue.QueueID)
		}
	}
	return ids
}

func setMode(t *testing.T, c *client.Conn, topic, group, mode string, share int32) *codec.Command {
	t.Helper()
	body, _ := json.Marshal(codec.SetMessageRequestModeRequestBody{ConsumerGroup: group, Mode: mode, PopShareQueueNum: share, Topic: topic})
	return d2Call(t, c, codec.RequestSetMessageRequestMode, nil, body)
}

func TestQueryAssignment(t *testing.T) {
	dir := t.TempDir()
	st := d2Start(t, d2Config(dir))
	bc := dialAddr(t, st.BrokerAddr())
	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, map[string]string{
		"topic": "TopicQ", "readQueueNums": "4", "writeQueueNums": "4", "perm": "6"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cA", "GQ"))
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cB", "GQ"))

	// Default: POP, every queue (-1), with the raw JSON the Java client reads.
	a := queryAssignment(t, bc, "TopicQ", "GQ", "cA", "AVG")
	require.Len(t, a.MessageQueueAssignments, 1)
	assert.Equal(t, codec.MessageQueueAssignment{Mode: "POP",
		MessageQueue: codec.MessageQueue{BrokerName: "broker-d2", QueueID: -1, Topic: "TopicQ"}}, a.MessageQueueAssignments[0])

	// The retry topic: an empty list, not null and not PULL.
	body, _ := json.Marshal(codec.QueryAssignmentRequestBody{ClientID: "cA", ConsumerGroup: "GQ",
		MessageModel: "CLUSTERING", StrategyName: "AVG", Topic: "%RETRY%GQ"})
	resp = d2Call(t, bc, codec.RequestQueryAssignment, nil, body)
	require.Equal(t, codec.Success, resp.Code)
	assert.JSONEq(t, `{"messageQueueAssignments":[]}`, string(resp.Body))

	// Unknown topic: no list ("keep current"), as a Java broker.
	a = queryAssignment(t, bc, "NoSuchTopic", "GQ", "cA", "AVG")
	assert.Nil(t, a.MessageQueueAssignments)

	// PULL mode: AVG share of real queues.
	require.Equal(t, codec.Success, setMode(t, bc, "TopicQ", "GQ", "PULL", 0).Code)
	assert.Equal(t, []int32{0, 1}, queueIDs(queryAssignment(t, bc, "TopicQ", "GQ", "cA", "AVG"), "PULL"))
	assert.Equal(t, []int32{2, 3}, queueIDs(queryAssignment(t, bc, "TopicQ", "GQ", "cB", "AVG"), "PULL"))
	assert.Equal(t, []int32{1, 3}, queueIDs(queryAssignment(t, bc, "TopicQ", "GQ", "cB", "AVG_BY_CIRCLE"), "PULL"))
	assert.Nil(t, queryAssignment(t, bc, "TopicQ", "GQ", "cB", "CONSISTENT_HASH").MessageQueueAssignments)

	// POP with popShareQueueNum 1 and three consumers: own share plus the next one's.
	d2Call(t, bc, codec.RequestHeartBeat, nil, heartbeatBody("cC", "GQ"))
	require.Equal(t, codec.Success, setMode(t, bc, "TopicQ", "GQ", "POP", 1).Code)
	assert.ElementsMatch(t, []int32{0, 1, 2}, queueIDs(queryAssignment(t, bc, "TopicQ", "GQ", "cA", "AVG"), "POP"))
	assert.ElementsMatch(t, []int32{3, 0, 1}, queueIDs(queryAssignment(t, bc, "TopicQ", "GQ", "cC", "AVG"), "POP"))

	// Mode changes are refused for retry topics and bad modes.
	assert.Equal(t, codec.NoPermission, setMode(t, bc, "%RETRY%GQ", "GQ", "POP", 0).Code)
	assert.Equal(t, codec.InvalidParameter, setMode(t, bc, "TopicQ", "GQ", "PUSH", 0).Code)

	// The stored mode survives a restart.
	d2Stop(t, st)
	st2 := d2Start(t, d2Config(dir))
	bc2 := dialAddr(t, st2.BrokerAddr())
	d2Call(t, bc2, codec.RequestHeartBeat, nil, heartbeatBody("cA", "GQ"))
	d2Call(t, bc2, codec.RequestHeartBeat, nil, heartbeatBody("cB", "GQ"))
	d2Call(t, bc2, codec.RequestHeartBeat, nil, heartbeatBody("cC", "GQ"))
	assert.ElementsMatch(t, []int32{0, 1, 2}, queueIDs(queryAssignment(t, bc2, "TopicQ", "GQ", "cA", "AVG"), "POP"))
}
