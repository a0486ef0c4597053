package stack_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/grpcserver"
	"github.com/popshim/popshim/stack"
	"github.com/popshim/popshim/stack/stacktest"
)

// bound turns a hang into a failure; no assertion depends on it.
const bound = 30 * time.Second

// writeCert writes a throw-away self-signed certificate for 127.0.0.1
// into dir and returns the certificate and key paths.
func writeCert(t *testing.T, dir string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stack grpc test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return cert, keyFile
}

// grpcClient dials the stack's gRPC endpoint, with TLS (certificate not
// verified, as the Go and Java v5 clients) or plaintext.
func grpcClient(t *testing.T, st *stack.Stack, useTLS bool) v2.MessagingServiceClient {
	t.Helper()
	creds := insecure.NewCredentials()
	if useTLS {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	cc, err := grpc.NewClient(st.GRPCAddr(), grpc.WithTransportCredentials(creds))
	require.NoError(t, err)
	t.Cleanup(func() { cc.Close() })
	return v2.NewMessagingServiceClient(cc)
}

var callSeq atomic.Int64

// call is a call context for client id, with extra metadata pairs.
func call(t *testing.T, id string, kv ...string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, append([]string{"x-mq-client-id", id, "x-mq-language", "GO"}, kv...)...)
}

func v5Message(topic, body string) *v2.Message {
	return &v2.Message{Topic: &v2.Resource{Name: topic}, Body: []byte(body), SystemProperties: &v2.SystemProperties{
		Tag: ptrTo("T"), MessageId: "01" + strconv.FormatInt(time.Now().UnixNano(), 16) + strconv.FormatInt(callSeq.Add(1), 10),
		BodyEncoding: v2.Encoding_IDENTITY, MessageType: v2.MessageType_NORMAL, BornTimestamp: timestamppb.Now(), BornHost: "h"}}
}

func ptrTo[T any](v T) *T { return &v }

// receiveAll reads one ReceiveMessage stream to its end.
func receiveAll(t *testing.T, c v2.MessagingServiceClient, ctx context.Context, req *v2.ReceiveMessageRequest) (*v2.Status, []*v2.Message) {
	t.Helper()
	rs, err := c.ReceiveMessage(ctx, req)
	require.NoError(t, err)
	var st *v2.Status
	var msgs []*v2.Message
	for {
		item, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return st, msgs
		}
		require.NoError(t, err)
		if s := item.GetStatus(); s != nil {
			st = s
		}
		if m := item.GetMessage(); m != nil {
			msgs = append(msgs, m)
		}
	}
}

func receiveReq(group, topic string, autoRenew bool) *v2.ReceiveMessageRequest {
	r := &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: group},
		MessageQueue:     &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 16,
		LongPollingTimeout: durationpb.New(5 * time.Second)}
	if autoRenew {
		r.AutoRenew = true
	} else {
		r.InvisibleDuration = durationpb.New(10 * time.Second)
	}
	return r
}

