package handler_test

// SEND_REPLY_MESSAGE (324/325) and PUSH_REPLY_MESSAGE_TO_CLIENT (326) over
// real TCP: a requester connection registered as a producer by HEART_BEAT
// answers the broker's push as ClientRemotingProcessor.receiveReplyMessage
// does; a replier connection sends the reply.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// requester dials a connection that registers clientID as a producer and
// answers every push with answer(push); the pushes go to the channel.
func requester(t *testing.T, h *harness, clientID string, answer *atomic.Int32) (*client.Conn, <-chan *codec.Command) {
	t.Helper()
	pushes := make(chan *codec.Command, 8)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := client.DialContext(ctx, h.addr(), client.Options{OnRequest: func(req *codec.Command) *codec.Command {
		pushes <- req
		code := answer.Load()
		remark := ""
		if code != codec.Success {
			remark = "process reply message fail"
		}
		return codec.NewResponse(req, code, remark)
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	hb := beat(t, c, codec.HeartbeatData{ClientID: clientID, ProducerDataSet: []codec.ProducerData{{GroupName: "RequesterPG"}}})
	require.Equal(t, codec.Success, hb.Code, hb.Remark)
	return c, pushes
}

// replyFrameOf is a reply as a Java producer sends it: code 325 with the V2
// header (or 324 with long names), properties from createReplyMessage.
func replyFrameOf(t *testing.T, code int32, to, body string) *codec.Command {
	t.Helper()
	props := ""
	for _, kv := range [][2]string{{codec.PropertyMessageType, "reply"}, {codec.PropertyCorrelationID, "corr-7"},
		{codec.PropertyMessageReplyToClient, to}, {codec.PropertyMessageTTL, "3000"}, {codec.PropertyUniqClientMessageIDKeyIdx, "UNIQ-R"}} {
		props, _ = codec.SetProperty(props, kv[0], kv[1])
	}
	req := codec.NewRequest(code, 0, nil, []byte(body))
	hdr := codec.SendMessageRequestHeader{ProducerGroup: "ReplierPG", Topic: "ClusterPop_REPLY_TOPIC", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: props}
	if code == codec.RequestSendReplyMessageV2 {
		hdr.EncodeV2(req)
	} else {
		hdr.Encode(req)
	}
	return req
}

// TestSendReply_PushesToRequesterAndStores: a reply (325, then 324) is
// pushed to the requester's connection with Java's header and the body,
// answered SUCCESS with the stored record's offsetMsgId, and stored in
// the reply topic; a requester that answers an error makes the reply
// SYSTEM_ERROR "push reply message to <id>fail."; once the requester's
// connection closed, "push reply message fail, channel of <id> not
// found.".
func TestSendReply_PushesToRequesterAndStores(t *testing.T) {
	h := startHarness(t, nil)
	var answer atomic.Int32
	req, pushes := requester(t, h, "127.0.0.1@requester", &answer)
	replier := h.dial()

	for i, code := range []int32{codec.RequestSendReplyMessageV2, codec.RequestSendReplyMessage} {
		resp := call(t, replier, replyFrameOf(t, code, "127.0.0.1@requester", "pong"))
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		sr, err := codec.DecodeSendMessageResponseHeader(resp.ExtFields)
		require.NoError(t, err)
		require.NotEqual(t, "0", sr.MsgID)
		require.Equal(t, int32(0), sr.QueueID)
		require.Equal(t, int64(i), sr.QueueOffset)

		var push *codec.Command
		select {
		case push = <-pushes:
		case <-time.After(waitFor):
			t.Fatal("no PUSH_REPLY_MESSAGE_TO_CLIENT reached the requester")
		}
		require.Equal(t, codec.RequestPushReplyMessageToClient, push.Code)
		require.False(t, push.IsOneway(), "the broker waits for the requester's answer (invokeSync)")
		ph, err := codec.DecodeReplyMessageRequestHeader(push.ExtFields)
		require.NoError(t, err, "every @CFNotNull field is present")
		require.Equal(t, "ClusterPop_REPLY_TOPIC", ph.Topic)
		require.Equal(t, "ReplierPG", ph.ProducerGroup)
		require.Equal(t, h.addr(), ph.StoreHost)
		require.Regexp(t, `^127\.0\.0\.1:[1-9][0-9]*$`, ph.BornHost, "the replier's address")
		require.Equal(t, "pong", string(push.Body))
		props := codec.DecodeProperties(ph.Properties)
		require.Equal(t, "corr-7", props[codec.PropertyCorrelationID])
		require.NotEmpty(t, props[codec.PropertyPushReplyTime])
	}

	answer.Store(codec.SystemError)
	resp := call(t, replier, replyFrameOf(t, codec.RequestSendReplyMessageV2, "127.0.0.1@requester", "x"))
	require.Equal(t, codec.SystemError, resp.Code)
	require.Equal(t, "push reply message to 127.0.0.1@requesterfail.", resp.Remark)
	<-pushes

	require.NoError(t, req.Close())
	eventually(t, func() bool {
		resp = call(t, replier, replyFrameOf(t, codec.RequestSendReplyMessageV2, "127.0.0.1@requester", "y"))
		return resp.Remark == "push reply message fail, channel of <127.0.0.1@requester> not found."
	}, "requester still found after its connection closed: %d %q", resp.Code, resp.Remark)
	require.Equal(t, codec.SystemError, resp.Code)
}
