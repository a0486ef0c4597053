package stack_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/stack"
	"github.com/popshim/popshim/stack/stacktest"
)

// mqadmin's GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY
// (309) sent over remoting to a consumer connected over the gRPC
// endpoint: relayed on its Telemetry stream with a nonce, the answer
// turned into the remoting reply as rocketmq-proxy does.

// adminConn dials the stack's remoting port as an admin.
func adminConn(t *testing.T, st *stack.Stack) *client.Conn {
	t.Helper()
	c, err := client.DialContext(context.Background(), st.BrokerAddr(), client.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func adminCall(t *testing.T, c *client.Conn, code int32, ext map[string]string, body []byte) *codec.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	resp, err := c.Invoke(ctx, codec.NewRequest(code, 0, ext, body))
	require.NoError(t, err)
	return resp
}

// adminCallAsync sends the request and returns where its answer arrives.
func adminCallAsync(t *testing.T, c *client.Conn, code int32, ext map[string]string) <-chan *codec.Command {
	out := make(chan *codec.Command, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		resp, err := c.Invoke(ctx, codec.NewRequest(code, 0, ext, nil))
		if err != nil {
			resp = codec.NewResponse(&codec.Command{}, -1, err.Error())
		}
		out <- resp
	}()
	return out
}

func await[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		t.Fatal("no answer within the bound")
		panic("unreachable")
	}
}

// remotingSend stores one message in topic over SEND_MESSAGE and returns
// its offsetMsgId.
func remotingSend(t *testing.T, c *client.Conn, topic, body string) string {
	t.Helper()
	ext := map[string]string{"producerGroup": "gcall_pg", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": "0", "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": "TAGS\x01TG\x02"}
	resp := adminCall(t, c, codec.RequestSendMessage, ext, []byte(body))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.NotEmpty(t, resp.ExtFields["msgId"])
	return resp.ExtFields["msgId"]
}

// consumerIDs polls GET_CONSUMER_LIST_BY_GROUP until group has a member
// (bounded), and returns the members.
func consumerIDs(t *testing.T, c *client.Conn, group string) []string {
	t.Helper()
	for range 1500 {
		resp := adminCall(t, c, codec.RequestGetConsumerListByGroup, map[string]string{"consumerGroup": group}, nil)
		if resp.Code == codec.Success {
			body, err := codec.DecodeConsumerListBody(resp.Body)
			require.NoError(t, err)
			if len(body.ConsumerIDList) > 0 {
				return body.ConsumerIDList
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no consumer of %s registered", group)
	return nil
}

func jstackReq(group, id string, jstack bool) map[string]string {
	return map[string]string{"consumerGroup": group, "clientId": id, "jstackEnable": strconv.FormatBool(jstack)}
}

// A real Go v5 SimpleConsumer (v5.1.4) on the gRPC port: 307 with
// jstackEnable answers with its goroutine dump as a ConsumerRunningInfo;
// 309 reaches it as VerifyMessageCommand, which the Go client answers
// NOT_IMPLEMENTED: the proxy's ConsumeMessageDirectlyResult without a
// consumeResult.
func TestGRPCGoConsumerAnswersAdminCalls(t *testing.T) {
	cfg := stacktest.Config(t.TempDir())
	cfg.GRPCListen = "127.0.0.1:0"
	st := stacktest.Start(t, cfg)
	admin := adminConn(t, st)
	topic, group := "gcall_go", "gcall_go_cg"
	msgID := remotingSend(t, admin, topic, "verify me")

	rmq.EnableSsl = false
	_ = os.Setenv("rocketmq.client.logRoot", t.TempDir())
	rmq.ResetLogger()
	sc, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: st.GRPCAddr(), ConsumerGroup: group, Credentials: &credentials.SessionCredentials{}},
		rmq.WithSimpleAwaitDuration(time.Second), rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
	require.NoError(t, err)
	require.NoError(t, sc.Start())
	t.Cleanup(func() { _ = sc.GracefulStop() })
	ids := consumerIDs(t, admin, group)
	require.Len(t, ids, 1)
	id := ids[0]

	resp := adminCall(t, admin, codec.RequestGetConsumerRunningInfo, jstackReq(group, id, true), nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	var info codec.ConsumerRunningInfo
	require.NoError(t, json.Unmarshal(resp.Body, &info), "%s", resp.Body)
	assert.Contains(t, info.Jstack, "goroutine ", "the Go client's stack dump")
	assert.JSONEq(t, `{}`, string(info.Properties))
	assert.JSONEq(t, `[]`, string(info.SubscriptionSet))

	resp = adminCall(t, admin, codec.RequestConsumeMessageDirectly,
		map[string]string{"consumerGroup": group, "clientId": id, "msgId": msgID, "topic": topic}, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, `{"autoCommit":true,"order":false,"remark":"from gRPC client","spentTimeMills":0}`, string(resp.Body))
	assert.Zero(t, st.Broker.Broker.Settings.ClientCallTimeout, "the default 10 s applied")
}

// rawConsumer is a hand-driven v5 simple consumer of group: a Telemetry
// stream with its Settings answered, and a Heartbeat that registers it.
func rawConsumer(t *testing.T, st *stack.Stack, id, group, topic string) v2.MessagingService_TelemetryClient {
	t.Helper()
	c := grpcClient(t, st, false)
	stream, err := c.Telemetry(call(t, id))
	require.NoError(t, err)
	settings := &v2.Settings{ClientType: ptrTo(v2.ClientType_SIMPLE_CONSUMER),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: &v2.Resource{Name: group},
			Subscriptions: []*v2.SubscriptionEntry{{Topic: &v2.Resource{Name: topic},
				Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}}}}}
	require.NoError(t, stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: settings}}))
	reply, err := stream.Recv()
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, reply.GetStatus().GetCode(), "%v", reply)
	hr, err := c.Heartbeat(call(t, id), &v2.HeartbeatRequest{Group: &v2.Resource{Name: group}, ClientType: v2.ClientType_SIMPLE_CONSUMER})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, hr.GetStatus().GetCode(), "%v", hr)
	return stream
}

