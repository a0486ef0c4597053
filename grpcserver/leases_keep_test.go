package grpcserver

import (
	"context"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// restartEndpoint stops f's endpoint gracefully and starts a new one over
// the same core, as a graceful restart of the process would (the core's
// store keeps what the stop saved).
func (f *fixture) restartEndpoint() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.srv.GracefulStop(ctx); err != nil {
		f.t.Fatalf("GracefulStop: %v", err)
	}
	cfg := DefaultConfig()
	cfg.Core = f.core.Broker
	cfg.Receive.MinLongPolling = 0
	f.srv, f.addr = startServer(f.t, cfg)
	f.c = dial(f.t, f.addr, false)
}

// A graceful restart keeps a push consumer's leases: its messages stay
// invisible (not released at the stop), the renewals go on after the
// start, and the client's ack with its original handle acks the renewed
// checkpoint; a restored client that never comes back has its leases
// released after ClientExpiry.
func TestPushConsumerLeasesKeptAcrossGracefulRestart(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("keep"), unique("cg_keep")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"), message(topic, "m1", "T"))
	got := f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 2, 5)
	f.send("p@1", message(topic, "m2", "T"))
	lost := f.receiveN("gone@1", pushReceive(group, topic, 5*time.Second), 1, 5)

	f.restartEndpoint()
	if n := f.srv.svc.leases.held(); n != 3 {
		t.Fatalf("%d leases after the restart, want 3", n)
	}
	// Not released by the stop: nothing to receive a few seconds later.
	f.core.Broker.AdvanceClock(5_000)
	f.checkNoMessage(group, topic)
	// 55 s after the receive the scan renews them.
	f.core.Broker.AdvanceClock(50_000)
	f.srv.svc.backgroundPass()
	if !waitFor(500, func() bool {
		return f.leaseHandle("push@1", group, topic, got[0]) != handleOf(got[0]) &&
			f.leaseHandle("push@1", group, topic, got[1]) != handleOf(got[1])
	}) {
		t.Fatal("restored leases not renewed")
	}
	f.core.Broker.AdvanceClock(30_000) // past the first 60 s
	f.checkNoMessage(group, topic)
	for _, m := range got {
		if st := f.ack("push@1", group, topic, m, handleOf(m)); st.GetCode() != v2.Code_OK {
			t.Fatalf("ack after the restart: %v", st)
		}
	}
	if n := f.srv.svc.leases.held(); n != 1 {
		t.Fatalf("%d leases after the acks, want 1 (gone@1's)", n)
	}
	// gone@1 never called again: past ClientExpiry its lease is released
	// and m2 comes back to the group.
	f.core.Broker.AdvanceClock(ClientExpiry.Milliseconds() + 1_000)
	f.srv.svc.backgroundPass()
	if !waitFor(500, func() bool { return f.srv.svc.leases.held() == 0 }) {
		t.Fatal("a restored client's leases outlived ClientExpiry")
	}
	f.core.Broker.AdvanceClock(2_000)
	back := f.receiveN("other@1", simpleReceive(group, topic, 5*time.Second), 1, 10)
	if string(back[0].GetBody()) != string(lost[0].GetBody()) {
		t.Fatalf("came back %q, want %q", back[0].GetBody(), lost[0].GetBody())
	}
	// m0 and m1 never come back: their acks hit the renewed checkpoints.
	f.ack("other@1", group, topic, back[0], handleOf(back[0]))
	f.core.Broker.AdvanceClock(3_600_000)
	f.checkNoMessage(group, topic)
	// The saved table was cleared at the start: another restart restores nothing.
	f.restartEndpoint()
	if n := f.srv.svc.leases.held(); n != 0 {
		t.Fatalf("%d leases restored twice", n)
	}
}
