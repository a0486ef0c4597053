package grpcserver

import (
	"bytes"
	"context"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// A ReceiveMessage stream whose client reads nothing holds its messages
// against the reply bound: while it does, another consumer's receive
// reads nothing; after stuckSendGrace with the bound reached its
// connection is closed, the held bytes return to zero, and every message
// is delivered to the healthy consumer (the stuck streams' come back
// visible). Before, the stream's messages counted nowhere: the healthy
// receive took the rest at once and 100 such streams held 4 GiB.
func TestUnreadReceiveStreamHeldAgainstReplyBound(t *testing.T) {
	f := newFixture(t, nil, nil)
	const bound = 1 << 20
	f.core.Broker.Settings.ReplyRoom = func() int64 { return bound }
	topic, group := unique("unread"), unique("cg")
	f.createTopic(topic, 1, "")
	body := bytes.Repeat([]byte("x"), 256<<10)
	for i := 0; i < 8; i++ {
		f.send("p@1", message(topic, string(body), "T"))
	}

	// The stuck client: a 64 KiB stream window (no dynamic window) and no
	// Recv after the stream opens.
	cc, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(withClient(context.Background(), "stuck@1"), 30*time.Second)
	defer cancel()
	held := func() int64 { return f.core.Broker.Svc.HeldReplyBytes() }
	// A read takes at most the room left (at least one message): the
	// first unread stream takes 3 messages, counted with the copy on the
	// transport; a second one takes the rest of the room, if any.
	var stuck []v2.MessagingService_ReceiveMessageClient
	for i, want := range []int64{3 * int64(len(body)), bound} {
		s, err := v2.NewMessagingServiceClient(cc).ReceiveMessage(ctx, simpleReceive(group, topic, 0))
		if err != nil {
			t.Fatal(err)
		}
		stuck = append(stuck, s)
		if !waitFor(250, func() bool { return held() >= want }) {
			t.Fatalf("stream %d: its messages are not held against the bound: %d bytes", i, held())
		}
	}
	if !waitFor(250, func() bool { return held() >= bound }) {
		t.Fatalf("the unread stream's messages are not held against the bound: %d bytes", held())
	}
	if left := f.core.Broker.Svc.ReplyRoomLeft(); left > 0 {
		t.Fatalf("room left %d with %d bytes held", left, held())
	}

	// A healthy consumer of another group waits, then gets all 8 messages
	// once the stuck connection is closed (its own deliveries count while
	// they are sent, and it reads them).
	other := unique("cg")
	r := f.receive(f.ctx("ok@1"), simpleReceive(other, topic, 0))
	if len(r.msgs) != 0 {
		t.Fatalf("a receive read %d messages while the bound was reached", len(r.msgs))
	}
	if !waitFor(400, func() bool { return held() == 0 }) {
		t.Fatalf("the stuck stream's connection was not closed: %d bytes held", held())
	}
	for _, s := range stuck { // what reached the client's window before the close, then the error
		for i := 0; i < 100; i++ {
			if _, err := s.Recv(); err != nil {
				break
			}
		}
	}
	got := f.receiveN("ok@1", simpleReceive(other, topic, 2*time.Second), 8, 20)
	if len(got) != 8 {
		t.Fatalf("healthy consumer got %d of 8", len(got))
	}
	// The stuck group's messages came back visible (released on the close).
	back := f.receiveN("again@1", simpleReceive(group, topic, 2*time.Second), 8, 20)
	if len(back) != 8 {
		t.Fatalf("the stuck stream's messages came back %d of 8", len(back))
	}
}
