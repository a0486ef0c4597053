package handler_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// consumerClient is a remoting client registered by HEART_BEAT as clientID
// in group, answering the broker's requests with answer (run on its reader
// goroutine; nil sends nothing). Every request it got is sent to seen.
func consumerClient(t *testing.T, h *harness, clientID, group string, answer func(*codec.Command) *codec.Command) (*client.Conn, <-chan *codec.Command) {
	t.Helper()
	seen := make(chan *codec.Command, 16)
	c, err := client.DialContext(context.Background(), h.addr(), client.Options{OnRequest: func(req *codec.Command) *codec.Command {
		if req.Code == codec.RequestNotifyConsumerIDsChanged {
			return nil // membership notices (notify_consumer_ids_test.go) are not what these tests watch
		}
		seen <- req
		return answer(req)
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	resp := d2Call(t, c, codec.RequestHeartBeat, nil, heartbeatBody(clientID, group))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	return c, seen
}

func runningInfo(group, clientID string) map[string]string {
	return map[string]string{"consumerGroup": group, "clientId": clientID, "jstackEnable": "false"}
}

// TestConsumerRunningInfoForwarded: GET_CONSUMER_RUNNING_INFO (307) goes to
// the named consumer's connection as a two-way request with the admin's
// fields; its answer (code, remark, fields, body) comes back to the admin
// on the admin's own connection; a client's refusal is relayed as well.
func TestConsumerRunningInfoForwarded(t *testing.T) {
	h := startHarness(t, nil)
	info := []byte(`{"properties":{"consumeType":"CONSUME_PASSIVELY"},"subscriptionSet":[],"mqTable":{},"statusTable":{}}`)
	_, seen := consumerClient(t, h, "10.0.0.1@run#1", "GRI", func(req *codec.Command) *codec.Command {
		if req.ExtFields["consumerGroup"] != "GRI" {
			return codec.NewResponse(req, codec.SystemError, "The Consumer Group <"+req.ExtFields["consumerGroup"]+"> not exist in this consumer")
		}
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Language = "GO"
		resp.ExtFields = map[string]string{"from": "client"}
		resp.Body = info
		return resp
	})
	admin := h.dial()
	resp := d2Call(t, admin, codec.RequestGetConsumerRunningInfo, runningInfo("GRI", "10.0.0.1@run#1"), nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, info, resp.Body)
	assert.Equal(t, "client", resp.ExtFields["from"])
	assert.Equal(t, "GO", resp.Language)
	got := <-seen
	assert.Equal(t, codec.RequestGetConsumerRunningInfo, got.Code)
	assert.False(t, got.IsOneway())
	assert.Equal(t, runningInfo("GRI", "10.0.0.1@run#1"), got.ExtFields)
	assert.Empty(t, got.Body)

	// A second consumer of the group is asked about a group it does not
	// have: its own refusal is the answer. (Both registered in GRI; the
	// admin names the second one.)
	_, seen2 := consumerClient(t, h, "10.0.0.2@run#2", "GRI", func(req *codec.Command) *codec.Command {
		return codec.NewResponse(req, codec.SystemError, "The Consumer Group <GRI> not exist in this consumer")
	})
	resp = d2Call(t, admin, codec.RequestGetConsumerRunningInfo, runningInfo("GRI", "10.0.0.2@run#2"), nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "The Consumer Group <GRI> not exist in this consumer", resp.Remark)
	assert.Equal(t, "10.0.0.2@run#2", (<-seen2).ExtFields["clientId"])
	assert.Empty(t, seen, "the first consumer was not asked")

	// A client popshim's own remoting client answers by default:
	// REQUEST_CODE_NOT_SUPPORTED, relayed.
	plain := h.dial()
	require.Equal(t, codec.Success, d2Call(t, plain, codec.RequestHeartBeat, nil, heartbeatBody("10.0.0.3@plain", "GRI")).Code)
	resp = d2Call(t, admin, codec.RequestGetConsumerRunningInfo, runningInfo("GRI", "10.0.0.3@plain"), nil)
	assert.Equal(t, codec.RequestCodeNotSupported, resp.Code)
	assert.Equal(t, " request type 307 not supported", resp.Remark)
}

// TestConsumerRunningInfoRefusals: not online, a missing field, a client
// below V3_1_8_SNAPSHOT: SYSTEM_ERROR with callConsumer's remarks, and
// nothing is forwarded.
func TestConsumerRunningInfoRefusals(t *testing.T) {
	h := startHarness(t, nil)
	admin := h.dial()
	resp := d2Call(t, admin, codec.RequestGetConsumerRunningInfo, runningInfo("GRX", "x@1"), nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "The Consumer <GRX> <x@1> not online", resp.Remark)
	resp = d2Call(t, admin, codec.RequestGetConsumerRunningInfo, map[string]string{"consumerGroup": "GRX"}, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "the custom field <clientId> is null", resp.Remark)

	old := h.dial()
	hb := codec.NewRequest(codec.RequestHeartBeat, 0, nil, heartbeatBody("x@old", "GRX"))
	hb.Version = 10 // V3_0_0_BETA7
	require.Equal(t, codec.Success, d2Invoke(t, old, hb).Code)
	resp = d2Call(t, admin, codec.RequestGetConsumerRunningInfo, runningInfo("GRX", "x@old"), nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "The Consumer <x@old> Version <V3_0_0_BETA7> too low to finish, please upgrade it to V3_1_8_SNAPSHOT", resp.Remark)
}

// TestConsumerCallTimeout: a consumer that does not answer within the
// call timeout gives CONSUME_MSG_TIMEOUT (207) naming its address.
func TestConsumerCallTimeout(t *testing.T) {
	h := startHarness(t, nil)
	h.b().Settings.ClientCallTimeout = 200 * time.Millisecond
	silent, seen := consumerClient(t, h, "x@silent", "GRT", func(*codec.Command) *codec.Command { return nil })
	admin := h.dial()
	resp := d2Call(t, admin, codec.RequestGetConsumerRunningInfo, runningInfo("GRT", "x@silent"), nil)
	assert.Equal(t, codec.ConsumeMsgTimeout, resp.Code)
	assert.Contains(t, resp.Remark, "consumer <GRT> <x@silent> Timeout: ")
	assert.Contains(t, resp.Remark, "wait response on the channel </127.0.0.1:")
	assert.Contains(t, resp.Remark, "> timeout, 200(ms)")
	<-seen
	_ = silent
}

// TestConsumerCallConnectionClosed: a consumer whose connection closes
// while the call waits gives SYSTEM_ERROR "invoke consumer ... Exception"
// at once; the admin's connection is served meanwhile.
func TestConsumerCallConnectionClosed(t *testing.T) {
	h := startHarness(t, nil)
	h.b().Settings.ClientCallTimeout = time.Hour
	admin := h.dial()
	// A raw consumer reads the forwarded request and closes instead of
	// answering.
	nc, err := net.Dial("tcp", h.addr())
	require.NoError(t, err)
	require.NoError(t, nc.SetDeadline(time.Now().Add(waitFor)))
	t.Cleanup(func() { _ = nc.Close() })
	_, err = nc.Write(codec.AppendFrame(nil, codec.NewRequest(codec.RequestHeartBeat, 1, nil, heartbeatBody("x@raw", "GRT"))))
	require.NoError(t, err)
	require.Equal(t, codec.Success, rawFrame(t, nc).Code)
	pending := make(chan *codec.Command, 1)
	require.NoError(t, admin.InvokeAsync(codec.NewRequest(codec.RequestGetConsumerRunningInfo, 0, runningInfo("GRT", "x@raw"), nil),
		func(resp *codec.Command, err error) {
			if err != nil {
				resp = codec.NewResponse(&codec.Command{}, -1, err.Error())
			}
			pending <- resp
		}))
	fwd := rawFrame(t, nc)
	assert.Equal(t, codec.RequestGetConsumerRunningInfo, fwd.Code)
	resp := d2Call(t, admin, codec.RequestGetConsumerListByGroup, map[string]string{"consumerGroup": "GRT"}, nil)
	assert.Equal(t, codec.Success, resp.Code, "the admin's connection is served while its call waits")
	require.NoError(t, nc.Close())
	select {
	case resp = <-pending:
	case <-time.After(waitFor):
		t.Fatal("no answer after the consumer's connection closed")
	}
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "invoke consumer <GRT> <x@raw> Exception: ")
	assert.Contains(t, resp.Remark, "send request to <127.0.0.1:")
}

// rawFrame reads and decodes the next frame from a raw TCP connection that
// is not a NOTIFY_CONSUMER_IDS_CHANGED request.
func rawFrame(t *testing.T, nc net.Conn) *codec.Command {
	t.Helper()
	for {
		var head [4]byte
		_, err := io.ReadFull(nc, head[:])
		require.NoError(t, err)
		f := make([]byte, 4+binary.BigEndian.Uint32(head[:]))
		copy(f, head[:])
		_, err = io.ReadFull(nc, f[4:])
		require.NoError(t, err)
		cmd, err := codec.DecodeFrame(f)
		require.NoError(t, err)
		// a heartbeat joining a group is told of its own join first
		// (NOTIFY_CONSUMER_IDS_CHANGED, oneway): not what these tests read
		if cmd.IsResponse() || cmd.Code != codec.RequestNotifyConsumerIDsChanged {
			return cmd
		}
	}
}

// TestConsumeMessageDirectlyForwarded: CONSUME_MESSAGE_DIRECTLY (309)
// reads the message of msgId and forwards it to the consumer as the body,
// with the admin's fields plus brokerName, topicSysFlag and groupSysFlag;
// the consumer's ConsumeMessageDirectlyResult comes back. A msgId that is
// not an offsetMsgId, or names no message, is refused before anything is
// forwarded.
func TestConsumeMessageDirectlyForwarded(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("TCD", 2)
	producer := h.dial()
	sent := send(t, producer, "TCD", 1, "direct body", sendOpts{tag: "TG"})
	result := []byte(`{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"spentTimeMills":3}`)
	_, seen := consumerClient(t, h, "10.0.0.9@direct", "GCD", func(req *codec.Command) *codec.Command {
		resp := codec.NewResponse(req, codec.Success, "")
		resp.Body = result
		return resp
	})
	admin := h.dial()
	ext := map[string]string{"consumerGroup": "GCD", "clientId": "10.0.0.9@direct", "msgId": sent.MsgID, "topic": "TCD"}
	resp := d2Call(t, admin, codec.RequestConsumeMessageDirectly, ext, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, result, resp.Body)
	got := <-seen
	assert.Equal(t, codec.RequestConsumeMessageDirectly, got.Code)
	assert.Equal(t, testBrokerName, got.ExtFields["brokerName"])
	assert.Equal(t, "0", got.ExtFields["topicSysFlag"])
	assert.Equal(t, "0", got.ExtFields["groupSysFlag"], "HEART_BEAT auto-created the group")
	assert.Equal(t, sent.MsgID, got.ExtFields["msgId"])
	msgs, err := codec.DecodeMessages(got.Body)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, "TCD", msgs[0].Topic)
	assert.Equal(t, int32(1), msgs[0].QueueID)
	assert.Equal(t, "direct body", string(msgs[0].Body))

	ext["msgId"] = "not-an-offset-msg-id"
	resp = d2Call(t, admin, codec.RequestConsumeMessageDirectly, ext, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "invalid msgId not-an-offset-msg-id")
	ext["msgId"] = codec.OffsetMsgID(h.b().StoreHost(), 1<<40)
	resp = d2Call(t, admin, codec.RequestConsumeMessageDirectly, ext, nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "can not find message by the offset, "+strconv.FormatInt(1<<40, 10), resp.Remark)
	ext["msgId"], ext["clientId"] = sent.MsgID, "nobody@0"
	resp = d2Call(t, admin, codec.RequestConsumeMessageDirectly, ext, nil)
	assert.Equal(t, "The Consumer <GCD> <nobody@0> not online", resp.Remark)
	delete(ext, "consumerGroup")
	resp = d2Call(t, admin, codec.RequestConsumeMessageDirectly, ext, nil)
	assert.Equal(t, "the custom field <consumerGroup> is null", resp.Remark)
	assert.Empty(t, seen, "nothing else was forwarded")
}
