package handler_test

// PULL_MESSAGE (11) and CONSUMER_SEND_MSG_BACK (36).

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// pullReq is a PULL carrying its subscription (sysFlag 0x4, as the lite
// pull consumer and admin tools send): sub "" is every tag.
func pullReq(group, topic string, q int32, offset int64, max int32, suspend int64, sub string) *codec.Command {
	if sub == "" {
		sub = "*"
	}
	return pullCmd(group, topic, q, offset, max, suspend, codec.PullSysFlagSubscription, sub)
}

// pullReqRegistered is a PULL without its subscription, as push consumers
// send it: the broker filters with what the group's HEART_BEAT registered.
func pullReqRegistered(group, topic string, q int32, offset int64, max int32, suspend int64) *codec.Command {
	return pullCmd(group, topic, q, offset, max, suspend, 0, "")
}

// pullCmd builds a PULL with sysFlag flag, plus the suspend bit when
// suspend (ms) is positive.
func pullCmd(group, topic string, q int32, offset int64, max int32, suspend int64, flag int32, sub string) *codec.Command {
	if suspend > 0 {
		flag |= codec.PullSysFlagSuspend
	}
	h := codec.PullMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, QueueOffset: offset,
		MaxMsgNums: max, SysFlag: flag, CommitOffset: -1, SuspendTimeoutMillis: suspend, Subscription: sub,
		ExpressionType: "TAG"}
	req := codec.NewRequest(codec.RequestPullMessage, 0, nil, nil)
	h.Encode(req)
	return req
}

type pullResult struct {
	code int32
	hdr  codec.PullMessageResponseHeader
	msgs []codec.MessageExt
}

func pullOf(t *testing.T, r *codec.Command) pullResult {
	t.Helper()
	var h codec.PullMessageResponseHeader
	var err error
	if r.Code != codec.SystemError {
		h, err = codec.DecodePullMessageResponseHeader(r.ExtFields)
		require.NoError(t, err, "the four offsets are always present")
	}
	msgs, err := codec.DecodeMessages(r.Body)
	require.NoError(t, err)
	return pullResult{code: r.Code, hdr: h, msgs: msgs}
}

func pull(t *testing.T, c *client.Conn, req *codec.Command) pullResult {
	t.Helper()
	return pullOf(t, call(t, c, req))
}

// TestPullMessage_OffsetRules covers the codes and nextBeginOffset of
// DefaultMessageStore.getMessage as the clients depend on them.
func TestPullMessage_OffsetRules(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	r := pull(t, c, pullReq("G", "T", 0, 0, 32, 0, ""))
	require.Equal(t, codec.PullNotFound, r.code, "empty queue, offset 0")
	r = pull(t, c, pullReq("G", "T", 0, 5, 32, 0, ""))
	require.Equal(t, codec.PullOffsetMoved, r.code, "empty queue, offset 5")
	require.EqualValues(t, 0, r.hdr.NextBeginOffset)

	for i := range 5 {
		tag := "A"
		if i%2 == 1 {
			tag = "B"
		}
		send(t, c, "T", 0, "m"+strconv.Itoa(i), sendOpts{tag: tag})
	}
	r = pull(t, c, pullReq("G", "T", 0, 0, 32, 0, ""))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 5)
	require.EqualValues(t, 5, r.hdr.NextBeginOffset)
	require.EqualValues(t, 5, r.hdr.MaxOffset)

	r = pull(t, c, pullReq("G", "T", 0, 0, 32, 0, "A"))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 3)

	r = pull(t, c, pullReq("G", "T", 0, 3, 32, 0, "A || C"))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 1)
	r = pull(t, c, pullReq("G", "T", 0, 3, 1, 0, "C"))
	require.Equal(t, codec.PullRetryImmediately, r.code, "everything filtered")
	require.Greater(t, r.hdr.NextBeginOffset, int64(3))

	r = pull(t, c, pullReq("G", "T", 0, 5, 32, 0, ""))
	require.Equal(t, codec.PullNotFound, r.code, "offset == max")
	r = pull(t, c, pullReq("G", "T", 0, 9, 32, 0, ""))
	require.Equal(t, codec.PullOffsetMoved, r.code, "offset > max")
	require.EqualValues(t, 5, r.hdr.NextBeginOffset)

	require.Equal(t, codec.TopicNotExist, call(t, c, pullReq("G", "NOPE", 0, 0, 32, 0, "")).Code)
	require.Equal(t, codec.InvalidParameter, call(t, c, pullReq("G", "T", 3, 0, 32, 0, "")).Code, "queueId beyond the topic: PullMessageProcessor's INVALID_PARAMETER")
}

