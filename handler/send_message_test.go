package handler_test

// SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320).

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// TestSendMessage_StoresAndAnswers: both header spellings store the
// message; the answer carries msgId (offsetMsgId of the record), queueId and
// queueOffset; POP_CK is stripped, UNIQ_KEY and CLUSTER are added.
func TestSendMessage_StoresAndAnswers(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	r1 := send(t, c, "T", 1, "v2", sendOpts{props: map[string]string{codec.PropertyPopCK: "0 1 2 0 0 b 0 0"}})
	r2 := send(t, c, "T", 1, "v1", sendOpts{v1: true, flag: 5})
	require.EqualValues(t, 1, r1.QueueID)
	require.EqualValues(t, 0, r1.QueueOffset)
	require.EqualValues(t, 1, r2.QueueOffset)
	recs, _, err := h.b().Store.ReadMessages("T", 1, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	m, _, err := codec.DecodeMessage(recs[0])
	require.NoError(t, err)
	require.Equal(t, r1.MsgID, m.OffsetMsgID())
	_, hasCK := m.Property(codec.PropertyPopCK)
	require.False(t, hasCK, "POP_CK must be stripped")
	uniq, ok := m.Property(codec.PropertyUniqClientMessageIDKeyIdx)
	require.True(t, ok)
	require.Len(t, uniq, 32)
	cl, _ := m.Property(codec.PropertyCluster)
	require.Equal(t, "ClusterPop", cl)
	require.Equal(t, "127.0.0.1", m.StoreHost.Addr().String())
	m2, _, _ := codec.DecodeMessage(recs[1])
	require.EqualValues(t, 5, m2.Flag)

	// queueId -1: the broker picks a queue.
	r3 := send(t, c, "T", -1, "any", sendOpts{})
	require.Contains(t, []int32{0, 1}, r3.QueueID)
}

// TestSendMessage_Refusals covers the codes of the send path.
func TestSendMessage_Refusals(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.AutoCreateTopic = false; c.MaxMessageSize = 1024 })
	h.createTopic("T", 2)
	c := h.dial()
	code := func(topic string, q int32, body string, o sendOpts) int32 {
		return call(t, c, sendReq(topic, q, []byte(body), o)).Code
	}
	require.Equal(t, codec.TopicNotExist, code("NOPE", 0, "x", sendOpts{}))
	require.Equal(t, codec.InvalidParameter, code("T", 2, "x", sendOpts{}))
	require.Equal(t, codec.MessageIllegal, code("T", 0, strings.Repeat("x", 2000), sendOpts{}))
	require.Equal(t, codec.NoPermission, code("RMQ_SYS_TRANS_HALF_TOPIC", 0, "x", sendOpts{props: map[string]string{codec.PropertyTransactionPrepared: "true"}}))
	// Names: INVALID_PARAMETER (29) with TopicValidator.validateTopic's
	// remark, as a 5.5.1 broker answers rocketmq-client-go v2.1.2.
	for topic, remark := range map[string]string{
		"bad topic!":                         "The specified topic: bad topic!, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
		strings.Repeat("L", 128):             "The specified topic: " + strings.Repeat("L", 128) + ", is longer than topic max length: 127",
		"%RETRY%" + strings.Repeat("g", 249): "The specified topic is DLQ or Retry topic: %RETRY%" + strings.Repeat("g", 249) + ", and it's longer than topic max length: 255",
	} {
		r := call(t, c, sendReq(topic, 0, []byte("x"), sendOpts{}))
		require.Equal(t, codec.InvalidParameter, r.Code, topic)
		require.Equal(t, remark, r.Remark)
	}
	req := sendReq("T", 0, []byte("x"), sendOpts{})
	delete(req.ExtFields, "b")
	r := call(t, c, req)
	require.Equal(t, codec.SystemError, r.Code)
	require.Contains(t, r.Remark, "<b>")
}

// A retry SEND for a group that holds a live queue lock (an orderly PULL
// consumer) goes to the DLQ whatever its reconsumeTimes, as
// handleRetryAndDLQ's isLockAllExpired check: rocketmq-client 4.9.8's
// orderly consumer resends with reconsumeTimes equal to the limit and
// counts on it. Without a lock the same SEND is a retry.
func TestSendMessage_RetryOfLockedGroupGoesToDLQ(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TO", 4)
	c := h.dial()
	send(t, c, "%RETRY%GO", 0, "retry", sendOpts{reconsume: 2, maxRetries: 2})
	require.EqualValues(t, 1, h.b().Store.MaxOffset("%RETRY%GO", 0), "no lock: a retry")
	require.Equal(t, []int32{0, 1}, lockedQueues(t, c, "GO", "client-1", "TO", 0, 1))
	send(t, c, "%RETRY%GO", 0, "poison", sendOpts{reconsume: 2, maxRetries: 2})
	require.EqualValues(t, 1, h.b().Store.MaxOffset("%DLQ%GO", 0), "live lock: straight to the DLQ")
	require.EqualValues(t, 1, h.b().Store.MaxOffset("%RETRY%GO", 0))
	require.Equal(t, "poison", string(storedMessages(t, h, "%DLQ%GO", 0)[0].Body))
}

