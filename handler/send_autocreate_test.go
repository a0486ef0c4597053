package handler_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// A topic a SEND auto-creates gets min(the producer's
// defaultTopicQueueNums, --default-topic-queue-nums) queues, as
// TopicConfigManager.createTopicInSendMessageMethod does: a Java producer
// publishes to min(its defaultTopicQueueNums, TBW102's queues) queues until
// it reads the new topic's route, and a different count there would move
// its keys to other queues (found: a key-ordered producer's order id moved
// from queue 1 to queue 5 at its first route refresh). A header without
// the field keeps the broker's count.
func TestSend_AutoCreatedQueueCount(t *testing.T) {
	h := startHarness(t, nil) // --default-topic-queue-nums 8 (the test config's default)
	c := h.dial()
	for i, tc := range []struct{ client, want int32 }{{4, 4}, {16, 8}, {0, 8}, {1, 1}} {
		topic := "Auto" + strconv.Itoa(i)
		hd := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: tc.client, QueueID: 0, BornTimestamp: time.Now().UnixMilli()}
		req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte("x"))
		hd.EncodeV2(req)
		resp := call(t, c, req)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		tc2, ok := topicConfig(t, c, topic)
		require.True(t, ok, topic)
		require.Equal(t, tc.want, tc2.WriteQueueNums, "producer asked for %d", tc.client)
		require.Equal(t, tc.want, tc2.ReadQueueNums)
	}
}

// A SEND to a %RETRY% or %DLQ% topic that does not exist creates it as
// any other name when topics are auto-created (AbstractSendMessageProcessor
// .msgCheck tries createTopicInSendMessageMethod first), so queue 1 of a
// 4-queue route is accepted; rocketmq-client-go v2.1.2 was refused
// INVALID_PARAMETER because popshim had made a 1-queue topic. Without
// auto-creation a %RETRY% name still gets 1 queue (msgCheck's fallback)
// and a %DLQ% name does not exist.
func TestSend_AutoCreatedRetryAndDLQTopics(t *testing.T) {
	send := func(c *client.Conn, topic string, queue int32) *codec.Command {
		hd := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: queue, BornTimestamp: time.Now().UnixMilli()}
		req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte("x"))
		hd.EncodeV2(req)
		return call(t, c, req)
	}
	h := startHarness(t, nil)
	c := h.dial()
	for _, topic := range []string{"%RETRY%abc", "%DLQ%abc"} {
		resp := send(c, topic, 1)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		tc, ok := topicConfig(t, c, topic)
		require.True(t, ok, topic)
		require.Equal(t, int32(4), tc.WriteQueueNums, topic)
	}

	h2 := startHarness(t, func(c *conf.Config) { c.AutoCreateTopic = false })
	c2 := h2.dial()
	require.Equal(t, codec.Success, send(c2, "%RETRY%abc", 0).Code)
	tc, ok := topicConfig(t, c2, "%RETRY%abc")
	require.True(t, ok)
	require.Equal(t, int32(1), tc.WriteQueueNums)
	require.Equal(t, codec.InvalidParameter, send(c2, "%RETRY%abc", 1).Code)
	require.Equal(t, codec.TopicNotExist, send(c2, "%DLQ%abc", 0).Code)
}
