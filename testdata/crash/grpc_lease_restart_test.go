//go:build crash

package crash

import (
	"context"
	"syscall"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// leaseCtx is a call context of v5 client id.
func leaseCtx(id string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	return metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", id), cancel
}

// leaseReceive is one ReceiveMessage of client id: a push consumer's
// (auto_renew, no invisible duration) or a simple consumer's (10 s).
func leaseReceive(c v2.MessagingServiceClient, id, topic, group string, push bool) []*v2.Message {
	ctx, cancel := leaseCtx(id)
	defer cancel()
	req := &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: group},
		MessageQueue:     &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 16,
		LongPollingTimeout: durationpb.New(time.Second)}
	if push {
		req.AutoRenew = true
	} else {
		req.InvisibleDuration = durationpb.New(10 * time.Second)
	}
	rs, err := c.ReceiveMessage(ctx, req)
	if err != nil {
		return nil
	}
	return drainReceive(rs)
}

// TestGracefulRestartKeepsPushLeases: a v5 push consumer (auto_renew)
// holds a message while popshim restarts with SIGTERM. The message does
// not come back to another consumer after the restart (the lease table was
// saved and loaded), and the push consumer's ack with the handle it was
// given succeeds; nothing comes back afterwards.
func TestGracefulRestartKeepsPushLeases(t *testing.T) {
	bin := popshimBin(t)
	dir, logDir, addr, gaddr := t.TempDir(), t.TempDir(), freeAddr(t), freeAddr(t)
	b := start(t, bin, dir, logDir, addr, 1, "--grpc-listen", gaddr)
	c := grpcClient(t, gaddr)
	const topic, group = "LeaseRestart", "LeaseRestartG"
	ctx, cancel := leaseCtx("producer@1")
	r, err := c.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic}, Body: []byte("held"),
		SystemProperties: &v2.SystemProperties{MessageId: "01LEASE1", Tag: ptr("T"), BodyEncoding: v2.Encoding_IDENTITY,
			MessageType: v2.MessageType_NORMAL, BornTimestamp: timestamppb.Now(), BornHost: "crash"}}}})
	cancel()
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("send: %v %v\n%s", r.GetStatus(), err, b.tail())
	}
	var held []*v2.Message
	for deadline := time.Now().Add(waitFor); len(held) == 0 && time.Now().Before(deadline); {
		held = leaseReceive(c, "push@1", topic, group, true)
	}
	if len(held) != 1 {
		t.Fatalf("push consumer received %d messages\n%s", len(held), b.tail())
	}

	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(waitFor):
		t.Fatalf("popshim did not exit after SIGTERM\n%s", b.tail())
	}
	b = start(t, bin, dir, logDir, addr, 2, "--grpc-listen", gaddr)
	c = grpcClient(t, gaddr)
	// Released at shutdown it would be visible 1 s later: look for 8 s.
	for until := time.Now().Add(8 * time.Second); time.Now().Before(until); {
		if got := leaseReceive(c, "other@1", topic, group, false); len(got) > 0 {
			t.Fatalf("the leased message came back to another consumer after a graceful restart\n%s", b.tail())
		}
	}
	ctx, cancel = leaseCtx("push@1")
	ar, err := c.AckMessage(ctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
		Entries: []*v2.AckMessageEntry{{MessageId: "01LEASE1", ReceiptHandle: held[0].GetSystemProperties().GetReceiptHandle()}}})
	cancel()
	if err != nil || len(ar.GetEntries()) != 1 || ar.GetEntries()[0].GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("ack after the restart: %v %v\n%s", ar, err, b.tail())
	}
	for until := time.Now().Add(3 * time.Second); time.Now().Before(until); {
		if got := leaseReceive(c, "other@1", topic, group, false); len(got) > 0 {
			t.Fatalf("an acked message came back\n%s", b.tail())
		}
	}
}