// The whole process serves gRPC next to remoting: TLS and plaintext on
// one port (--tls-mode permissive with the remoting certificate), a
// produce/receive/ack round trip, and rocketmq_rpc_latency series with
// protocol_type="grpc" on /metrics.
func TestGRPCEndpointInStack(t *testing.T) {
	dir := t.TempDir()
	cfg := stacktest.Config(dir)
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.TLS.CertFile, cfg.TLS.KeyFile = writeCert(t, t.TempDir())
	cfg.TLS.Mode = "permissive"
	st := stacktest.Start(t, cfg)
	require.NotEmpty(t, st.GRPCAddr())
	topic, group := "stack_grpc", "stack_grpc_cg"
	for _, useTLS := range []bool{true, false} {
		c := grpcClient(t, st, useTLS)
		r, err := c.QueryRoute(call(t, "s@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: topic}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), "%v", r)
		a := r.GetMessageQueues()[0].GetBroker().GetEndpoints().GetAddresses()[0]
		_, port, _ := net.SplitHostPort(st.GRPCAddr())
		require.Equal(t, "127.0.0.1:"+port, net.JoinHostPort(a.GetHost(), strconv.Itoa(int(a.GetPort()))), "endpoint rule without request endpoints")
		sr, err := c.SendMessage(call(t, "s@1"), &v2.SendMessageRequest{Messages: []*v2.Message{v5Message(topic, "tls="+strconv.FormatBool(useTLS))}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), "%v", sr)
		status, msgs := receiveAll(t, c, call(t, "s@1"), receiveReq(group, topic, false))
		require.Equal(t, v2.Code_OK, status.GetCode(), "%v", status)
		require.Len(t, msgs, 1)
		ar, err := c.AckMessage(call(t, "s@1"), &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
			Entries: []*v2.AckMessageEntry{{MessageId: msgs[0].GetSystemProperties().GetMessageId(), ReceiptHandle: msgs[0].GetSystemProperties().GetReceiptHandle()}}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, ar.GetStatus().GetCode(), "%v", ar)
	}
	resp, err := http.Get("http://" + st.MetricsAddr() + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	for _, want := range []string{
		`protocol_type="grpc",request_code="send_message",response_code="ok",result="success"`,
		`is_long_polling="true",node_id=`,
		`popshim_grpc_connections{`,
	} {
		require.Contains(t, string(body), want)
	}
	require.Contains(t, string(body), `request_code="receive_message"`)
}

// Close stops the gRPC endpoint before the writer and saves the leases
// of push consumers: after a restart the message a push consumer held is
// still invisible (its client may come back and go on renewing), and it
// is released once ClientExpiry passes without that client calling.
// (Before 2026-12-05 Close released the leases and this test was
// TestGRPCCloseReleasesLeases.)
func TestGRPCCloseKeepsLeases(t *testing.T) {
	dir := t.TempDir()
	cfg := stacktest.Config(dir)
	cfg.GRPCListen = "127.0.0.1:0"
	st := stacktest.Start(t, cfg)
	c := grpcClient(t, st, false)
	topic, group := "lease_topic", "lease_cg"
	sr, err := c.SendMessage(call(t, "p@1"), &v2.SendMessageRequest{Messages: []*v2.Message{v5Message(topic, "held")}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode())
	status, msgs := receiveAll(t, c, call(t, "push@1"), receiveReq(group, topic, true))
	require.Equal(t, v2.Code_OK, status.GetCode(), "%v", status)
	require.Len(t, msgs, 1)
	stacktest.Stop(t, st)

	cfg2 := stacktest.Config(dir)
	cfg2.GRPCListen = "127.0.0.1:0"
	st2 := stacktest.Start(t, cfg2)
	st2.Broker.AdvanceClock(2_000) // past a 1 s release, far before the pop's 60 s
	c2 := grpcClient(t, st2, false)
	_, got := receiveAll(t, c2, call(t, "other@1"), receiveReq(group, topic, false))
	require.Empty(t, got, "the held message was released at shutdown")
	// push@1 never comes back: past ClientExpiry the endpoint's background
	// round (every 5 s) releases the lease and the message returns.
	st2.Broker.AdvanceClock(grpcserver.ClientExpiry.Milliseconds() + 2_000)
	for i := 0; i < 8 && len(got) == 0; i++ { // each receive long-polls up to 5 s
		st2.Broker.AdvanceClock(2_000)
		_, got = receiveAll(t, c2, call(t, "other@1"), receiveReq(group, topic, false))
	}
	require.Len(t, got, 1, "the restored lease was not released after ClientExpiry")
	require.Equal(t, "held", string(got[0].GetBody()))
}

// ACL 2.0 over gRPC metadata: the same users and policies as remoting.
// No credentials, a bad signature, an unknown user: UNAUTHORIZED; a user
// allowed to publish to one topic may send there and nowhere else, and
// may not receive.
func TestGRPCAuth(t *testing.T) {
	cfg := stacktest.Config(t.TempDir())
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.AuthEnabled, cfg.AuthAuthorization = true, true
	cfg.AuthAdminUser, cfg.AuthAdminPassword = "root", "root-secret"
	st := stacktest.Start(t, cfg)
	v := st.Broker.Auth
	done := make(chan error, 1)
	require.NoError(t, v.CreateUser(auth.User{Username: "alice", Password: "alice-secret"}, "root", func(err error) { done <- err }))
	require.NoError(t, <-done)
	require.NoError(t, v.PutACL(auth.AclInfo{Subject: "User:alice", Policies: []auth.PolicyInfo{{Entries: []auth.EntryInfo{
		{Resource: "Topic:granted", Actions: []string{"Pub"}, Decision: "Allow"}}}}}, "User:alice", func(err error) { done <- err }))
	require.NoError(t, <-done)

	c := grpcClient(t, st, false)
	signed := func(ak, secret string) context.Context {
		date := time.Now().Format("20060102T150405Z")
		mac := hmac.New(sha1.New, []byte(secret))
		mac.Write([]byte(date))
		h := "MQv2-HMAC-SHA1 Credential=" + ak + "//Rocketmq, SignedHeaders=x-mq-date-time, Signature=" + hex.EncodeToString(mac.Sum(nil))
		return call(t, ak+"@1", "authorization", h, "x-mq-date-time", date)
	}
	send := func(ctx context.Context, topic string) *v2.Status {
		r, err := c.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{v5Message(topic, "x")}})
		require.NoError(t, err)
		return r.GetStatus()
	}
	require.Equal(t, v2.Code_UNAUTHORIZED, send(call(t, "anon@1"), "granted").GetCode(), "no credentials")
	require.Equal(t, v2.Code_UNAUTHORIZED, send(signed("alice", "wrong"), "granted").GetCode(), "bad signature")
	require.Equal(t, v2.Code_UNAUTHORIZED, send(signed("mallory", "x"), "granted").GetCode(), "unknown user")
	require.Equal(t, v2.Code_OK, send(signed("alice", "alice-secret"), "granted").GetCode())
	st403 := send(signed("alice", "alice-secret"), "other")
	require.Equal(t, v2.Code_UNAUTHORIZED, st403.GetCode())
	require.True(t, strings.Contains(st403.GetMessage(), "no permission"), st403.GetMessage())
	status, _ := receiveAll(t, c, signed("alice", "alice-secret"), receiveReq("cg_alice", "granted", false))
	require.Equal(t, v2.Code_UNAUTHORIZED, status.GetCode(), "receive without Sub")
	// The Java client's form: upper-case hex, no region suffix; the super user passes everything.
	date := time.Now().Format("20060102T150405Z")
	mac := hmac.New(sha1.New, []byte("root-secret"))
	mac.Write([]byte(date))
	h := "MQv2-HMAC-SHA1 Credential=root, SignedHeaders=x-mq-date-time, Signature=" + strings.ToUpper(hex.EncodeToString(mac.Sum(nil)))
	require.Equal(t, v2.Code_OK, send(call(t, "root@1", "authorization", h, "x-mq-date-time", date), "other").GetCode())
	// Headers that do not parse: the proxy's messages, not "username cannot be null.".
	for _, tc := range []struct{ header, date, want string }{
		{h, "", "datetime is null"},
		{"MQv2-HMAC-SHA1", date, "authentication header is incorrect"},
		{"MQv2-HMAC-SHA1 Credential=root, SignedHeaders", date, "authentication keyValues length is incorrect, actual length=1"},
		{"MQv2-HMAC-SHA1 Credential=root, SignedHeaders=x-mq-date-time, Signature=zz", date, "create authentication context error."},
	} {
		kv := []string{"authorization", tc.header}
		if tc.date != "" {
			kv = append(kv, "x-mq-date-time", tc.date)
		}
		st := send(call(t, "root@1", kv...), "other")
		require.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode(), tc.header)
		require.Equal(t, tc.want, st.GetMessage(), tc.header)
	}
}

// The process relays the core's transaction checks to a v5 producer over
// its Telemetry stream (RecoverOrphanedTransactionCommand), and the
// producer's EndTransaction from the check commits the half.
func TestGRPCTransactionCheckInStack(t *testing.T) {
	cfg := stacktest.Config(t.TempDir())
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.TransactionCheckInterval = 50 * time.Millisecond
	st := stacktest.Start(t, cfg)
	topic, group := "stack_txn", "stack_txn_cg"
	done := make(chan error, 1)
	st.Broker.CreateTopic(broker.CreateTopicRequest{Topic: topic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6,
		Attributes: "+message.type=TRANSACTION"}, func(err error) { done <- err })
	require.NoError(t, <-done)
	c := grpcClient(t, st, false)
	tel, err := c.Telemetry(call(t, "txp@1"))
	require.NoError(t, err)
	require.NoError(t, tel.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
		ClientType: ptrTo(v2.ClientType_PRODUCER),
		PubSub:     &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: topic}}}}}}}))
	reply, err := tel.Recv()
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, reply.GetStatus().GetCode(), "%v", reply)
	m := v5Message(topic, "orphan")
	m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
	sr, err := c.SendMessage(call(t, "txp@1"), &v2.SendMessageRequest{Messages: []*v2.Message{m}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), "%v", sr)
	st.Broker.AdvanceClock(6_001)
	var cmd *v2.RecoverOrphanedTransactionCommand
	for cmd == nil {
		item, err := tel.Recv() // bounded by the call's context
		require.NoError(t, err)
		cmd = item.GetRecoverOrphanedTransactionCommand()
	}
	require.Equal(t, sr.GetEntries()[0].GetTransactionId(), cmd.GetTransactionId())
	require.Equal(t, "orphan", string(cmd.GetMessage().GetBody()))
	er, err := c.EndTransaction(call(t, "txp@1"), &v2.EndTransactionRequest{Topic: &v2.Resource{Name: topic},
		MessageId: m.GetSystemProperties().GetMessageId(), TransactionId: cmd.GetTransactionId(),
		Resolution: v2.TransactionResolution_COMMIT, Source: v2.TransactionSource_SOURCE_SERVER_CHECK})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, er.GetStatus().GetCode(), "%v", er)
	status, msgs := receiveAll(t, c, call(t, "txc@1"), receiveReq(group, topic, false))
	require.Equal(t, v2.Code_OK, status.GetCode(), "%v", status)
	require.Len(t, msgs, 1)
	require.Equal(t, "orphan", string(msgs[0].GetBody()))
}

