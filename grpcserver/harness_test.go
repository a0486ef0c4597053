package grpcserver

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// fixture is one core (real RocksDB in t.TempDir, real writer) behind a
// Server on a loopback port, and a client from the generated package.
type fixture struct {
	t    *testing.T
	core *brokertest.Fixture
	srv  *Server
	addr string
	c    v2.MessagingServiceClient
}

// newFixture starts a core with conf adjusted by tune (nil: brokertest's
// defaults) and an endpoint with cfg adjusted by edit.
func newFixture(t *testing.T, tune func(*conf.Config), edit func(*Config)) *fixture {
	t.Helper()
	ccfg := brokertest.Config(t.TempDir())
	if tune != nil {
		tune(ccfg)
	}
	core := brokertest.Start(t, ccfg, nil)
	// Runs after the server stopped (cleanups run last-in first-out): every
	// delivery and read has given back what it held against the reply bound.
	t.Cleanup(func() {
		svc := core.Broker.Svc
		waitFor(100, func() bool { return svc.HeldReplyBytes() == 0 && svc.ReadingReplyBytes() == 0 })
		if h, r := svc.HeldReplyBytes(), svc.ReadingReplyBytes(); h != 0 || r != 0 {
			t.Errorf("after the server stopped: %d bytes of gRPC deliveries and %d of reads still count against the reply bound", h, r)
		}
	})
	cfg := DefaultConfig()
	cfg.Core = core.Broker
	cfg.Receive.MinLongPolling = 0 // a receive asking for no long poll answers at once
	if edit != nil {
		edit(&cfg)
	}
	srv, addr := startServer(t, cfg)
	t.Cleanup(srv.ServeTransactionChecks())
	return &fixture{t: t, core: core, srv: srv, addr: addr, c: dial(t, addr, false)}
}

// dialConn connects a plaintext client and returns its connection too,
// for tests that close it.
func dialConn(t *testing.T, addr string) (*grpc.ClientConn, v2.MessagingServiceClient) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc, v2.NewMessagingServiceClient(cc)
}

var fixtureSeq atomic.Int64

// unique returns a fresh resource name with prefix.
func unique(prefix string) string { return prefix + "_" + strconv.FormatInt(fixtureSeq.Add(1), 10) }

// ctx returns a call context as client id with callBound as deadline.
func (f *fixture) ctx(id string) context.Context {
	ctx, cancel := context.WithTimeout(withClient(context.Background(), id), callBound)
	f.t.Cleanup(cancel)
	return ctx
}

// createTopic creates topic on the core with queues queues and the given
// message.type ("" for none).
func (f *fixture) createTopic(topic string, queues int32, msgType string) {
	f.t.Helper()
	r := broker.CreateTopicRequest{Topic: topic, ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6}
	if msgType != "" {
		r.Attributes = "+message.type=" + msgType
	}
	if err := brokertest.Await0(f.t, func(done func(error)) { f.core.Broker.CreateTopic(r, done) }); err != nil {
		f.t.Fatalf("create topic %s: %v", topic, err)
	}
}

// message builds a message as the Go client sends it, with body, tag and
// an index property.
func message(topic, body, tag string) *v2.Message {
	m := goClientMessage(topic, []byte(body))
	m.SystemProperties.Tag = ptr(tag)
	m.SystemProperties.MessageId = "01" + strconv.FormatInt(time.Now().UnixNano(), 16) + strconv.FormatInt(fixtureSeq.Add(1), 10)
	m.SystemProperties.BornTimestamp = timestamppb.Now()
	return m
}

// send sends msgs in one call and fails the test unless every entry is OK.
func (f *fixture) send(id string, msgs ...*v2.Message) *v2.SendMessageResponse {
	f.t.Helper()
	r, err := f.c.SendMessage(f.ctx(id), &v2.SendMessageRequest{Messages: msgs})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		f.t.Fatalf("send: %v %v", r, err)
	}
	return r
}

// received is what one ReceiveMessage stream carried.
type received struct {
	status *v2.Status // the last Status item
	msgs   []*v2.Message
	stamps int // delivery_timestamp items
}

