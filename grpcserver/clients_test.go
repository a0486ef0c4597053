package grpcserver

import (
	"errors"
	"slices"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Heartbeat registers a consumer's group (the type from its Settings) in
// the core's client table under the connection; the registration leaves
// when the connection closes. A producer registers its topics.
func TestHeartbeatRegistersAndConnectionCloseReleases(t *testing.T) {
	f := newFixture(t, nil, nil)
	cc2, c2 := dialConn(t, f.addr) // a second connection, closed below
	group := unique("cg_hb")
	settingsRoundTrip(t, c2, "hb@1", goSimpleSettings(group, "TopicA"))
	r, err := c2.Heartbeat(f.ctx("hb@1"), &v2.HeartbeatRequest{Group: &v2.Resource{Name: group}, ClientType: v2.ClientType_SIMPLE_CONSUMER})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("%v %v", r, err)
	}
	if ids := f.core.Broker.Clients.ConsumerIDs(group); !slices.Equal(ids, []string{"hb@1"}) {
		t.Fatalf("consumers of %s: %v", group, ids)
	}
	if _, ok := f.core.Broker.Topics.Get("%RETRY%" + group); !ok {
		t.Error("the group's retry topic was not created")
	}
	// A producer heartbeat (the Go push consumer's SIMPLE_CONSUMER type is overridden by Settings likewise).
	settingsRoundTrip(t, f.c, "prod@1", goProducerSettings("TopicP"))
	if r, _ := f.c.Heartbeat(f.ctx("prod@1"), &v2.HeartbeatRequest{ClientType: v2.ClientType_PRODUCER}); r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("producer: %v", r)
	}
	// Refusals.
	if r, _ := f.c.Heartbeat(f.ctx(""), &v2.HeartbeatRequest{}); r.GetStatus().GetCode() != v2.Code_CLIENT_ID_REQUIRED {
		t.Errorf("no client id: %v", r)
	}
	if r, _ := f.c.Heartbeat(f.ctx("x@1"), &v2.HeartbeatRequest{Group: &v2.Resource{Name: "a b"},
		ClientType: v2.ClientType_SIMPLE_CONSUMER}); r.GetStatus().GetCode() != v2.Code_ILLEGAL_CONSUMER_GROUP {
		t.Errorf("bad group: %v", r)
	}
	if err := cc2.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(500, func() bool { return len(f.core.Broker.Clients.ConsumerIDs(group)) == 0 }) {
		t.Errorf("consumer still registered after its connection closed: %v", f.core.Broker.Clients.ConsumerIDs(group))
	}
}

// NotifyClientTermination removes the consumer's registration.
func TestNotifyClientTerminationUnregisters(t *testing.T) {
	f := newFixture(t, nil, nil)
	group := unique("cg_term")
	settingsRoundTrip(t, f.c, "term@1", goSimpleSettings(group, "TopicA"))
	if _, err := f.c.Heartbeat(f.ctx("term@1"), &v2.HeartbeatRequest{Group: &v2.Resource{Name: group}, ClientType: v2.ClientType_SIMPLE_CONSUMER}); err != nil {
		t.Fatal(err)
	}
	if len(f.core.Broker.Clients.ConsumerIDs(group)) != 1 {
		t.Fatal("not registered")
	}
	r, err := f.c.NotifyClientTermination(f.ctx("term@1"), &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: group}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("%v %v", r, err)
	}
	if ids := f.core.Broker.Clients.ConsumerIDs(group); len(ids) != 0 {
		t.Errorf("still registered: %v", ids)
	}
}

// ForwardMessageToDeadLetterQueue stores a copy in %DLQ%group and acks
// the original, which never comes back.
func TestForwardToDeadLetterQueue(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("dlq"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "poison", "T"))
	m := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 5)[0]
	req := &v2.ForwardMessageToDeadLetterQueueRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
		ReceiptHandle: handleOf(m), MessageId: m.GetSystemProperties().GetMessageId(), DeliveryAttempt: 1, MaxDeliveryAttempts: 16}
	r, err := f.c.ForwardMessageToDeadLetterQueue(f.ctx("c@1"), req)
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("%v %v", r, err)
	}
	dlq := "%DLQ%" + group
	if n, _ := f.core.Broker.MaxOffset(dlq, 0); n != 1 {
		t.Fatalf("%s holds %d messages, want 1", dlq, n)
	}
	got := f.receiveN("d@1", simpleReceive(unique("cg_dlq_reader"), dlq, 5*time.Second), 1, 5)[0]
	if string(got.GetBody()) != "poison" {
		t.Errorf("DLQ copy %v", got)
	}
	f.core.Broker.AdvanceClock(11_000)
	f.checkNoMessage(group, topic)
	// A handle without the commit-log offset cannot be forwarded; nor garbage.
	ei, _ := ParseReceiptHandle(handleOf(m))
	for _, h := range []string{RemotingExtraInfo(ei), "x"} {
		req.ReceiptHandle = h
		if r, _ := f.c.ForwardMessageToDeadLetterQueue(f.ctx("c@1"), req); r.GetStatus().GetCode() != v2.Code_INVALID_RECEIPT_HANDLE {
			t.Errorf("%q: %v", h, r)
		}
	}
}