// A delivery timestamp may lie as far ahead as --timer-max-delay-sec, as
// on remoting, not only the proxy's 1 day; beyond it ILLEGAL_DELIVERY_TIME
// naming the bound in ms.
func TestGRPCDeliveryTimeFollowsTimerMaxDelay(t *testing.T) {
	cfg := stacktest.Config(t.TempDir())
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.TimerMaxDelaySec = 2 * 24 * 3600
	st := stacktest.Start(t, cfg)
	c := grpcClient(t, st, false)
	topic := "stack_grpc_delay"
	done := make(chan error, 1)
	st.Broker.CreateTopic(broker.CreateTopicRequest{Topic: topic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6,
		Attributes: "+message.type=DELAY"}, func(err error) { done <- err })
	require.NoError(t, <-done)
	send := func(ahead time.Duration) *v2.SendMessageResponse {
		m := v5Message(topic, "d")
		m.SystemProperties.MessageType = v2.MessageType_DELAY
		m.SystemProperties.DeliveryTimestamp = timestamppb.New(time.Now().Add(ahead))
		r, err := c.SendMessage(call(t, "d@1"), &v2.SendMessageRequest{Messages: []*v2.Message{m}})
		require.NoError(t, err)
		return r
	}
	r := send(36 * time.Hour) // over the proxy's day, within the broker's two
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), "%v", r)
	r = send(49 * time.Hour)
	require.Equal(t, v2.Code_ILLEGAL_DELIVERY_TIME, r.GetStatus().GetCode(), "%v", r)
	require.Contains(t, r.GetStatus().GetMessage(), "max is 172800000")
}

