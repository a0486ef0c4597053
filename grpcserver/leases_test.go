package grpcserver

import (
	"errors"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/popshim/popshim/broker"
)

// pushReceive is a push consumer's receive: auto_renew, no invisible
// duration, an attempt id, long polling poll.
func pushReceive(group, topic string, poll time.Duration) *v2.ReceiveMessageRequest {
	r := simpleReceive(group, topic, poll)
	r.InvisibleDuration, r.AutoRenew, r.AttemptId = nil, true, ptr("push-attempt")
	r.MessageQueue.Id = -1
	return r
}

// leaseHandle returns the current handle of client id's lease of m, "" when none.
func (f *fixture) leaseHandle(id, group, topic string, m *v2.Message) string {
	ei, err := ParseReceiptHandle(handleOf(m))
	if err != nil {
		f.t.Fatal(err)
	}
	t := f.srv.svc.leases
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.byClient[id][keyOf(group, topic, ei)]; l != nil {
		return l.handle
	}
	return ""
}

// Auto-renew: a push consumer's message stays invisible past its first
// 60 s because the endpoint renews it durably; the client acks with its
// original handle, which the lease replaces; NotifyClientTermination
// releases what is still held.
func TestPushConsumerLeaseRenewAckRelease(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("push"), unique("cg_push")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"), message(topic, "m1", "T"))
	got := f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 2, 5)
	if n := f.srv.svc.leases.held(); n != 2 {
		t.Fatalf("%d leases, want 2", n)
	}
	ei, _ := ParseReceiptHandle(handleOf(got[0]))
	if ei.InvisibleTime != 60_000 {
		t.Fatalf("auto-renew receive invisible %d ms, want 60000", ei.InvisibleTime)
	}
	// 55 s later both are within 10 s of turning visible: the scan renews them.
	f.core.Broker.AdvanceClock(55_000)
	f.srv.svc.leases.scan()
	if !waitFor(500, func() bool {
		return f.leaseHandle("push@1", group, topic, got[0]) != handleOf(got[0]) &&
			f.leaseHandle("push@1", group, topic, got[1]) != handleOf(got[1])
	}) {
		t.Fatal("leases not renewed")
	}
	// Past the original 60 s: still invisible (the renewal is in the store, revive sees it).
	f.core.Broker.AdvanceClock(30_000)
	f.checkNoMessage(group, topic)
	// The client acks m0 with the handle it got: the lease's handle is used.
	if st := f.ack("push@1", group, topic, got[0], handleOf(got[0])); st.GetCode() != v2.Code_OK {
		t.Fatalf("ack: %v", st)
	}
	if n := f.srv.svc.leases.held(); n != 1 {
		t.Fatalf("%d leases after the ack, want 1", n)
	}
	// The client goes: m1 is released and comes back (to anyone of the group).
	if r, _ := f.c.NotifyClientTermination(f.ctx("push@1"), &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: group}}); r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("terminate: %v", r)
	}
	if n := f.srv.svc.leases.held(); n != 0 {
		t.Fatalf("%d leases after termination", n)
	}
	f.core.Broker.AdvanceClock(2_000)
	back := f.receiveN("other@1", simpleReceive(group, topic, 5*time.Second), 1, 10)
	if string(back[0].GetBody()) != "m1" {
		t.Fatalf("released %q, want m1", back[0].GetBody())
	}
	f.ack("other@1", group, topic, back[0], handleOf(back[0]))
	// m0 never comes back: its ack hit the renewed checkpoint.
	f.core.Broker.AdvanceClock(3_600_000)
	f.checkNoMessage(group, topic)
}

// A nack (ChangeInvisibleDuration) of a leased message uses the lease's
// handle too; the message comes back after the nack's delay.
func TestPushConsumerNackOfRenewedMessage(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("nack"), unique("cg_nack")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"))
	m := f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 1, 5)[0]
	f.core.Broker.AdvanceClock(55_000)
	f.srv.svc.leases.scan()
	if !waitFor(500, func() bool { return f.leaseHandle("push@1", group, topic, m) != handleOf(m) }) {
		t.Fatal("lease not renewed")
	}
	r, err := f.c.ChangeInvisibleDuration(f.ctx("push@1"), &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group},
		Topic: &v2.Resource{Name: topic}, ReceiptHandle: handleOf(m), InvisibleDuration: durationpb.New(time.Second)})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("nack: %v %v", r, err)
	}
	f.core.Broker.AdvanceClock(2_000)
	back := f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 1, 10)[0]
	if back.GetSystemProperties().GetDeliveryAttempt() != 2 {
		t.Errorf("redelivery attempt %d, want 2", back.GetSystemProperties().GetDeliveryAttempt())
	}
}