// TestPullMessage_LongPoll: a suspended PULL is answered by the message
// that arrives, or PULL_NOT_FOUND at the end of the suspension; a commit
// offset in the request is stored.
func TestPullMessage_LongPoll(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	p := asyncCall(t, h.dial(), pullReq("G", "T", 0, 0, 32, 30000, ""))
	eventually(t, func() bool { return h.b().Polls.ParkedCount() == 1 }, "pull parked")
	send(t, c, "T", 0, "m", sendOpts{})
	r := pullOf(t, p.wait(t))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 1)

	r = pull(t, c, pullReq("G", "T", 0, 1, 32, 100, ""))
	require.Equal(t, codec.PullNotFound, r.code)
	require.EqualValues(t, 1, r.hdr.NextBeginOffset)

	req := pullCmd("G", "T", 0, 1, 32, 0, codec.PullSysFlagCommitOffset|codec.PullSysFlagSubscription, "*")
	req.ExtFields["commitOffset"] = "1"
	call(t, c, req)
	eventually(t, func() bool { return committedOffset(h, "G", "T", 0) == 1 }, "commit offset stored")
}

// TestConsumerSendMsgBack: a failed message sent back is delivered to
// %RETRY%<group> after its delay level with reconsumeTimes + 1 and the
// RETRY_TOPIC / ORIGIN_MESSAGE_ID / REAL_TOPIC properties; past the limit
// (or with delayLevel -1) it goes to %DLQ%<group> at once.
func TestConsumerSendMsgBack(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sent := send(t, c, "T", 0, "m", sendOpts{})
	r := pull(t, c, pullReq("G", "T", 0, 0, 1, 0, ""))
	require.Len(t, r.msgs, 1)
	m := r.msgs[0]
	require.Equal(t, sent.MsgID, m.OffsetMsgID())

	back := func(delay int32, max int32) int32 {
		hdr := codec.ConsumerSendMsgBackRequestHeader{Offset: m.PhysicalOffset, Group: "G", DelayLevel: delay,
			OriginMsgID: m.MsgID(), OriginTopic: "T"}
		if max >= 0 {
			hdr.MaxReconsumeTimes, hdr.HasMaxReconsumeTimes = max, true
		}
		req := codec.NewRequest(codec.RequestConsumerSendMsgBack, 0, nil, nil)
		hdr.Encode(req)
		return call(t, c, req).Code
	}
	require.Equal(t, codec.Success, back(1, -1))
	retry := codec.RetryGroupTopic("G")
	require.Zero(t, h.b().Store.MaxOffset(retry, 0), "delayed, not yet delivered")
	h.advance(2 * time.Second)
	h.reviveNow()
	r = pull(t, c, pullReq("G", retry, 0, 0, 32, 0, ""))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 1)
	cp := r.msgs[0]
	require.Equal(t, "m", string(cp.Body))
	require.EqualValues(t, 1, cp.ReconsumeTimes)
	for k, v := range map[string]string{codec.PropertyRetryTopic: "T", codec.PropertyOriginMessageID: sent.MsgID,
		codec.PropertyRealTopic: retry, codec.PropertyUniqClientMessageIDKeyIdx: m.MsgID(),
		// as a 5.5.1 broker delivers it (consumerSendMsgBack, then the
		// schedule service keeps the level)
		codec.PropertyWaitStoreMsgOK: "false", codec.PropertyDelayTimeLevel: "1"} {
		got, _ := cp.Property(k)
		require.Equal(t, v, got, k)
	}

	require.Equal(t, codec.Success, back(-1, -1), "delayLevel -1: straight to the DLQ")
	require.EqualValues(t, 1, h.b().Store.MaxOffset(codec.DLQTopic("G"), 0))
	dlq := storedMessages(t, h, codec.DLQTopic("G"), 0)[0]
	require.Equal(t, "0", prop(dlq, codec.PropertyDelayTimeLevel), "the DLQ copy's level, as consumerSendMsgBack writes it")
	require.Equal(t, "false", prop(dlq, codec.PropertyWaitStoreMsgOK))
	require.Equal(t, codec.Success, back(0, 0), "reconsumeTimes 0 ≥ max 0: DLQ")
	require.EqualValues(t, 2, h.b().Store.MaxOffset(codec.DLQTopic("G"), 0))

	hdr := codec.ConsumerSendMsgBackRequestHeader{Offset: 1 << 40, Group: "G"}
	req := codec.NewRequest(codec.RequestConsumerSendMsgBack, 0, nil, nil)
	hdr.Encode(req)
	require.Equal(t, codec.SystemError, call(t, c, req).Code, "unknown physical offset")
}