// receive runs one ReceiveMessage and reads the stream to its end.
func (f *fixture) receive(ctx context.Context, req *v2.ReceiveMessageRequest) received {
	f.t.Helper()
	return f.receiveWith(ctx, f.c, req)
}

// receiveWith is receive on client c.
func (f *fixture) receiveWith(ctx context.Context, c v2.MessagingServiceClient, req *v2.ReceiveMessageRequest) received {
	f.t.Helper()
	rs, err := c.ReceiveMessage(ctx, req)
	if err != nil {
		f.t.Fatalf("receive: %v", err)
	}
	var out received
	for {
		item, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			f.t.Fatalf("receive stream: %v (so far %+v)", err, out)
		}
		switch c := item.GetContent().(type) {
		case *v2.ReceiveMessageResponse_Status:
			out.status = c.Status
		case *v2.ReceiveMessageResponse_Message:
			out.msgs = append(out.msgs, c.Message)
		case *v2.ReceiveMessageResponse_DeliveryTimestamp:
			out.stamps++
		}
	}
}

// simpleReceive is a simple consumer's receive of topic for group: batch
// 32, invisible 10 s (the proxy's floor), long polling poll.
func simpleReceive(group, topic string, poll time.Duration) *v2.ReceiveMessageRequest {
	return &v2.ReceiveMessageRequest{
		Group:              &v2.Resource{Name: group},
		MessageQueue:       &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: 0, Broker: &v2.Broker{Name: brokertest.BrokerName}},
		FilterExpression:   &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"},
		BatchSize:          32,
		InvisibleDuration:  durationpb.New(10 * time.Second),
		LongPollingTimeout: durationpb.New(poll),
	}
}

// receiveN receives until n messages arrived (bounded by rounds
// receives), returning them.
func (f *fixture) receiveN(id string, req *v2.ReceiveMessageRequest, n, rounds int) []*v2.Message {
	f.t.Helper()
	var got []*v2.Message
	for i := 0; i < rounds && len(got) < n; i++ {
		r := f.receive(f.ctx(id), req)
		got = append(got, r.msgs...)
		if c := r.status.GetCode(); c != v2.Code_OK && c != v2.Code_MESSAGE_NOT_FOUND {
			f.t.Fatalf("receive: %v", r.status)
		}
	}
	if len(got) != n {
		f.t.Fatalf("received %d messages, want %d", len(got), n)
	}
	return got
}

// ack acks one message and returns the entry's Status.
func (f *fixture) ack(id, group, topic string, m *v2.Message, handle string) *v2.Status {
	f.t.Helper()
	r, err := f.c.AckMessage(f.ctx(id), &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
		Entries: []*v2.AckMessageEntry{{MessageId: m.GetSystemProperties().GetMessageId(), ReceiptHandle: handle}}})
	if err != nil || len(r.GetEntries()) != 1 {
		f.t.Fatalf("ack: %v %v", r, err)
	}
	return r.GetEntries()[0].GetStatus()
}

// handleOf is a message's receipt handle.
func handleOf(m *v2.Message) string { return m.GetSystemProperties().GetReceiptHandle() }

// waitFor polls cond until it holds, at most rounds times with a short
// sleep between; it reports whether it held. The bound only turns a hang
// into a failure.
func waitFor(rounds int, cond func() bool) bool {
	for i := 0; i < rounds; i++ {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// createOrderlyGroup creates group with consumeMessageOrderly (what
// mqadmin updateSubGroup -o true does).
func (f *fixture) createOrderlyGroup(group string) {
	f.t.Helper()
	c := codec.NewSubscriptionGroupConfig(group)
	c.ConsumeMessageOrderly = true
	err := brokertest.Await0(f.t, func(done func(error)) {
		f.core.Broker.UpdateSubscriptionGroups(broker.UpdateSubscriptionGroupsRequest{Configs: []codec.SubscriptionGroupConfig{c}}, done)
	})
	if err != nil {
		f.t.Fatalf("create group %s: %v", group, err)
	}
}

// listenLoopback listens on a free loopback port.
func listenLoopback(tb testing.TB) net.Listener {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return lis
}

// dialB connects a plaintext client for a benchmark.
func dialB(tb testing.TB, addr string) v2.MessagingServiceClient {
	tb.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cc.Close() })
	return v2.NewMessagingServiceClient(cc)
}