// After MaxHold the lease gives up: one change to the group's retry
// back-off (1 s for attempt 1), and the message comes back as attempt 2.
func TestPushConsumerLeaseGivesUp(t *testing.T) {
	f := newFixture(t, nil, func(c *Config) { c.Leases.MaxHold = 2 * time.Minute })
	topic, group := unique("giveup"), unique("cg_giveup")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"))
	m := f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 1, 5)[0]
	f.core.Broker.AdvanceClock(115_000) // due for renewal, still below MaxHold
	f.srv.svc.leases.scan()
	if !waitFor(500, func() bool { return f.leaseHandle("push@1", group, topic, m) != handleOf(m) }) {
		t.Fatal("lease not renewed")
	}
	f.core.Broker.AdvanceClock(60_000) // 175 s: past MaxHold and due again
	f.srv.svc.leases.scan()
	if !waitFor(500, func() bool { return f.srv.svc.leases.held() == 0 }) {
		t.Fatal("lease kept after MaxHold")
	}
	f.core.Broker.AdvanceClock(2_000)
	back := f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 1, 10)[0]
	if back.GetSystemProperties().GetDeliveryAttempt() != 2 {
		t.Errorf("attempt %d after the give-up, want 2", back.GetSystemProperties().GetDeliveryAttempt())
	}
}

// A push consumer whose connection closes releases its leases.
func TestPushConsumerConnectionCloseReleases(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("gone"), unique("cg_gone")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"))
	cc, c2 := dialConn(t, f.addr)
	r := f.receiveWith(f.ctx("gone@1"), c2, pushReceive(group, topic, 5*time.Second))
	if len(r.msgs) != 1 || f.srv.svc.leases.held() != 1 {
		t.Fatalf("%+v, %d leases", r, f.srv.svc.leases.held())
	}
	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(500, func() bool { return f.srv.svc.leases.held() == 0 }) {
		t.Fatal("leases kept after the connection closed")
	}
	f.core.Broker.AdvanceClock(2_000)
	if got := f.receiveN("other@1", simpleReceive(group, topic, 5*time.Second), 1, 10); string(got[0].GetBody()) != "m0" {
		t.Errorf("%v", got)
	}
}

// The per-client cap: messages beyond it are delivered but not tracked.
func TestLeaseCap(t *testing.T) {
	f := newFixture(t, nil, func(c *Config) { c.Leases.MaxPerClient = 2 })
	topic, group := unique("cap"), unique("cg_cap")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "a", "T"), message(topic, "b", "T"), message(topic, "c", "T"))
	f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 3, 5)
	if n := f.srv.svc.leases.held(); n != 2 {
		t.Errorf("%d leases, want the cap 2", n)
	}
}

// An AckMessage whose entries include a message whose lease is being
// renewed: the other entries are acked at once (in one writer op), that
// one when the renewal completes, with the lease's handle; the call
// answers when all are durable.
func TestAckWaitsForRenewalInFlight(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("busy"), unique("cg_busy")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "m0", "T"), message(topic, "m1", "T"), message(topic, "m2", "T"))
	got := f.receiveN("push@1", pushReceive(group, topic, 5*time.Second), 3, 5)
	ls := f.srv.svc.leases
	ei, _ := ParseReceiptHandle(handleOf(got[0]))
	k := keyOf(group, topic, ei)
	ls.mu.Lock()
	l := ls.byClient["push@1"][k]
	l.busy = true // as the scan marks a lease whose CHANGE is being written
	ls.inflight.Add(1)
	ls.mu.Unlock()

	type answer struct {
		r   *v2.AckMessageResponse
		err error
	}
	done := make(chan answer, 1)
	go func() {
		entries := make([]*v2.AckMessageEntry, len(got))
		for i, m := range got {
			entries[i] = &v2.AckMessageEntry{MessageId: m.GetSystemProperties().GetMessageId(), ReceiptHandle: handleOf(m)}
		}
		r, err := f.c.AckMessage(f.ctx("push@1"), &v2.AckMessageRequest{Group: &v2.Resource{Name: group},
			Topic: &v2.Resource{Name: topic}, Entries: entries})
		done <- answer{r, err}
	}()
	if !waitFor(500, func() bool { return ls.held() == 0 }) {
		t.Fatal("the ack did not take the leases")
	}
	select {
	case a := <-done:
		t.Fatalf("AckMessage answered before the renewal completed: %v %v", a.r, a.err)
	case <-time.After(100 * time.Millisecond):
	}
	// The renewal fails (not for the handle): the waiter acks with the
	// lease's handle, the original.
	ls.renewed(renewal{id: "push@1", k: k, l: l}, broker.ChangeResult{}, errors.New("disk trouble"))
	a := <-done
	if a.err != nil || a.r.GetStatus().GetCode() != v2.Code_OK || len(a.r.GetEntries()) != 3 {
		t.Fatalf("ack: %v %v", a.r, a.err)
	}
	for i, e := range a.r.GetEntries() {
		if e.GetStatus().GetCode() != v2.Code_OK || e.GetReceiptHandle() != handleOf(got[i]) {
			t.Errorf("entry %d: %v", i, e)
		}
	}
	f.core.Broker.AdvanceClock(120_000)
	f.checkNoMessage(group, topic)
}