func recvCommand(t *testing.T, s v2.MessagingService_TelemetryClient) *v2.TelemetryCommand {
	t.Helper()
	c, err := s.Recv()
	require.NoError(t, err)
	return c
}

// The answer rules, with a client driven by hand: answers with another
// nonce, from another client id or of the other kind are ignored; a
// failing status gives the proxy's refusal; a verify status maps to its
// consumeResult; the stream ending before the answer, and a client with
// no stream, give SYSTEM_ERROR as a gone connection.
func TestGRPCAdminCallAnswerRules(t *testing.T) {
	cfg := stacktest.Config(t.TempDir())
	cfg.GRPCListen = "127.0.0.1:0"
	st := stacktest.Start(t, cfg)
	admin := adminConn(t, st)
	topic, group, id := "gcall_raw", "gcall_raw_cg", "127.0.0.1@raw@0@1"
	msgID := remotingSend(t, admin, topic, "direct body")
	stream := rawConsumer(t, st, id, group, topic)
	other := rawConsumer(t, st, "127.0.0.1@other@0@1", group, topic)

	ans := adminCallAsync(t, admin, codec.RequestGetConsumerRunningInfo, jstackReq(group, id, true))
	cmd := recvCommand(t, stream).GetPrintThreadStackTraceCommand()
	require.NotNil(t, cmd)
	nonce := cmd.GetNonce()
	require.NotEmpty(t, nonce)
	trace := func(n, dump string, code v2.Code) *v2.TelemetryCommand {
		return &v2.TelemetryCommand{Status: &v2.Status{Code: code},
			Command: &v2.TelemetryCommand_ThreadStackTrace{ThreadStackTrace: &v2.ThreadStackTrace{Nonce: n, ThreadStackTrace: &dump}}}
	}
	require.NoError(t, stream.Send(trace(nonce+"0", "unknown nonce", v2.Code_OK)))
	require.NoError(t, other.Send(trace(nonce, "other client", v2.Code_OK)))
	require.NoError(t, stream.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_OK},
		Command: &v2.TelemetryCommand_VerifyMessageResult{VerifyMessageResult: &v2.VerifyMessageResult{Nonce: nonce}}}))
	require.NoError(t, stream.Send(trace(nonce, "main <goroutine> & co", v2.Code_OK)))
	resp := await(t, ans)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, `{"jstack":"main <goroutine> & co","mqPopTable":{},"mqTable":{},"properties":{},"statusTable":{},"subscriptionSet":[],"userConsumerInfo":{}}`,
		string(resp.Body))

	ans = adminCallAsync(t, admin, codec.RequestGetConsumerRunningInfo, jstackReq(group, id, true))
	cmd = recvCommand(t, stream).GetPrintThreadStackTraceCommand()
	require.NotNil(t, cmd)
	require.NotEqual(t, nonce, cmd.GetNonce(), "a fresh nonce per call")
	require.NoError(t, stream.Send(trace(cmd.GetNonce(), "", v2.Code_INTERNAL_ERROR)))
	resp = await(t, ans)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Equal(t, "verify message failed", resp.Remark)

	ans = adminCallAsync(t, admin, codec.RequestConsumeMessageDirectly,
		map[string]string{"consumerGroup": group, "clientId": id, "msgId": msgID, "topic": topic})
	verify := recvCommand(t, stream).GetVerifyMessageCommand()
	require.NotNil(t, verify)
	assert.Equal(t, "direct body", string(verify.GetMessage().GetBody()))
	assert.Equal(t, topic, verify.GetMessage().GetTopic().GetName())
	assert.Equal(t, "TG", verify.GetMessage().GetSystemProperties().GetTag())
	require.NoError(t, stream.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_FAILED_TO_CONSUME_MESSAGE},
		Command: &v2.TelemetryCommand_VerifyMessageResult{VerifyMessageResult: &v2.VerifyMessageResult{Nonce: verify.GetNonce()}}}))
	resp = await(t, ans)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	assert.Equal(t, `{"autoCommit":true,"consumeResult":"CR_LATER","order":false,"remark":"from gRPC client","spentTimeMills":0}`, string(resp.Body))

	// The stream ends while the call waits: a gone connection.
	ans = adminCallAsync(t, admin, codec.RequestGetConsumerRunningInfo, jstackReq(group, id, true))
	require.NotNil(t, recvCommand(t, stream).GetPrintThreadStackTraceCommand())
	require.NoError(t, stream.CloseSend())
	resp = await(t, ans)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.True(t, strings.HasPrefix(resp.Remark, "invoke consumer <"+group+"> <"+id+"> Exception: org.apache.rocketmq.remoting.exception.RemotingSendRequestException: send request to <127.0.0.1:"),
		resp.Remark)

	// Still registered (its connection is open), no stream: refused at once.
	resp = adminCall(t, admin, codec.RequestGetConsumerRunningInfo, jstackReq(group, id, true), nil)
	assert.Equal(t, codec.SystemError, resp.Code)
	assert.Contains(t, resp.Remark, "RemotingSendRequestException")
}

