package grpcserver

import (
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A handle whose invisible time has passed is refused by AckMessage and
// ChangeInvisibleDuration with INVALID_RECEIPT_HANDLE "receipt handle is
// expired", as the proxy's validateReceiptHandle, and the message comes
// back; a handle one millisecond short of expiry is still acked. The
// ForwardMessageToDeadLetterQueue of an expired handle still answers OK
// and acks (the proxy ignores that ACK's outcome).
func TestExpiredHandleRefused(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("exp"), unique("cg")
	f.createTopic(topic, 1, "")
	f.send("p@1", message(topic, "a", "T"), message(topic, "b", "T"), message(topic, "c", "T"))
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 3, 5)
	ei, err := ParseReceiptHandle(handleOf(got[0]))
	if err != nil {
		t.Fatal(err)
	}
	// Just before expiry: acked.
	f.core.Broker.AdvanceClock(ei.PopTime + ei.InvisibleTime - f.core.Broker.Now() - 1_000)
	if st := f.ack("c@1", group, topic, got[2], handleOf(got[2])); st.GetCode() != v2.Code_OK {
		t.Fatalf("ack 1 s before expiry: %v", st)
	}
	f.core.Broker.AdvanceClock(1_000)
	ack := func(m *v2.Message) *v2.AckMessageResponse {
		r, err := f.c.AckMessage(f.ctx("c@1"), &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
			Entries: []*v2.AckMessageEntry{{MessageId: m.GetSystemProperties().GetMessageId(), ReceiptHandle: handleOf(m)}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := ack(got[0])
	if e := r.GetEntries()[0].GetStatus(); r.GetStatus().GetCode() != v2.Code_INVALID_RECEIPT_HANDLE ||
		e.GetCode() != v2.Code_INVALID_RECEIPT_HANDLE || e.GetMessage() != "receipt handle is expired" {
		t.Fatalf("ack of an expired handle: %v", r)
	}
	c, err := f.c.ChangeInvisibleDuration(f.ctx("c@1"), &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: group},
		Topic: &v2.Resource{Name: topic}, ReceiptHandle: handleOf(got[1]), InvisibleDuration: durationpb.New(time.Minute),
		MessageId: got[1].GetSystemProperties().GetMessageId()})
	if err != nil || c.GetStatus().GetCode() != v2.Code_INVALID_RECEIPT_HANDLE ||
		c.GetStatus().GetMessage() != "receipt handle is expired" || c.GetReceiptHandle() != handleOf(got[1]) {
		t.Fatalf("change of an expired handle: %v %v", c, err)
	}
	// Both come back (the change did not move b's invisible time); c,
	// acked in time, does not.
	back := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 2, 10)
	bodies := map[string]bool{}
	for _, m := range back {
		bodies[string(m.GetBody())] = true
	}
	if len(back) != 2 || !bodies["a"] || !bodies["b"] {
		t.Fatalf("redelivered %v, want a and b", bodies)
	}
	// Forward of an expired handle: OK, a DLQ copy, no further redelivery.
	f.core.Broker.AdvanceClock(11_000)
	m := back[0]
	fw, err := f.c.ForwardMessageToDeadLetterQueue(f.ctx("c@1"), &v2.ForwardMessageToDeadLetterQueueRequest{
		Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic}, ReceiptHandle: handleOf(m),
		MessageId: m.GetSystemProperties().GetMessageId(), DeliveryAttempt: 2, MaxDeliveryAttempts: 16})
	if err != nil || fw.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("forward of an expired handle: %v %v", fw, err)
	}
	if n, _ := f.core.Broker.MaxOffset("%DLQ%"+group, 0); n != 1 {
		t.Fatalf("DLQ holds %d messages, want 1", n)
	}
}
