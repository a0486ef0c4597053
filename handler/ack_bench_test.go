package handler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/stack/stacktest"
)

// BenchmarkAckPipelined measures pipelined ACK_MESSAGE round trips over
// one real TCP connection (64 in flight) against a real store and the
// group-commit writer: one message is popped, then its handle is acked
// b.N times (the first ACK deletes the checkpoint, the others are re-ACKs,
// the same blind delete, answered SUCCESS). ns/op is the round trip
// including the client; allocs/op counts the client and the server (the
// client's share is the same whatever the server does).
func BenchmarkAckPipelined(b *testing.B) {
	cfg := popConfig(b.TempDir())
	st := stacktest.Start(b, cfg)
	created := make(chan error, 1)
	if err := st.Broker.Topics.Create(popstore.TopicMeta{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6},
		func(err error) { created <- err }); err != nil {
		b.Fatal(err)
	}
	if err := <-created; err != nil {
		b.Fatal(err)
	}
	c, err := client.Dial(st.BrokerAddr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	invoke := func(req *codec.Command) *codec.Command {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		resp, err := c.Invoke(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	if resp := invoke(sendReq("T", 0, []byte("m"), sendOpts{})); resp.Code != codec.Success {
		b.Fatalf("send: %d %s", resp.Code, resp.Remark)
	}
	resp := invoke(popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 600_000}.request())
	msgs, err := codec.DecodeMessages(resp.Body)
	if resp.Code != codec.Success || err != nil || len(msgs) != 1 {
		b.Fatalf("pop: %d %s %v", resp.Code, resp.Remark, err)
	}
	raw, _ := msgs[0].Property(codec.PropertyPopCK)
	ei, err := codec.ParseExtraInfo(raw)
	if err != nil {
		b.Fatal(err)
	}
	p := popped{m: msgs[0], handle: ei, raw: raw}
	window := make(chan struct{}, 64)
	failed := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		window <- struct{}{}
		err := c.InvokeAsync(ackReq("G", "T", p), func(r *codec.Command, err error) {
			if err == nil && r.Code != codec.Success {
				err = fmt.Errorf("code %d: %s", r.Code, r.Remark)
			}
			if err != nil {
				select {
				case failed <- err:
				default:
				}
			}
			<-window
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for range cap(window) {
		window <- struct{}{}
	}
	b.StopTimer()
	select {
	case err := <-failed:
		b.Fatal(err)
	default:
	}
}