// No answer in time: CONSUME_MSG_TIMEOUT (207) with the remoting path's
// remark, for a client that does not answer and for 307 without
// jstackEnable (as the proxy, nothing is asked of the client). An answer
// after the timeout is dropped.
func TestGRPCAdminCallTimeout(t *testing.T) {
	cfg := stacktest.Config(t.TempDir())
	cfg.GRPCListen = "127.0.0.1:0"
	st := stacktest.Start(t, cfg)
	st.Broker.Broker.Settings.ClientCallTimeout = 200 * time.Millisecond
	admin := adminConn(t, st)
	topic, group, id := "gcall_slow", "gcall_slow_cg", "127.0.0.1@slow@0@1"
	stream := rawConsumer(t, st, id, group, topic)
	wantPrefix := "consumer <" + group + "> <" + id + "> Timeout: org.apache.rocketmq.remoting.exception.RemotingTimeoutException: wait response on the channel </127.0.0.1:"

	resp := adminCall(t, admin, codec.RequestGetConsumerRunningInfo, jstackReq(group, id, false), nil)
	assert.Equal(t, codec.ConsumeMsgTimeout, resp.Code)
	assert.True(t, strings.HasPrefix(resp.Remark, wantPrefix), resp.Remark)
	assert.True(t, strings.HasSuffix(resp.Remark, "> timeout, 200(ms)"), resp.Remark)

	resp = adminCall(t, admin, codec.RequestGetConsumerRunningInfo, jstackReq(group, id, true), nil)
	assert.Equal(t, codec.ConsumeMsgTimeout, resp.Code)
	assert.True(t, strings.HasPrefix(resp.Remark, wantPrefix), resp.Remark)
	late := recvCommand(t, stream).GetPrintThreadStackTraceCommand()
	require.NotNil(t, late, "the first command on the stream is the jstack call's: 307 without jstackEnable sent nothing")
	dump := "late"
	require.NoError(t, stream.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_OK},
		Command: &v2.TelemetryCommand_ThreadStackTrace{ThreadStackTrace: &v2.ThreadStackTrace{Nonce: late.GetNonce(), ThreadStackTrace: &dump}}}))

}
