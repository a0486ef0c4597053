package handler_test

// Client-side helpers of the POP tests: requests built as the Java client
// builds them, and POP responses parsed with the Java client's algorithm
// (MQClientAPIImpl.processPopResponse), checking the DEC-01 invariants on
// every SUCCESS.

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// call sends req and waits (bounded) for the response.
func call(t *testing.T, c *client.Conn, req *codec.Command) *codec.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	resp, err := c.Invoke(ctx, req)
	require.NoError(t, err)
	return resp
}

// sendOpts are the optional parts of a test SEND.
type sendOpts struct {
	tag        string
	props      map[string]string
	sysFlag    int32
	flag       int32
	reconsume  int32
	v1         bool // SEND_MESSAGE (10) with long names instead of SEND_MESSAGE_V2
	maxRetries int32
}

// sendReq builds a SEND_MESSAGE_V2 (or SEND_MESSAGE) request.
func sendReq(topic string, queueID int32, body []byte, o sendOpts) *codec.Command {
	props := map[string]string{"WAIT": "true"}
	for k, v := range o.props {
		props[k] = v
	}
	if o.tag != "" {
		props[codec.PropertyTags] = o.tag
	}
	ps, _ := codec.EncodeProperties(props)
	h := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: queueID, SysFlag: o.sysFlag, BornTimestamp: time.Now().UnixMilli(), Flag: o.flag, Properties: ps,
		ReconsumeTimes: o.reconsume, BrokerName: testBrokerName}
	if o.maxRetries > 0 {
		h.MaxReconsumeTimes, h.HasMaxReconsumeTimes = o.maxRetries, true
	}
	code := codec.RequestSendMessageV2
	if o.v1 {
		code = codec.RequestSendMessage
	}
	req := codec.NewRequest(code, 0, nil, body)
	if o.v1 {
		h.Encode(req)
	} else {
		h.EncodeV2(req)
	}
	return req
}

// send stores one message and returns the SEND response header.
func send(t *testing.T, c *client.Conn, topic string, queueID int32, body string, o sendOpts) codec.SendMessageResponseHeader {
	t.Helper()
	resp := call(t, c, sendReq(topic, queueID, []byte(body), o))
	require.Equal(t, codec.Success, resp.Code, "send: %s", resp.Remark)
	h, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	return h
}

// sendN stores n messages "<prefix>-<i>" into one queue.
func sendN(t *testing.T, c *client.Conn, topic string, queueID int32, n int, prefix string, o sendOpts) {
	t.Helper()
	for i := range n {
		send(t, c, topic, queueID, prefix+"-"+strconv.Itoa(i), o)
	}
}

// popArgs is a POP_MESSAGE request, Java client style.
type popArgs struct {
	group, topic  string
	queueID       int32
	max           int32
	invisible     int64
	poll          int64
	initMode      int32
	exp           string
	expType       string
	bornTime      int64 // 0: the broker uses its clock
	order         bool
	omitBornField bool
}

func (a popArgs) request() *codec.Command {
	h := codec.PopMessageRequestHeader{ConsumerGroup: a.group, Topic: a.topic, QueueID: a.queueID, MaxMsgNums: a.max,
		InvisibleTime: a.invisible, PollTime: a.poll, BornTime: a.bornTime, InitMode: a.initMode,
		ExpType: a.expType, Exp: a.exp, Order: a.order, BrokerName: testBrokerName}
	if h.ExpType == "" && h.Exp != "" {
		h.ExpType = "TAG"
	}
	req := codec.NewRequest(codec.RequestPopMessage, 0, nil, nil)
	h.Encode(req)
	if a.omitBornField {
		delete(req.ExtFields, "bornTime")
	}
	return req
}

// popped is one message of a POP answer with the receipt handle the Java
// client would derive for it.
type popped struct {
	m      codec.MessageExt
	handle codec.ExtraInfo
	raw    string // handle text
}

func (p popped) body() string { return string(p.m.Body) }

// oneInFlight is the common start of a scenario: a harness with topic "T"
// (one queue), one message "m" sent with o and popped by group "G" with
// invisibleTime invisibleMs. It returns the harness, its client and the
// POP's messages (exactly one).
func oneInFlight(t *testing.T, o sendOpts, invisibleMs int64) (*harness, *client.Conn, []popped) {
	t.Helper()
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "m", o)
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: invisibleMs})
	require.Len(t, ms, 1)
	return h, c, ms
}

