package grpcserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/popshim/popshim/broker/brokertest"
)

// callBound turns a hang into a failure; no assertion depends on it.
const callBound = 20 * time.Second

// selfSigned makes a throw-away certificate for 127.0.0.1 (the v5 clients
// do not verify the server certificate).
func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "grpcserver test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// startServer runs a Server on a free loopback port and stops it when the
// test ends.
func startServer(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Core == nil {
		cfg.Core = brokertest.Start(t, nil, nil).Broker
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(lis) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, lis.Addr().String()
}

// dial connects a client built from the generated package, in plaintext or
// with TLS (certificate not verified, as the Go and Java v5 clients do).
func dial(t *testing.T, addr string, useTLS bool) v2.MessagingServiceClient {
	t.Helper()
	creds := insecure.NewCredentials()
	if useTLS {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return v2.NewMessagingServiceClient(cc)
}

func withClient(ctx context.Context, id string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, MetaClientID, id, MetaLanguage, "GO", MetaClientVersion, "5.0.1-rc1")
}

// goProducerSettings / goSimpleSettings are the first Telemetry items of
// the Go v5 client (grpc-v5 reference §4.2).
func goProducerSettings(topic string) *v2.Settings {
	return &v2.Settings{
		ClientType:     ptr(v2.ClientType_PRODUCER),
		AccessPoint:    &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 8081}}},
		RequestTimeout: durationpb.New(3 * time.Second),
		BackoffPolicy: &v2.RetryPolicy{MaxAttempts: 3, Strategy: &v2.RetryPolicy_ExponentialBackoff{
			ExponentialBackoff: &v2.ExponentialBackoff{Initial: durationpb.New(0), Max: durationpb.New(0), Multiplier: 1}}},
		PubSub:    &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: topic}}}},
		UserAgent: &v2.UA{Language: v2.Language_GOLANG, Version: "5.0.1-rc1", Hostname: "h"},
	}
}

func goSimpleSettings(group, topic string) *v2.Settings {
	return &v2.Settings{
		ClientType:     ptr(v2.ClientType_SIMPLE_CONSUMER),
		RequestTimeout: durationpb.New(3 * time.Second),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{
			Group: &v2.Resource{Name: group},
			Subscriptions: []*v2.SubscriptionEntry{{Topic: &v2.Resource{Name: topic},
				Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}},
			LongPollingTimeout: durationpb.New(5 * time.Second),
		}},
	}
}

// settingsRoundTrip opens a Telemetry stream as client id, writes s and
// returns the server's reply item.
func settingsRoundTrip(t *testing.T, c v2.MessagingServiceClient, id string, s *v2.Settings) (v2.MessagingService_TelemetryClient, *v2.TelemetryCommand) {
	t.Helper()
	ctx, cancel := context.WithTimeout(withClient(context.Background(), id), callBound)
	t.Cleanup(cancel)
	stream, err := c.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: s}}); err != nil {
		t.Fatal(err)
	}
	reply, err := stream.Recv()
	if err != nil {
		t.Fatalf("settings reply: %v", err)
	}
	return stream, reply
}

func TestTelemetryProducerSettings(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	c := dial(t, addr, false)
	stream, reply := settingsRoundTrip(t, c, "host@1@0@abc", goProducerSettings("TopicA"))
	if reply.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("status %v", reply.GetStatus())
	}
	s := reply.GetSettings()
	pub := s.GetPublishing()
	if pub.GetMaxBodySize() != 4<<20 || !pub.GetValidateMessageType() || pub.GetTopics()[0].GetName() != "TopicA" {
		t.Errorf("publishing %v", pub)
	}
	exp := s.GetBackoffPolicy().GetExponentialBackoff()
	if s.GetBackoffPolicy().GetMaxAttempts() != 3 || exp.GetInitial().AsDuration() != 10*time.Millisecond ||
		exp.GetMax().AsDuration() != time.Second || exp.GetMultiplier() != 2 {
		t.Errorf("backoff %v", s.GetBackoffPolicy())
	}
	if s.GetMetric() == nil || s.GetMetric().GetOn() || s.GetClientType() != v2.ClientType_PRODUCER {
		t.Errorf("metric %v type %v", s.GetMetric(), s.GetClientType())
	}
	if got, ok := srv.ClientSettings("host@1@0@abc"); !ok || got.GetPublishing().GetMaxBodySize() != 0 {
		t.Errorf("stored settings %v %v (the client's own, unmerged)", got, ok)
	}
	// Settings again on the same stream (the clients re-send every 5 min).
	if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: goProducerSettings("TopicB")}}); err != nil {
		t.Fatal(err)
	}
	if r, err := stream.Recv(); err != nil || r.GetSettings().GetPublishing().GetTopics()[0].GetName() != "TopicB" {
		t.Fatalf("second reply %v %v", r, err)
	}
	// A half-close completes the stream.
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after CloseSend: %v, want EOF", err)
	}
}