// Consumers of the gRPC endpoint show in rocketmq_consumer_connections as
// protocol_type="grpc", with their language and the version the proxy
// would register: an MQVersion name in x-mq-client-version, else the
// server's own version (an SDK's "5.0.7").
func TestGRPCConsumerConnectionsLabels(t *testing.T) {
	cfg := stacktest.Config(t.TempDir())
	cfg.GRPCListen = "127.0.0.1:0"
	st := stacktest.Start(t, cfg)
	c := grpcClient(t, st, false)
	group := "stack_grpc_conn_cg"
	for id, ver := range map[string]string{"cc@1": "5.0.7", "cc@2": "v5_2_0"} {
		r, err := c.Heartbeat(call(t, id, "x-mq-client-version", ver),
			&v2.HeartbeatRequest{Group: &v2.Resource{Name: group}, ClientType: v2.ClientType_SIMPLE_CONSUMER})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), "%v", r)
	}
	resp, err := http.Get("http://" + st.MetricsAddr() + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "rocketmq_consumer_connections{") && strings.Contains(l, group) {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2, "%v", lines)
	for _, want := range []string{`version="v5_3_3"`, `version="v5_2_0"`} {
		found := false
		for _, l := range lines {
			if strings.Contains(l, want) {
				found = true
				require.Contains(t, l, `protocol_type="grpc"`)
				require.Contains(t, l, `language="go"`)
				require.True(t, strings.HasSuffix(l, " 1"), l)
			}
		}
		require.True(t, found, "%s in %v", want, lines)
	}
}