// pop sends a POP and parses the answer; on SUCCESS the layout is checked
// like the Java client (DEC-01).
func pop(t *testing.T, c *client.Conn, a popArgs) (*codec.Command, []popped) {
	t.Helper()
	resp := call(t, c, a.request())
	if resp.Code != codec.Success {
		return resp, nil
	}
	return resp, parsePop(t, resp)
}

// parsePop decodes a SUCCESS POP answer with the Java client's algorithm
// and checks the invariants the client depends on: the four numeric header
// fields are present; startOffsetInfo and msgOffsetInfo parse (one entry per
// key); every message's key has an entry in both; msgOffsetInfo lists the
// key's offsets in body order; the POP_CK each message carries equals the
// handle derived from the strings.
func parsePop(t *testing.T, resp *codec.Command) []popped {
	t.Helper()
	hdr, err := codec.DecodePopMessageResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	require.NotEmpty(t, resp.Body, "SUCCESS without a body crashes the Java client")
	starts, err := codec.ParseStartOffsetInfo(hdr.StartOffsetInfo)
	require.NoError(t, err)
	lists, err := codec.ParseMsgOffsetInfo(hdr.MsgOffsetInfo)
	require.NoError(t, err)
	msgs, err := codec.DecodeMessages(resp.Body)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	order := map[codec.QueueKey][]int64{}
	var out []popped
	for _, m := range msgs {
		ck, ok := m.Property(codec.PropertyPopCK)
		require.True(t, ok, "message %d has no POP_CK", m.QueueOffset)
		ei, err := codec.ParseExtraInfo(ck)
		require.NoError(t, err)
		k := codec.QueueKey{Flag: ei.RetryFlag, QueueID: m.QueueID}
		order[k] = append(order[k], m.QueueOffset)
		start, ok := starts[k]
		require.True(t, ok, "no startOffsetInfo entry for %v", k)
		list, ok := lists[k]
		require.True(t, ok, "no msgOffsetInfo entry for %v", k)
		idx := slices.Index(order[k], m.QueueOffset)
		require.Less(t, idx, len(list))
		require.Equal(t, m.QueueOffset, list[idx], "msgOffsetInfo out of body order")
		want := codec.ExtraInfo{CkQueueOffset: start, PopTime: hdr.PopTime, InvisibleTime: hdr.InvisibleTime,
			ReviveQid: hdr.ReviveQid, RetryFlag: ei.RetryFlag, BrokerName: testBrokerName, QueueID: m.QueueID, QueueOffset: list[idx]}
		require.Equal(t, want, ei, "POP_CK differs from the handle derived from the header")
		require.LessOrEqual(t, start, m.QueueOffset)
		out = append(out, popped{m: m, handle: ei, raw: ck})
	}
	for k, l := range lists {
		require.Equal(t, order[k], l, "msgOffsetInfo entry %v does not match the body", k)
	}
	require.Len(t, starts, len(lists))
	return out
}

// popAll pops (without long polling) until n messages were received or the
// queue answers empty twice; it returns what it got.
func popAll(t *testing.T, c *client.Conn, a popArgs, n int) []popped {
	t.Helper()
	var got []popped
	empty := 0
	for len(got) < n && empty < 2 {
		resp, ms := pop(t, c, a)
		if resp.Code != codec.Success {
			require.Equal(t, codec.PollingTimeout, resp.Code, resp.Remark)
			empty++
			continue
		}
		got = append(got, ms...)
	}
	return got
}

// ackReq builds the ACK a Java client sends for p popped from topic by group.
func ackReq(group, topic string, p popped) *codec.Command {
	h := codec.AckMessageRequestHeader{ConsumerGroup: group, Topic: p.handle.RealTopic(topic, group),
		QueueID: p.handle.QueueID, Offset: p.handle.QueueOffset, ExtraInfo: p.raw, BrokerName: p.handle.BrokerName}
	req := codec.NewRequest(codec.RequestAckMessage, 0, nil, nil)
	h.Encode(req)
	return req
}

// ack acks p and returns the response code.
func ack(t *testing.T, c *client.Conn, group, topic string, p popped) int32 {
	t.Helper()
	return call(t, c, ackReq(group, topic, p)).Code
}

