package handler_test

// RECALL_MESSAGE (370) and TIMER_DEL_UNIQKEY over real TCP: the SEND reply
// of a timer message carries the recall handle; a recall with it, or a
// deletion marker SEND, keeps the message from being delivered.

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

func recallReq(topic, handle string) *codec.Command {
	req := codec.NewRequest(codec.RequestRecallMessage, 0, nil, nil)
	codec.RecallMessageRequestHeader{ProducerGroup: "PG", Topic: topic, RecallHandle: handle, BrokerName: testBrokerName}.Encode(req)
	return req
}

// poppedBodies pops everything of T queue 0 and returns the bodies.
func poppedBodies(t *testing.T, c *client.Conn) []string {
	var out []string
	for _, p := range popNow(t, c) {
		out = append(out, string(p.m.Body))
	}
	return out
}

// TestRecall_HandleCancelsTimer: the timer SEND reply carries recallHandle
// (a delay level's does not); RECALL_MESSAGE is NO_PERMISSION while
// --recall-message-enable is off (the default: a second stack); with it
// on, the recall answers the message's UNIQ_KEY and MSG_REGION and the message is not
// delivered when due, while another of the same time is; a handle of
// another topic is ILLEGAL_OPERATION; a header without recallHandle is
// SYSTEM_ERROR naming it.
func TestRecall_HandleCancelsTimer(t *testing.T) {
	off := startHarness(t, nil)
	off.createTopic("T", 1)
	resp := call(t, off.dial(), recallReq("T", "djEgVCBicm9rZXItcG9wIDEgVQ=="))
	require.Equal(t, codec.NoPermission, resp.Code)
	require.Equal(t, "recall failed, operation is forbidden", resp.Remark)

	h := startHarness(t, func(c *conf.Config) { c.RecallMessageEnable = true })
	h.createTopic("T", 1)
	h.createTopic("T2", 1)
	c := h.dial()
	due := strconv.FormatInt(h.b().Now()+5_000, 10)
	r1 := send(t, c, "T", 0, "recall-me", sendOpts{props: map[string]string{codec.PropertyTimerDeliverMS: due, codec.PropertyUniqClientMessageIDKeyIdx: "RU1"}})
	require.NotEmpty(t, r1.RecallHandle)
	send(t, c, "T", 0, "keep-me", sendOpts{props: map[string]string{codec.PropertyTimerDeliverMS: due, codec.PropertyUniqClientMessageIDKeyIdx: "RU2"}})
	lvl := send(t, c, "T", 0, "level", sendOpts{props: map[string]string{codec.PropertyDelayTimeLevel: "1"}})
	require.Empty(t, lvl.RecallHandle, "no recall handle for a delay level, as Java")

	resp = call(t, c, recallReq("T2", r1.RecallHandle))
	require.Equal(t, codec.IllegalOperation, resp.Code)
	require.Equal(t, "recall failed, topic not match", resp.Remark)
	resp = call(t, c, codec.NewRequest(codec.RequestRecallMessage, 0, map[string]string{"topic": "T"}, nil))
	require.Equal(t, codec.SystemError, resp.Code)
	require.Contains(t, resp.Remark, "recallHandle")

	resp = call(t, c, recallReq("T", r1.RecallHandle))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, "RU1", resp.ExtFields["msgId"])
	require.Equal(t, codec.DefaultMsgRegion, resp.ExtFields[codec.PropertyMsgRegion])

	h.advance(6 * time.Second)
	h.timersNow()
	require.ElementsMatch(t, []string{"keep-me", "level"}, poppedBodies(t, c))
}

// TestTimerDelUniqKey_SendCancels: a SEND with TIMER_DEL_UNIQKEY and the
// target's TIMER_DELIVER_MS is answered like a timer SEND and cancels the
// target, also across a restart; one whose time is past is
// MESSAGE_ILLEGAL with the timer remark.
func TestTimerDelUniqKey_SendCancels(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.TimerMaxDelaySec = 365 * 24 * 3600 })
	h.createTopic("T", 1)
	c := h.dial()
	due := strconv.FormatInt(h.b().Now()+200*24*3600_000, 10) // 200 days ahead: a long timer
	send(t, c, "T", 0, "cancel-me", sendOpts{props: map[string]string{codec.PropertyTimerDeliverMS: due, codec.PropertyUniqClientMessageIDKeyIdx: "DU1"}})
	send(t, c, "T", 0, "keep-me", sendOpts{props: map[string]string{codec.PropertyTimerDeliverMS: due, codec.PropertyUniqClientMessageIDKeyIdx: "DU2"}})
	m := send(t, c, "T", 0, "marker", sendOpts{props: map[string]string{codec.PropertyTimerDeliverMS: due,
		codec.PropertyTimerDelUniqKey: "T+DU1"}})
	require.NotEmpty(t, m.MsgID)
	require.Zero(t, m.QueueOffset)
	resp := call(t, c, sendReq("T", 0, []byte("late"), sendOpts{props: map[string]string{
		codec.PropertyTimerDeliverMS: "1", codec.PropertyTimerDelUniqKey: "T+DU1"}}))
	require.Equal(t, codec.MessageIllegal, resp.Code)
	require.Contains(t, resp.Remark, "timer message illegal")

	h.restart()
	c = h.dial()
	h.advance(200*24*time.Hour + time.Second)
	h.timersNow()
	require.Equal(t, []string{"keep-me"}, poppedBodies(t, c))
}
