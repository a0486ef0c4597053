package handler_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
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
