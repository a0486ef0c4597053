package grpcserver

import (
	"context"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/popshim/popshim/broker/brokertest"
)

// benchFixture is a core and an endpoint for benchmarks.
func benchFixture(b *testing.B) (v2.MessagingServiceClient, *brokertest.Fixture) {
	core := brokertest.Start(b, nil, nil)
	cfg := DefaultConfig()
	cfg.Core = core.Broker
	cfg.Receive.MinLongPolling = 0
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	lis := listenLoopback(b)
	go func() { _ = s.Serve(lis) }()
	b.Cleanup(s.Stop)
	return dialB(b, lis.Addr().String()), core
}

// BenchmarkSendMessage: SendMessage of one 1 KiB message per call, many
// calls in flight (grpc-go client on loopback, real core and RocksDB);
// each OK means the message is fsynced.
func BenchmarkSendMessage(b *testing.B) {
	c, _ := benchFixture(b)
	body := make([]byte, 1024)
	ctx := withClient(context.Background(), "bench@1")
	b.SetBytes(int64(len(body)))
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := c.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{message("BenchTopic", string(body), "T")}})
			if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
				b.Errorf("send: %v %v", r, err)
				return
			}
		}
	})
}

// BenchmarkReceiveAck: receive batches of 32 and ack each message with
// one AckMessage per batch; b.N messages were sent before the timer.
func BenchmarkReceiveAck(b *testing.B) {
	c, _ := benchFixture(b)
	ctx := withClient(context.Background(), "bench@1")
	msgs := make([]*v2.Message, 0, 32)
	for i := 0; i < b.N; i++ {
		msgs = append(msgs, message("BenchRecv", "x", "T"))
		if len(msgs) == cap(msgs) || i == b.N-1 {
			if r, err := c.SendMessage(ctx, &v2.SendMessageRequest{Messages: msgs}); err != nil || r.GetStatus().GetCode() != v2.Code_OK {
				b.Fatalf("send: %v %v", r, err)
			}
			msgs = msgs[:0]
		}
	}
	req := &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: "bench_cg"},
		MessageQueue:     &v2.MessageQueue{Topic: &v2.Resource{Name: "BenchRecv"}, Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 32,
		InvisibleDuration: durationpb.New(time.Minute), LongPollingTimeout: durationpb.New(time.Second)}
	b.ResetTimer()
	for got, empty := 0, 0; got < b.N && empty < 10; {
		rs, err := c.ReceiveMessage(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		var entries []*v2.AckMessageEntry
		for {
			item, err := rs.Recv()
			if err != nil {
				break
			}
			if m := item.GetMessage(); m != nil {
				entries = append(entries, &v2.AckMessageEntry{MessageId: m.GetSystemProperties().GetMessageId(),
					ReceiptHandle: m.GetSystemProperties().GetReceiptHandle()})
			}
		}
		if len(entries) == 0 {
			empty++
			continue
		}
		r, err := c.AckMessage(ctx, &v2.AckMessageRequest{Group: req.Group, Topic: req.MessageQueue.Topic, Entries: entries})
		if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
			b.Fatalf("ack: %v %v", r, err)
		}
		got += len(entries)
	}
}
