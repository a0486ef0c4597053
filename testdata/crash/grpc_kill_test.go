//go:build crash

package crash

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

const (
	grpcTopic = "CrashGRPC"
	grpcGroup = "CrashGRPCG"
)

// grpcLedger is what the gRPC clients were told before the kill.
type grpcLedger struct {
	mu    sync.Mutex
	sent  map[string]bool // message ids whose SendMessage entry was OK
	tried map[string]bool // message ids an AckMessage was sent for (its reply may have been cut off by the kill)
	acked map[string]bool // message ids whose AckMessage entry was OK
}

func grpcClient(t *testing.T, addr string) v2.MessagingServiceClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return v2.NewMessagingServiceClient(cc)
}

func grpcCtx(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, 20*time.Second)
	return metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "crash@1"), cancel
}

// grpcReceive is one ReceiveMessage (10 s invisible, the proxy's floor);
// an error (the broker died) returns what arrived.
func grpcReceive(parent context.Context, c v2.MessagingServiceClient, poll time.Duration) []*v2.Message {
	ctx, cancel := grpcCtx(parent)
	defer cancel()
	rs, err := c.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: grpcGroup},
		MessageQueue:     &v2.MessageQueue{Topic: &v2.Resource{Name: grpcTopic}, Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 16,
		InvisibleDuration: durationpb.New(10 * time.Second), LongPollingTimeout: durationpb.New(poll)})
	if err != nil {
		return nil
	}
	return drainReceive(rs)
}

// drainReceive reads a ReceiveMessage stream to its end (EOF or an error:
// the broker died) and returns the messages it carried.
func drainReceive(rs v2.MessagingService_ReceiveMessageClient) []*v2.Message {
	var out []*v2.Message
	for {
		item, err := rs.Recv()
		if errors.Is(err, io.EOF) || err != nil {
			return out
		}
		if m := item.GetMessage(); m != nil {
			out = append(out, m)
		}
	}
}

// TestKill9GRPC: producers and a consumer work through the gRPC endpoint
// while popshim gets SIGKILL. After the restart every message whose
// SendMessage entry was OK is delivered again, unless an AckMessage was
// sent for it before the kill (whose reply may have been lost), and no
// message whose AckMessage entry was OK is delivered again: an OK over
// gRPC, as over remoting, is sent only once the mutation is fsynced.
func TestKill9GRPC(t *testing.T) {
	bin := popshimBin(t)
	dir, logDir, addr, gaddr := t.TempDir(), t.TempDir(), freeAddr(t), freeAddr(t)
	b := start(t, bin, dir, logDir, addr, 1, "--grpc-listen", gaddr)
	c := grpcClient(t, gaddr)
	l := &grpcLedger{sent: map[string]bool{}, tried: map[string]bool{}, acked: map[string]bool{}}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var seq atomic.Int64
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				id := "01CRASH" + strconv.FormatInt(seq.Add(1), 10)
				m := &v2.Message{Topic: &v2.Resource{Name: grpcTopic}, Body: []byte(id), SystemProperties: &v2.SystemProperties{
					MessageId: id, Tag: ptr("T"), BodyEncoding: v2.Encoding_IDENTITY, MessageType: v2.MessageType_NORMAL,
					BornTimestamp: timestamppb.Now(), BornHost: "crash"}}
				cctx, cancel := grpcCtx(ctx)
				r, err := c.SendMessage(cctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
				cancel()
				if err == nil && r.GetStatus().GetCode() == v2.Code_OK {
					l.mu.Lock()
					l.sent[id] = true
					l.mu.Unlock()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for _, m := range grpcReceive(ctx, c, time.Second) {
				l.mu.Lock()
				l.tried[m.GetSystemProperties().GetMessageId()] = true
				l.mu.Unlock()
				cctx, cancel := grpcCtx(ctx)
				r, err := c.AckMessage(cctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: grpcGroup}, Topic: &v2.Resource{Name: grpcTopic},
					Entries: []*v2.AckMessageEntry{{MessageId: m.GetSystemProperties().GetMessageId(), ReceiptHandle: m.GetSystemProperties().GetReceiptHandle()}}})
				cancel()
				if err == nil && len(r.GetEntries()) == 1 && r.GetEntries()[0].GetStatus().GetCode() == v2.Code_OK {
					l.mu.Lock()
					l.acked[m.GetSystemProperties().GetMessageId()] = true
					l.mu.Unlock()
				}
			}
		}
	}()
	// Kill once enough traffic went through (bounded by waitFor).
	for deadline := time.Now().Add(waitFor); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		l.mu.Lock()
		enough := len(l.sent) >= 400 && len(l.acked) >= 100
		l.mu.Unlock()
		if enough {
			break
		}
	}
	b.kill(t)
	stop()
	wg.Wait()
	l.mu.Lock()
	sent, acked := len(l.sent), len(l.acked)
	l.mu.Unlock()
	if sent < 400 || acked < 100 {
		t.Fatalf("only %d sends and %d acks answered OK before the kill\n%s", sent, acked, b.tail())
	}

	b = start(t, bin, dir, logDir, addr, 2, "--grpc-listen", gaddr)
	c = grpcClient(t, gaddr)
	delivered := map[string]int{}
	// Popped, unacked messages come back after their 10 s invisible time;
	// the loop runs past it (so an acked message that came back would be
	// seen) and until every OK'd send is accounted for, or to the bound.
	settled := time.Now().Add(12 * time.Second)
	for deadline := time.Now().Add(waitFor); time.Now().Before(deadline); {
		for _, m := range grpcReceive(context.Background(), c, 2*time.Second) {
			id := m.GetSystemProperties().GetMessageId()
			delivered[id]++
			cctx, cancel := grpcCtx(context.Background())
			_, _ = c.AckMessage(cctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: grpcGroup}, Topic: &v2.Resource{Name: grpcTopic},
				Entries: []*v2.AckMessageEntry{{MessageId: id, ReceiptHandle: m.GetSystemProperties().GetReceiptHandle()}}})
			cancel()
		}
		missing := 0
		for id := range l.sent {
			if !l.tried[id] && delivered[id] == 0 {
				missing++
			}
		}
		if missing == 0 && time.Now().After(settled) {
			break
		}
	}
	lost, redelivered := 0, 0
	for id := range l.sent {
		// An ACK whose reply the kill cut off may have been applied: such a
		// message may or may not come back.
		if !l.tried[id] && delivered[id] == 0 {
			lost++
		}
	}
	for id := range l.acked {
		if delivered[id] > 0 {
			redelivered++
		}
	}
	if lost > 0 || redelivered > 0 {
		t.Errorf("after kill -9: %d OK'd sends never delivered, %d OK'd acks delivered again\n%s", lost, redelivered, b.tail())
	}
	t.Logf("%d sends and %d acks answered OK over gRPC before SIGKILL; after the restart %d delivered, %d lost, %d acked ones back",
		sent, acked, len(delivered), lost, redelivered)
}

func ptr[T any](v T) *T { return &v }
