package handler_test

// System topics, as the Java broker's TopicValidator:
// producers may not write SCHEDULE_TOPIC_XXXX and the transaction topics;
// admin requests may not create any system topic.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestSEND_SystemTopicsRefused: SEND and SEND_BATCH to the
// isNotAllowedSendTopic names answer NO_PERMISSION (16) with Java's remark
// and store nothing; RMQ_SYS_TRACE_TOPIC, where clients send traces, stays
// writable; UPDATE_AND_CREATE_TOPIC of SCHEDULE_TOPIC_XXXX,
// RMQ_SYS_TRACE_TOPIC and the other isSystemTopic names answers
// INVALID_PARAMETER (29) "The topic[...] is conflict with system topic.".
func TestSEND_SystemTopicsRefused(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	for _, topic := range []string{"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
		"TRANS_CHECK_MAX_TIME_TOPIC", "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT"} {
		r := call(t, c, sendReq(topic, 0, []byte("x"), sendOpts{}))
		require.Equal(t, codec.NoPermission, r.Code, "SEND to %s: %s", topic, r.Remark)
		require.Equal(t, "Sending message to topic["+topic+"] is forbidden.", r.Remark)

		h := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, Batch: true}
		body, err := codec.AppendBatchEntry(nil, &codec.Message{Body: []byte("x")})
		require.NoError(t, err)
		req := codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
		h.EncodeV2(req)
		r = call(t, c, req)
		require.Equal(t, codec.NoPermission, r.Code, "SEND_BATCH to %s: %s", topic, r.Remark)
	}
	require.EqualValues(t, 0, h.b().Store.MaxOffset("SCHEDULE_TOPIC_XXXX", 0))
	_, created := h.b().Topics.Get("SCHEDULE_TOPIC_XXXX")
	require.False(t, created, "a refused SEND auto-created the topic")

	r := call(t, c, sendReq("RMQ_SYS_TRACE_TOPIC", -1, []byte("trace"), sendOpts{}))
	require.Equal(t, codec.Success, r.Code, "traces go to RMQ_SYS_TRACE_TOPIC: %s", r.Remark)

	for _, topic := range []string{"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRACE_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC",
		"BenchmarkTest", "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT", "CHECKPOINT_TOPIC", "TRANS_CHECK_MAX_TIME_TOPIC",
		"RMQ_SYS_TRANS_OP_HALF_TOPIC", "TBW102", "rmq_sys_anything"} {
		r := d2Call(t, c, codec.RequestUpdateAndCreateTopic, createTopicReq(topic, "4", "4", "6", ""), nil)
		require.Equal(t, codec.InvalidParameter, r.Code, "create %s: %s", topic, r.Remark)
		require.Equal(t, "The topic["+topic+"] is conflict with system topic.", r.Remark)
	}
	r = d2Call(t, c, codec.RequestUpdateAndCreateTopic, createTopicReq("Ordinary", "4", "4", "6", ""), nil)
	require.Equal(t, codec.Success, r.Code, r.Remark)
}
