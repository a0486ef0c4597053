package handler_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// d2Send produces one message through SEND_MESSAGE_V2 and returns the
// response header.
func d2Send(t *testing.T, c *client.Conn, topic string, queueID int32, body string) codec.SendMessageResponseHeader {
	t.Helper()
	req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte(body))
	codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: queueID, BornTimestamp: time.Now().UnixMilli(),
		Properties: "UNIQ_KEY\x01U" + body + "\x02TAGS\x01tagA\x02"}.EncodeV2(req)
	resp := d2Invoke(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	h, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	return h
}

func offsetOf(t *testing.T, resp *codec.Command) int64 {
	t.Helper()
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	h, err := codec.DecodeOffsetResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	return h.Offset
}

func TestConsumerOffsetsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	st := d2Start(t, d2Config(dir))
	bc := dialAddr(t, st.BrokerAddr())
	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, map[string]string{
		"topic": "TopicO", "readQueueNums": "2", "writeQueueNums": "2", "perm": "6"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	q := func(queue int, zero string) map[string]string {
		ext := map[string]string{"consumerGroup": "GO", "topic": "TopicO", "queueId": strconv.Itoa(queue)}
		if zero != "" {
			ext["setZeroIfNotFound"] = zero
		}
		return ext
	}

	// Nothing committed: an empty queue answers QUERY_NOT_FOUND (Java finds
	// no message at offset 0; a 4.9.8 lite pull consumer's committed() reads
	// -1); a never-trimmed queue holding messages answers 0 (as a Java
	// broker whose first message is still in memory), unless the client
	// forbids it.
	assert.Equal(t, codec.QueryNotFound, d2Call(t, bc, codec.RequestQueryConsumerOffset, q(0, ""), nil).Code)
	d2Send(t, bc, "TopicO", 0, "first")
	assert.Equal(t, int64(0), offsetOf(t, d2Call(t, bc, codec.RequestQueryConsumerOffset, q(0, ""), nil)))
	resp = d2Call(t, bc, codec.RequestQueryConsumerOffset, q(0, "false"), nil)
	assert.Equal(t, codec.QueryNotFound, resp.Code)

	upd := func(queue int, off int64) *codec.Command {
		ext := q(queue, "")
		ext["commitOffset"] = strconv.FormatInt(off, 10)
		return d2Call(t, bc, codec.RequestUpdateConsumerOffset, ext, nil)
	}
	// The group must exist first (ConsumerManageProcessor's
	// containsSubscriptionGroup), also with auto-creation on.
	requireCode(t, upd(0, 42), codec.SubscriptionGroupNotExist, "Group GO not exist!")
	require.Equal(t, codec.Success, putGroup(t, bc, codec.NewSubscriptionGroupConfig("GO")).Code)
	require.Equal(t, codec.Success, upd(0, 42).Code)
	require.Equal(t, codec.Success, upd(1, 7).Code)
	assert.Equal(t, int64(42), offsetOf(t, d2Call(t, bc, codec.RequestQueryConsumerOffset, q(0, "false"), nil)))

	// Invalid updates.
	assert.Equal(t, codec.InvalidParameter, upd(2, 1).Code, "queueId beyond the topic's queues")
	assert.Equal(t, codec.InvalidParameter, upd(0, -1).Code)
	ext := map[string]string{"consumerGroup": "GO", "topic": "NoTopic", "queueId": "0", "commitOffset": "1"}
	assert.Equal(t, codec.TopicNotExist, d2Call(t, bc, codec.RequestUpdateConsumerOffset, ext, nil).Code)
	resp = d2Call(t, bc, codec.RequestUpdateConsumerOffset, map[string]string{"consumerGroup": "GO", "topic": "TopicO", "queueId": "0"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<commitOffset>")

	// A oneway update (as the Java client sends every 5 s) is applied too.
	ow := codec.NewRequest(codec.RequestUpdateConsumerOffset, 0, map[string]string{
		"consumerGroup": "GO", "topic": "TopicO", "queueId": "1", "commitOffset": "9"}, nil)
	require.NoError(t, bc.InvokeOneway(ow))
	eventually(t, func() bool {
		resp := d2Call(t, bc, codec.RequestQueryConsumerOffset, q(1, "false"), nil)
		return resp.Code == codec.Success && resp.ExtFields["offset"] == "9"
	}, "oneway offset update not applied")

	d2Stop(t, st)
	st2 := d2Start(t, d2Config(dir))
	bc2 := dialAddr(t, st2.BrokerAddr())
	assert.Equal(t, int64(42), offsetOf(t, d2Call(t, bc2, codec.RequestQueryConsumerOffset, q(0, "false"), nil)))
	assert.Equal(t, int64(9), offsetOf(t, d2Call(t, bc2, codec.RequestQueryConsumerOffset, q(1, "false"), nil)))
}

func TestQueueOffsetsAndViewMessage(t *testing.T) {
	st := d2Start(t, d2Config(t.TempDir()))
	bc := dialAddr(t, st.BrokerAddr())
	resp := d2Call(t, bc, codec.RequestUpdateAndCreateTopic, map[string]string{
		"topic": "TopicV", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6"}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	qh := map[string]string{"topic": "TopicV", "queueId": "0"}

	assert.Equal(t, int64(0), offsetOf(t, d2Call(t, bc, codec.RequestGetMaxOffset, qh, nil)))
	resp = d2Call(t, bc, codec.RequestGetEarliestMsgStoreTime, qh, nil)
	require.Equal(t, codec.Success, resp.Code)
	assert.Equal(t, "-1", resp.ExtFields["timestamp"])

	before := time.Now().UnixMilli()
	var sent []codec.SendMessageResponseHeader
	for i := 0; i < 3; i++ {
		sent = append(sent, d2Send(t, bc, "TopicV", 0, "m"+strconv.Itoa(i)))
	}
	after := time.Now().UnixMilli()
	assert.Equal(t, int64(3), offsetOf(t, d2Call(t, bc, codec.RequestGetMaxOffset, qh, nil)))
	assert.Equal(t, int64(0), offsetOf(t, d2Call(t, bc, codec.RequestGetMinOffset, qh, nil)))

	search := func(ts int64, boundary string) int64 {
		ext := map[string]string{"topic": "TopicV", "queueId": "0", "timestamp": strconv.FormatInt(ts, 10)}
		if boundary != "" {
			ext["boundaryType"] = boundary
		}
		return offsetOf(t, d2Call(t, bc, codec.RequestSearchOffsetByTimestamp, ext, nil))
	}
	assert.Equal(t, int64(0), search(before-1000, ""), "every message is newer")
	assert.Equal(t, int64(3), search(after+1000, ""), "every message is older: max offset")
	assert.Equal(t, int64(2), search(after+1000, "upper"), "UPPER: the last message not newer")
	assert.Equal(t, int64(0), search(before-1000, "UPPER"))

	resp = d2Call(t, bc, codec.RequestGetEarliestMsgStoreTime, qh, nil)
	ts, err := strconv.ParseInt(resp.ExtFields["timestamp"], 10, 64)
	require.NoError(t, err)
	assert.True(t, ts >= before-1 && ts <= after+1, "earliest store time %d outside [%d, %d]", ts, before, after)

	// VIEW_MESSAGE_BY_ID with the physical offset inside the SEND msgId.
	for i, s := range sent {
		_, phys, err := codec.DecodeOffsetMsgID(s.MsgID)
		require.NoError(t, err)
		resp = d2Call(t, bc, codec.RequestViewMessageByID, map[string]string{"offset": strconv.FormatInt(phys, 10)}, nil)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		m, _, err := codec.DecodeMessage(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "m"+strconv.Itoa(i), string(m.Body))
		assert.Equal(t, "TopicV", m.Topic)
		assert.Equal(t, s.QueueOffset, m.QueueOffset)
		assert.Equal(t, phys, m.PhysicalOffset)
		assert.Equal(t, s.MsgID, m.OffsetMsgID())
	}
	_, phys, _ := codec.DecodeOffsetMsgID(sent[0].MsgID)
	resp = d2Call(t, bc, codec.RequestViewMessageByID, map[string]string{"offset": strconv.FormatInt(phys, 10), "topic": "OtherTopic"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	resp = d2Call(t, bc, codec.RequestViewMessageByID, map[string]string{"offset": "987654321"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "can not find message by the offset, 987654321", resp.Remark)
	resp = d2Call(t, bc, codec.RequestViewMessageByID, map[string]string{"offset": "x"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "<offset>")
}

// A group with nothing committed on a queue whose first message is
// followed by more commit log than the in-memory window (Java's "no
// longer in memory") gets QUERY_NOT_FOUND, so a push consumer that starts
// from its last offset starts at the end instead of reading the whole
// untrimmed backlog; a hot queue answers 0 whatever the age of its first
// message. POP's initMode MAX follows the same rule.
func TestQueryConsumerOffset_ColdBacklogNotFound(t *testing.T) {
	h := startHarness(t, nil)
	h.b().Svc.Settings.InMemoryBytes = 8 << 10
	h.createTopic("TQ", 2)
	c := h.dial()
	send(t, c, "TQ", 0, "old", sendOpts{})
	query := func(q int32) *codec.Command {
		return call(t, c, codec.NewRequest(codec.RequestQueryConsumerOffset, 0, map[string]string{
			"consumerGroup": "GQ", "topic": "TQ", "queueId": strconv.Itoa(int(q))}, nil))
	}
	h.advance(time.Hour) // age alone changes nothing
	resp := query(0)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, int64(0), offsetOf(t, resp), "hot queue")
	require.Equal(t, codec.QueryNotFound, query(1).Code, "empty queue")

	sendN(t, c, "TQ", 1, 20, strings.Repeat("x", 512), sendOpts{}) // > 8 KiB after "old"
	resp = query(0)
	require.Equal(t, codec.QueryNotFound, resp.Code, "first message further behind the commit log's end than the window")
	require.Equal(t, broker.QueryNotFoundRemark, resp.Remark)
}