// changeReq builds a CHANGE_MESSAGE_INVISIBLETIME for p.
func changeReq(group, topic string, p popped, invisible int64) *codec.Command {
	h := codec.ChangeInvisibleTimeRequestHeader{ConsumerGroup: group, Topic: p.handle.RealTopic(topic, group),
		QueueID: p.handle.QueueID, Offset: p.handle.QueueOffset, ExtraInfo: p.raw, InvisibleTime: invisible,
		BrokerName: p.handle.BrokerName}
	req := codec.NewRequest(codec.RequestChangeMessageInvisibleTime, 0, nil, nil)
	h.Encode(req)
	return req
}

// change changes p's invisible time; on SUCCESS it returns p with the new
// handle the Java client builds from the response header.
func change(t *testing.T, c *client.Conn, group, topic string, p popped, invisible int64) (*codec.Command, popped) {
	t.Helper()
	resp := call(t, c, changeReq(group, topic, p, invisible))
	if resp.Code != codec.Success {
		return resp, p
	}
	h, err := codec.DecodeChangeInvisibleTimeResponseHeader(resp.ExtFields)
	require.NoError(t, err)
	np := p
	np.handle.CkQueueOffset = p.handle.QueueOffset
	np.handle.PopTime, np.handle.InvisibleTime, np.handle.ReviveQid = h.PopTime, h.InvisibleTime, h.ReviveQid
	np.raw = np.handle.String()
	ext, _ := resp.Ext("extraInfo")
	require.Equal(t, np.raw, ext, "extraInfo ext field differs from the client-built handle")
	return resp, np
}

// bodies returns the bodies of ms in order.
func bodies(ms []popped) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.body()
	}
	return out
}

// committedOffset returns the group's committed consume offset of a queue
// (-1 when none), read from the store as QUERY_CONSUMER_OFFSET would.
func committedOffset(h *harness, group, topic string, queueID int32) int64 {
	off, ok := h.b().Store.ConsumerOffset(group, topic, queueID)
	if !ok {
		return -1
	}
	return off
}

// sendBatch stores messages "<prefix>-<i>" for i in [from, to) with tag
// through SEND_BATCH_MESSAGE, up to 200 per request.
func sendBatch(t *testing.T, c *client.Conn, topic string, queueID int32, prefix string, from, to int, tag string) {
	t.Helper()
	props := ""
	if tag != "" {
		props, _ = codec.EncodeProperties(map[string]string{codec.PropertyTags: tag})
	}
	for lo := from; lo < to; lo += 200 {
		var body []byte
		for i := lo; i < min(lo+200, to); i++ {
			var err error
			body, err = codec.AppendBatchEntry(body, &codec.Message{Body: []byte(prefix + "-" + strconv.Itoa(i)), Properties: props})
			require.NoError(t, err)
		}
		h := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
			QueueID: queueID, BornTimestamp: time.Now().UnixMilli(), Batch: true}
		req := codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, body)
		h.EncodeV2(req)
		resp := call(t, c, req)
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
	}
}

// batchAckReq builds the BATCH_ACK_MESSAGE a Java client sends for ms
// (MQClientAPIImpl.batchAckMessageAsync): one entry per
// (retryFlag, queueId, ckQueueOffset, popTime), bits relative to
// ckQueueOffset, t = the original topic.
func batchAckReq(t *testing.T, group, topic string, ms []popped) *codec.Command {
	t.Helper()
	type key struct {
		flag    codec.RetryFlag
		q       int32
		so, pop int64
	}
	idx := map[key]int{}
	body := codec.BatchAckBody{BrokerName: testBrokerName}
	for _, m := range ms {
		e := m.handle
		k := key{e.RetryFlag, e.QueueID, e.CkQueueOffset, e.PopTime}
		i, ok := idx[k]
		if !ok {
			i = len(body.Acks)
			idx[k] = i
			body.Acks = append(body.Acks, codec.BatchAck{ConsumerGroup: group, Topic: topic, RetryFlag: e.RetryFlag,
				StartOffset: e.CkQueueOffset, QueueID: e.QueueID, ReviveQueueID: e.ReviveQid, PopTime: e.PopTime,
				InvisibleTime: e.InvisibleTime})
		}
		require.NoError(t, body.Acks[i].SetAcked(e.QueueOffset))
	}
	return codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, codec.AppendBatchAckBody(nil, &body))
}
