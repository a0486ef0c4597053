package grpcserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/popstore"
)

// A ReceiveMessage the client cancels while its POP is parked releases
// the parked poll at once; a later message goes to the next receive.
func TestReceiveCancelledWhileParked(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("cancel"), unique("cg")
	f.createTopic(topic, 1, "")
	ctx, cancel := context.WithCancel(withClient(context.Background(), "c@1"))
	rs, err := f.c.ReceiveMessage(ctx, simpleReceive(group, topic, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	polls := f.core.Broker.Polls
	if !waitFor(500, func() bool { return polls.ParkedCount() == 1 }) {
		t.Fatalf("receive never parked: %d parked", polls.ParkedCount())
	}
	cancel()
	if _, err := rs.Recv(); err == nil {
		t.Fatal("cancelled stream delivered")
	}
	if !waitFor(500, func() bool { return polls.ParkedCount() == 0 }) {
		t.Fatalf("parked poll kept after the client cancelled: %d", polls.ParkedCount())
	}
	f.send("p@1", message(topic, "after", "T"))
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 3)
	if string(got[0].GetBody()) != "after" || got[0].GetSystemProperties().GetDeliveryAttempt() != 1 {
		t.Errorf("%v", got[0])
	}
}

// gateHook blocks every synced store write while armed, until opened or
// the test ends (t.Context is cancelled before the cleanups stop the core,
// so a failing test does not leave the writer held).
type gateHook struct {
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	ended   <-chan struct{}
}

func newGateHook(t *testing.T) *gateHook {
	return &gateHook{entered: make(chan struct{}, 64), release: make(chan struct{}), ended: t.Context().Done()}
}

// open disarms the gate and lets every held write go on; idempotent.
func (g *gateHook) open() {
	g.once.Do(func() { g.armed.Store(false); close(g.release) })
}

func (g *gateHook) hook(_ uint64, write func() error) error {
	if g.armed.Load() {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		select {
		case <-g.release:
		case <-g.ended:
		}
	}
	return write()
}

// A ReceiveMessage the client cancels while its POP waits for reply room
// (the remoting listener's bound is reached) stops looking for room at
// once, as a parked one is released: no further POP run, nothing taken
// when room is back, and the next receive gets the message.
func TestReceiveCancelledWhileWaitingForRoom(t *testing.T) {
	f := newFixture(t, nil, nil)
	var room atomic.Int64 // none until the cancelled receive is gone
	f.core.Broker.Settings.ReplyRoom = room.Load
	topic, group := unique("room"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"))

	runs := func() uint64 { return f.core.Broker.Polls.Stats().PopRuns }
	ctx, cancel := context.WithCancel(withClient(context.Background(), "c@1"))
	defer cancel()
	rs, err := f.c.ReceiveMessage(ctx, simpleReceive(group, topic, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !waitFor(500, func() bool { return runs() >= 3 }) {
		t.Fatalf("the receive does not look for room every 100 ms: %d runs", runs())
	}
	cancel()
	if _, err := rs.Recv(); err == nil {
		t.Fatal("cancelled stream delivered")
	}
	if !waitFor(500, func() bool { return f.srv.svc.abandoned.Load() == 1 }) {
		t.Fatal("the handler did not see the cancellation")
	}
	time.Sleep(200 * time.Millisecond)
	stopped := runs()
	time.Sleep(400 * time.Millisecond)
	if n := runs(); n != stopped {
		t.Fatalf("the cancelled receive still looks for room: %d more runs", n-stopped)
	}
	room.Store(1 << 30)
	time.Sleep(300 * time.Millisecond) // three retry periods with room
	if n := runs(); n != stopped {
		t.Fatalf("the cancelled receive ran again once room was back: %d more runs", n-stopped)
	}
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 10)
	if string(got[0].GetBody()) != "m0" {
		t.Fatalf("%v", got[0])
	}
}

// A ReceiveMessage abandoned while its POP is being written (the POP
// answers after the client left) loses nothing: the popped message is
// made visible again at once and the next receive gets it.
func TestReceiveAbandonedMidPop(t *testing.T) {
	gate := newGateHook(t)
	ccfg := brokertest.Config(t.TempDir())
	core := brokertest.Start(t, ccfg, popstore.WriteHook(gate.hook))
	cfg := DefaultConfig()
	cfg.Core = core.Broker
	cfg.Receive.MinLongPolling = 0
	srv, addr := startServer(t, cfg)
	f := &fixture{t: t, core: core, srv: srv, addr: addr, c: dial(t, addr, false)}
	topic, group := unique("midpop"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"))

	gate.armed.Store(true)
	ctx, cancel := context.WithCancel(withClient(context.Background(), "c@1"))
	rs, err := f.c.ReceiveMessage(ctx, simpleReceive(group, topic, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.entered: // the POP's checkpoint write is held
	case <-time.After(callBound):
		t.Fatal("the POP never wrote")
	}
	cancel()
	if _, err := rs.Recv(); err == nil {
		t.Fatal("cancelled stream delivered")
	}
	// Let the client's cancellation reach the server handler before the POP answers.
	if !waitFor(500, func() bool { return f.srv.svc.abandoned.Load() == 1 }) {
		t.Fatal("the handler did not see the cancellation")
	}
	gate.open()
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 10)
	if string(got[0].GetBody()) != "m0" {
		t.Fatalf("%v", got[0])
	}
}

// failingStream is a ReceiveMessage stream whose writes fail after ok
// items (a client that went away mid-stream).
type failingStream struct {
	grpc.ServerStream
	ctx context.Context
	ok  int
}

func (s *failingStream) Context() context.Context { return s.ctx }

func (s *failingStream) Send(*v2.ReceiveMessageResponse) error {
	if s.ok == 0 {
		return errors.New("stream broken")
	}
	s.ok--
	return nil
}

// Messages a receive popped but could not write are made visible again.
func TestReceiveWriteFailureReleases(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("wfail"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"), message(topic, "m1", "T"), message(topic, "m2", "T"))
	// Status and the first message are written, then the stream breaks.
	in := metadata.NewIncomingContext(t.Context(), metadata.Pairs(MetaClientID, "c@1"))
	st := &failingStream{ctx: in, ok: 2}
	if err := f.srv.svc.ReceiveMessage(simpleReceive(group, topic, 5*time.Second), st); err == nil {
		t.Fatal("no error from a broken stream")
	}
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 2, 10)
	for _, m := range got {
		if string(m.GetBody()) == "m0" {
			t.Errorf("the written message came back before its invisible time: %v", m)
		}
	}
}

// A client that opens many Telemetry streams and never ends them, and
// many idle connections, leave the server serving; GracefulStop still
// completes and ends them.
func TestHostileStreams(t *testing.T) {
	f := newFixture(t, nil, nil)
	const n = 200
	for i := 0; i < n; i++ {
		s, _ := settingsRoundTrip(t, f.c, "tele@"+string(rune('a'+i%26))+string(rune('a'+i/26)), goProducerSettings("T"))
		_ = s // kept open
	}
	for i := 0; i < 20; i++ {
		dialConn(t, f.addr) // idle connections
	}
	// A never-ending stream of Settings items on one stream is answered item by item.
	s, _ := settingsRoundTrip(t, f.c, "chatty@1", goProducerSettings("T"))
	for i := 0; i < 100; i++ {
		if err := s.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: goProducerSettings("T")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.srv.TelemetryStreams(); got != n+1 {
		t.Errorf("%d telemetry streams, want %d", got, n+1)
	}
	r, err := f.c.QueryRoute(f.ctx("r@1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: unique("still")}, Endpoints: accessPoint})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("server stopped serving: %v %v", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	if err := f.srv.GracefulStop(ctx); err != nil {
		t.Fatalf("GracefulStop: %v", err)
	}
	if got := f.srv.TelemetryStreams(); got != 0 {
		t.Errorf("%d streams after stop", got)
	}
}

// GracefulStop answers parked receives (MESSAGE_NOT_FOUND) instead of
// waiting for their poll to end.
func TestGracefulStopAnswersParkedReceive(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic := unique("stop")
	f.createTopic(topic, 1, "")
	done := make(chan received, 1)
	go func() { done <- f.receive(f.ctx("c@1"), simpleReceive("cg", topic, 20*time.Second)) }()
	if !waitFor(500, func() bool { return f.core.Broker.Polls.ParkedCount() == 1 }) {
		t.Fatal("never parked")
	}
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	if err := f.srv.GracefulStop(ctx); err != nil {
		t.Fatalf("GracefulStop: %v", err)
	}
	if r := <-done; r.status.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
		t.Errorf("%+v", r)
	}
}