// FIFO: an orderly group receives a message group in send order; the
// queue stays blocked while a message is in flight and the redelivery
// carries delivery attempt 2.
func TestFifoReceive(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("fifo"), unique("cg_fifo")
	f.createTopic(topic, 2, "FIFO")
	f.createOrderlyGroup(group)
	for i := 0; i < 4; i++ {
		m := message(topic, "m"+string(rune('0'+i)), "T")
		m.SystemProperties.MessageGroup = ptr("g")
		f.send("p@1", m)
	}
	req := simpleReceive(group, topic, 5*time.Second)
	req.AttemptId = ptr("attempt-1")
	got := f.receiveN("c@1", req, 4, 5)
	for i, m := range got {
		if string(m.GetBody()) != "m"+string(rune('0'+i)) || m.GetSystemProperties().GetMessageGroup() != "g" {
			t.Fatalf("message %d: %v", i, m)
		}
	}
	req.AttemptId = ptr("attempt-2")
	if r := f.receive(f.ctx("c@1"), simpleReceiveNoPoll(req)); r.status.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
		t.Fatalf("queue not blocked while its messages are in flight: %+v", r)
	}
	f.ack("c@1", group, topic, got[0], handleOf(got[0]))
	f.core.Broker.AdvanceClock(11_000)
	back := f.receiveN("c@1", req, 3, 10)
	if string(back[0].GetBody()) != "m1" || back[0].GetSystemProperties().GetDeliveryAttempt() != 2 {
		t.Errorf("redelivery %v", back[0])
	}
}

// simpleReceiveNoPoll returns req without long polling.
func simpleReceiveNoPoll(req *v2.ReceiveMessageRequest) *v2.ReceiveMessageRequest {
	c := proto.Clone(req).(*v2.ReceiveMessageRequest)
	c.LongPollingTimeout = durationpb.New(0)
	return c
}

// The server can push a command on a client's open Telemetry stream
// (kept for the orphaned-transaction recovery); a client without one is
// ErrNoTelemetry.
func TestPushCommand(t *testing.T) {
	f := newFixture(t, nil, nil)
	stream, _ := settingsRoundTrip(t, f.c, "push@1", goProducerSettings("T"))
	cmd := &v2.TelemetryCommand{Command: &v2.TelemetryCommand_PrintThreadStackTraceCommand{
		PrintThreadStackTraceCommand: &v2.PrintThreadStackTraceCommand{Nonce: "n-1"}}}
	if err := f.srv.PushCommand("push@1", cmd); err != nil {
		t.Fatal(err)
	}
	got, err := stream.Recv()
	if err != nil || got.GetPrintThreadStackTraceCommand().GetNonce() != "n-1" {
		t.Fatalf("%v %v", got, err)
	}
	// The client's answer is read and ignored; the stream stays usable.
	if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_ThreadStackTrace{
		ThreadStackTrace: &v2.ThreadStackTrace{Nonce: "n-1"}}}); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.PushCommand("nobody@1", cmd); !errors.Is(err, ErrNoTelemetry) {
		t.Errorf("unknown client: %v", err)
	}
}

// A client with no connection and no heartbeat for ClientExpiry is
// forgotten by the background sweep, and its leases released.
func TestClientExpiry(t *testing.T) {
	f := newFixture(t, nil, nil)
	svc := f.srv.svc
	now := f.core.Broker.Now()
	svc.clients.heartbeat("idle@1", now)
	svc.clients.heartbeat("fresh@1", now+ClientExpiry.Milliseconds())
	gone := svc.clients.expire(now+ClientExpiry.Milliseconds()+1, ClientExpiry.Milliseconds())
	if len(gone) != 1 || gone[0] != "idle@1" {
		t.Fatalf("expired %v, want [idle@1]", gone)
	}
}

// One connection is tracked for at most maxClientsPerConn client ids;
// calls with more ids are still served.
func TestClientIDsPerConnectionBounded(t *testing.T) {
	f := newFixture(t, nil, nil)
	for i := 0; i < maxClientsPerConn+10; i++ {
		id := "many@" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		r, err := f.c.QueryRoute(f.ctx(id), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "bounded"}, Endpoints: accessPoint})
		if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
			t.Fatalf("call %d: %v %v", i, r, err)
		}
	}
	svc := f.srv.svc
	svc.clients.mu.Lock()
	n := len(svc.clients.m)
	svc.clients.mu.Unlock()
	if n != maxClientsPerConn {
		t.Errorf("%d clients tracked, want %d", n, maxClientsPerConn)
	}
}