// A PULL answer holds at most MaxPullBytes (256 KiB) of records, as the
// Java store's maxTransferBytesOnMessageInMemory: forty 20 KiB messages
// come twelve at a time (rocketmq-client 4.9.8 against 5.5.1), and one
// message larger than the cap still comes alone.
func TestPullMessage_ByteCap(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TB", 1)
	c := h.dial()
	body := strings.Repeat("z", 20<<10)
	for range 40 {
		send(t, c, "TB", 0, body, sendOpts{})
	}
	r := pull(t, c, pullReq("G", "TB", 0, 0, 32, 0, ""))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 12)
	require.EqualValues(t, 12, r.hdr.NextBeginOffset)

	send(t, c, "TB", 0, strings.Repeat("y", 300<<10), sendOpts{})
	r = pull(t, c, pullReq("G", "TB", 0, 40, 32, 0, ""))
	require.Equal(t, codec.Success, r.code)
	require.Len(t, r.msgs, 1)
}

// TestPULL_WithoutSubscriptionNeedsRegisteredConsumer: a PULL without
// sysFlag 0x4 filters with what the group's HEART_BEAT registered, and
// without a live consumer or a subscription of the topic it is
// SUBSCRIPTION_NOT_EXIST (24), as PullMessageProcessor; with 0x4 and an
// empty expression every message matches.
func TestPULL_WithoutSubscriptionNeedsRegisteredConsumer(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	h.createTopic("Other", 1)
	c := h.dial()
	send(t, c, "T", 0, "a", sendOpts{tag: "TagA"})
	send(t, c, "T", 0, "b", sendOpts{tag: "TagB"})

	r := call(t, c, pullReqRegistered("GR", "T", 0, 0, 32, 0))
	requireCode(t, r, codec.SubscriptionNotExist, "the consumer's group info not exist")
	require.Empty(t, r.Body)

	hb := codec.HeartbeatData{ClientID: "10.0.0.1@pull"}
	cd := hbConsumer("GR", "T")
	cd.SubscriptionDataSet[0].SubString = "TagB"
	hb.ConsumerDataSet = []codec.ConsumerData{cd}
	requireCode(t, beat(t, c, hb), codec.Success, "")

	requireCode(t, call(t, c, pullReqRegistered("GR", "Other", 0, 0, 32, 0)), codec.SubscriptionNotExist, "the consumer's subscription not exist")
	got := pull(t, c, pullReqRegistered("GR", "T", 0, 0, 32, 0))
	require.Equal(t, codec.Success, got.code)
	require.Equal(t, []string{"b"}, bodiesOf(got.msgs), "the registered filter applies")

	got = pull(t, c, pullCmd("GX", "T", 0, 0, 32, 0, codec.PullSysFlagSubscription, ""))
	require.Equal(t, codec.Success, got.code, "the request's own (empty) subscription needs no registration")
	require.Equal(t, []string{"a", "b"}, bodiesOf(got.msgs))
}