// TestSendMessage_RetryTopicOverLimitGoesToDLQ: a send to %RETRY%<group>
// whose reconsumeTimes exceeds maxReconsumeTimes lands in %DLQ%<group>.
func TestSendMessage_RetryTopicOverLimitGoesToDLQ(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	// An orderly consumer's resend carries DELAY 3 + reconsumeTimes; the
	// DLQ copy's reads -1 (handleRetryAndDLQ) and it is stored at once.
	r := send(t, c, "%RETRY%G", 0, "again", sendOpts{reconsume: 3, maxRetries: 2, props: map[string]string{codec.PropertyDelayTimeLevel: "6"}})
	require.EqualValues(t, 0, r.QueueOffset)
	require.EqualValues(t, 1, h.b().Store.MaxOffset("%DLQ%G", 0))
	require.Zero(t, h.b().Store.MaxOffset("%RETRY%G", 0))
	m := storedMessages(t, h, "%DLQ%G", 0)[0]
	delay, _ := m.Property(codec.PropertyDelayTimeLevel)
	require.Equal(t, "-1", delay, "DELAY of the DLQ copy")
	send(t, c, "%RETRY%G", 0, "retry", sendOpts{reconsume: 1, maxRetries: 2})
	require.EqualValues(t, 1, h.b().Store.MaxOffset("%RETRY%G", 0))
}

// TestSendBatchMessage: each entry becomes a record with consecutive
// offsets; the answer lists one offsetMsgId per entry; retry topics are
// refused.
func TestSendBatchMessage(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendBatch(t, c, "T", 0, "b", 0, 5, "TG")
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000, exp: "TG"})
	require.Equal(t, []string{"b-0", "b-1", "b-2", "b-3", "b-4"}, bodies(ms))

	var body []byte
	body, _ = codec.AppendBatchEntry(body, &codec.Message{Body: []byte("x")})
	body, _ = codec.AppendBatchEntry(body, &codec.Message{Body: []byte("y")})
	hdr := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "T", QueueID: 0, Batch: true}
	req := codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
	hdr.EncodeV2(req)
	resp := call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	rh, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	require.EqualValues(t, 5, rh.QueueOffset)
	require.Len(t, strings.Split(rh.MsgID, ","), 2)
	require.Empty(t, rh.TransactionID, "a batch without its own UNIQ_KEY")

	// The Java client's batch() gives the batch its own UNIQ_KEY; a Java
	// broker answers it as transactionId (SendResult.getTransactionId).
	hdr.Properties = "UNIQ_KEY\x01BATCHID0001\x02"
	req = codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
	hdr.EncodeV2(req)
	resp = call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	rh, err = codec.DecodeSendMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	require.Equal(t, "BATCHID0001", rh.TransactionID)
	hdr.Properties = ""

	hdr.Topic = "%RETRY%G"
	req = codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
	hdr.EncodeV2(req)
	require.Equal(t, codec.MessageIllegal, call(t, c, req).Code)
	hdr.Topic = "T"
	req = codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, []byte{0, 0, 0, 9})
	hdr.EncodeV2(req)
	require.Equal(t, codec.MessageIllegal, call(t, c, req).Code)
}

// TBW102, the auto-create template, takes SENDs while it exists (auto-create
// on), as a Java broker stores them in its 8 queues; SCHEDULE_TOPIC_XXXX
// stays forbidden.
func TestSendToAutoCreateTemplateTopic(t *testing.T) {
	h := startHarness(t, nil)
	c := h.dial()
	r := send(t, c, codec.AutoCreateTopicKey, 0, "to the template", sendOpts{})
	require.EqualValues(t, 0, r.QueueOffset)
	resp := call(t, c, sendReq("SCHEDULE_TOPIC_XXXX", 0, []byte("x"), sendOpts{}))
	require.Equal(t, codec.NoPermission, resp.Code)
}

// TestSendInnerBatchFlagRefused: sysFlag 0x80 (INNER_BATCH_FLAG, also in
// 0xffff) and the INNER_NUM property without it are MESSAGE_ILLEGAL (13),
// for single and batch SENDs, as HookUtils.checkInnerBatch on a topic
// without a batch consume queue; nothing is stored.
func TestSendInnerBatchFlagRefused(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	for _, o := range []sendOpts{{sysFlag: 0x80}, {sysFlag: 0xffff}, {props: map[string]string{codec.PropertyInnerNum: "2"}}} {
		resp := call(t, c, sendReq("T", 0, []byte("x"), o))
		require.Equal(t, codec.MessageIllegal, resp.Code, "%+v: %s", o, resp.Remark)
		require.Contains(t, resp.Remark, "INNER_BATCH_FLAG")
	}
	var body []byte
	body, _ = codec.AppendBatchEntry(body, &codec.Message{Body: []byte("x")})
	hdr := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "T", QueueID: 0, Batch: true, SysFlag: 0x80}
	req := codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
	hdr.EncodeV2(req)
	resp := call(t, c, req)
	require.Equal(t, codec.MessageIllegal, resp.Code, resp.Remark)
	require.Zero(t, h.b().Store.MaxOffset("T", 0), "nothing stored")

	ok := send(t, c, "T", 0, "y", sendOpts{sysFlag: 0x1 << 8}) // a compression type alone is stored as given
	require.Zero(t, ok.QueueOffset)
}