func TestTelemetryConsumerSettings(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Settings.Group = func(g string) (GroupPolicy, bool) {
		if g != "orderly" {
			return GroupPolicy{}, false
		}
		return GroupPolicy{RetryMaxTimes: 3, Orderly: true,
			Exponential: &ExponentialPolicy{Initial: time.Second, Max: time.Minute, Multiplier: 3}}, true
	}
	_, addr := startServer(t, cfg)
	c := dial(t, addr, false)
	_, reply := settingsRoundTrip(t, c, "host@1@1@abc", goSimpleSettings("cg", "TopicA"))
	sub := reply.GetSettings().GetSubscription()
	if reply.GetStatus().GetCode() != v2.Code_OK || sub.GetReceiveBatchSize() != 32 ||
		sub.GetLongPollingTimeout().AsDuration() != 20*time.Second || sub.GetFifo() || sub.Fifo == nil {
		t.Fatalf("subscription %v", sub)
	}
	bp := reply.GetSettings().GetBackoffPolicy()
	next := bp.GetCustomizedBackoff().GetNext()
	if bp.GetMaxAttempts() != 17 || len(next) != 18 || next[0].AsDuration() != time.Second || next[17].AsDuration() != 2*time.Hour {
		t.Errorf("backoff %v", bp)
	}
	_, reply = settingsRoundTrip(t, c, "host@1@2@abc", goSimpleSettings("orderly", "TopicA"))
	bp = reply.GetSettings().GetBackoffPolicy()
	if !reply.GetSettings().GetSubscription().GetFifo() || bp.GetMaxAttempts() != 4 ||
		bp.GetExponentialBackoff().GetMultiplier() != 3 {
		t.Errorf("orderly group %v", reply.GetSettings())
	}
}

// Bad Settings fail the stream with INVALID_ARGUMENT, as the proxy does; a
// stream without a client id gets a CLIENT_ID_REQUIRED item first.
func TestTelemetryRefusals(t *testing.T) {
	_, addr := startServer(t, DefaultConfig())
	c := dial(t, addr, false)
	bad := []*v2.Settings{
		{ClientType: ptr(v2.ClientType_PRODUCER)},
		goProducerSettings("bad topic"),
		goSimpleSettings("", "T"),
	}
	for i, s := range bad {
		ctx, cancel := context.WithTimeout(withClient(context.Background(), "c"), callBound)
		stream, err := c.Telemetry(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: s}})
		_, err = stream.Recv()
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("settings %d: %v, want InvalidArgument", i, err)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	stream, err := c.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil || r.GetStatus().GetCode() != v2.Code_CLIENT_ID_REQUIRED {
		t.Fatalf("no client id: %v %v", r, err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no client id: %v", err)
	}
}

func TestNotifyClientTermination(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	c := dial(t, addr, false)
	stream, _ := settingsRoundTrip(t, c, "gone@1", goSimpleSettings("cg", "T"))
	ctx, cancel := context.WithTimeout(withClient(context.Background(), "gone@1"), callBound)
	defer cancel()
	r, err := c.NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: "cg"}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("%v %v", r, err)
	}
	if _, ok := srv.ClientSettings("gone@1"); ok {
		t.Error("settings kept after termination")
	}
	// Unknown clients are answered OK too; no client id is refused.
	r, _ = c.NotifyClientTermination(withClient(ctx, "never-seen"), &v2.NotifyClientTerminationRequest{})
	if r.GetStatus().GetCode() != v2.Code_OK {
		t.Errorf("unknown client: %v", r.GetStatus())
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), callBound)
	defer cancel2()
	r, _ = c.NotifyClientTermination(ctx2, &v2.NotifyClientTerminationRequest{})
	if r.GetStatus().GetCode() != v2.Code_CLIENT_ID_REQUIRED {
		t.Errorf("no client id: %v", r.GetStatus())
	}
	_ = stream.CloseSend()
}

// PullMessage and the offset RPCs answer UNIMPLEMENTED, as the proxy
// does; a request with a body 1 KiB over 4 MiB is read (the limit, the
// body bound plus RecvMsgMargin, is above grpc-go's 4 MiB default) and
// refused with a Status, not a transport error.
func TestUnimplementedAndLargeRequest(t *testing.T) {
	_, addr := startServer(t, DefaultConfig())
	c := dial(t, addr, false)
	ctx, cancel := context.WithTimeout(withClient(context.Background(), "u@1"), callBound)
	defer cancel()
	big := goClientMessage("T", make([]byte, 4<<20+1<<10))
	r, err := c.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{big}}, grpc.MaxCallSendMsgSize(64<<20))
	if err != nil || r.GetStatus().GetCode() != v2.Code_MESSAGE_BODY_TOO_LARGE {
		t.Fatalf("SendMessage of 4 MiB + 1 KiB: %v %v", r, err)
	}
	ps, err := c.PullMessage(ctx, &v2.PullMessageRequest{})
	if err == nil {
		_, err = ps.Recv()
	}
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("PullMessage: %v", err)
	}
	if _, err := c.UpdateOffset(ctx, &v2.UpdateOffsetRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("UpdateOffset: %v", err)
	}
	if _, err := c.GetOffset(ctx, &v2.GetOffsetRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("GetOffset: %v", err)
	}
	if _, err := c.QueryOffset(ctx, &v2.QueryOffsetRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("QueryOffset: %v", err)
	}
}

// GracefulStop ends open Telemetry streams (which never end by themselves)
// and returns without forcing connections closed.
func TestGracefulStopEndsTelemetry(t *testing.T) {
	srv, addr := startServer(t, DefaultConfig())
	c := dial(t, addr, false)
	stream, _ := settingsRoundTrip(t, c, "stop@1", goProducerSettings("T"))
	if n := srv.TelemetryStreams(); n != 1 {
		t.Fatalf("%d open streams", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	if err := srv.GracefulStop(ctx); err != nil {
		t.Fatalf("GracefulStop: %v (had to force)", err)
	}
	if _, err := stream.Recv(); err == nil {
		t.Fatal("stream still delivers after stop")
	} else if !errors.Is(err, io.EOF) && status.Code(err) != codes.Unavailable {
		t.Fatalf("stream end: %v", err)
	}
	if n := srv.TelemetryStreams(); n != 0 {
		t.Errorf("%d streams left", n)
	}
	if err := srv.GracefulStop(ctx); err != nil {
		t.Errorf("second GracefulStop: %v", err)
	}
}
