//go:build crash

package crash

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Orderly POP across kill -9: the lease of a queue (popped
// offsets, popTime, deadlines, attempt counts) is written with the POP's
// reply, so SIGKILL between a POP and its ACKs, or in the middle of the
// ACKs, never unblocks a queue before its deadline, never skips a message
// and never reorders one.

const (
	orderTopic     = "OrdT"
	orderGroup     = "OrdG"
	orderQueues    = 2
	orderPerQueue  = 60
	orderInvisible = 2000 // ms
)

// orderDelivery is one message of an orderly POP reply.
type orderDelivery struct {
	queue    int32
	offset   int64
	popTime  int64
	raw      string
	handle   codec.ExtraInfo
	attempts int32 // the record's reconsumeTimes
}

// orderState is what the consumer knows, across restarts.
type orderState struct {
	acked   map[[2]int64]bool  // (queue, offset) answered SUCCESS
	maybe   map[[2]int64]bool  // ACK sent, no reply (the broker died)
	leaseTo map[[2]int64]int64 // last delivery's deadline (popTime + invisible)
}

// tryCall is a bounded call that reports a dead connection instead of
// failing the test.
func tryCall(c *client.Conn, req *codec.Command) (*codec.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Invoke(ctx, req)
}

func orderDial(t *testing.T, addr string) *client.Conn {
	t.Helper()
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// orderPop is one orderly POP of every queue; nil on a dead connection.
func orderPop(t *testing.T, c *client.Conn) ([]orderDelivery, error) {
	t.Helper()
	h := codec.PopMessageRequestHeader{ConsumerGroup: orderGroup, Topic: orderTopic, QueueID: -1, MaxMsgNums: 8,
		InvisibleTime: orderInvisible, PollTime: 300, BornTime: time.Now().UnixMilli(), InitMode: codec.ConsumeInitModeMin, Order: true}
	req := codec.NewRequest(codec.RequestPopMessage, 0, nil, nil)
	h.Encode(req)
	resp, err := tryCall(c, req)
	if err != nil {
		return nil, err
	}
	if resp.Code != codec.Success {
		if resp.Code != codec.PollingTimeout && resp.Code != codec.PullNotFound {
			t.Fatalf("orderly POP: %d %s", resp.Code, resp.Remark)
		}
		return nil, nil
	}
	msgs, err := codec.DecodeMessages(resp.Body)
	if err != nil {
		t.Fatalf("POP body: %v", err)
	}
	var out []orderDelivery
	for _, m := range msgs {
		ck, _ := m.Property(codec.PropertyPopCK)
		ei, err := codec.ParseExtraInfo(ck)
		if err != nil || !ei.IsOrder() {
			t.Fatalf("orderly POP_CK %q: %v", ck, err)
		}
		out = append(out, orderDelivery{queue: m.QueueID, offset: m.QueueOffset, popTime: ei.PopTime, raw: ck, handle: ei, attempts: m.ReconsumeTimes})
	}
	return out, nil
}

// check applies the invariants to one reply: for each queue, every offset
// below the first one returned was acked (or its ACK was in flight when the
// broker died): nothing skipped or reordered; and a message delivered again
// comes back no earlier than the deadline of its previous lease: no early
// unblock, even across kill -9.
func (st *orderState) check(t *testing.T, ds []orderDelivery) {
	t.Helper()
	first := map[int32]int64{}
	for _, d := range ds {
		if f, ok := first[d.queue]; !ok || d.offset < f {
			first[d.queue] = d.offset
		}
	}
	for q, f := range first {
		for o := int64(0); o < f; o++ {
			k := [2]int64{int64(q), o}
			if !st.acked[k] && !st.maybe[k] {
				t.Fatalf("queue %d: offset %d delivered while offset %d was never acked", q, f, o)
			}
		}
	}
	for _, d := range ds {
		k := [2]int64{int64(d.queue), d.offset}
		if st.acked[k] {
			t.Fatalf("queue %d offset %d delivered again after its ACK answered SUCCESS", d.queue, d.offset)
		}
		if to, ok := st.leaseTo[k]; ok {
			if d.popTime < to {
				t.Fatalf("queue %d offset %d delivered again at %d, before its previous lease ended at %d", d.queue, d.offset, d.popTime, to)
			}
			if d.attempts < 1 {
				t.Fatalf("queue %d offset %d delivered again with reconsumeTimes %d", d.queue, d.offset, d.attempts)
			}
		}
		st.leaseTo[k] = d.popTime + orderInvisible
	}
}

// ack acks d; false when the broker is gone (the ACK may have applied).
func (st *orderState) ack(t *testing.T, c *client.Conn, d orderDelivery) bool {
	t.Helper()
	h := codec.AckMessageRequestHeader{ConsumerGroup: orderGroup, Topic: orderTopic, QueueID: d.queue, Offset: d.offset,
		ExtraInfo: d.raw, BrokerName: d.handle.BrokerName}
	req := codec.NewRequest(codec.RequestAckMessage, 0, nil, nil)
	h.Encode(req)
	k := [2]int64{int64(d.queue), d.offset}
	resp, err := tryCall(c, req)
	if err != nil {
		st.maybe[k] = true
		return false
	}
	if resp.Code != codec.Success {
		t.Fatalf("orderly ACK queue %d offset %d: %d %s", d.queue, d.offset, resp.Code, resp.Remark)
	}
	st.acked[k] = true
	return true
}

func TestKill9OrderlyPop(t *testing.T) {
	bin := popshimBin(t)
	dir, logDir := t.TempDir(), t.TempDir()
	addr := freeAddr(t)
	b := start(t, bin, dir, logDir, addr, 0)
	c := orderDial(t, addr)
	req := codec.NewRequest(codec.RequestUpdateAndCreateTopic, 0, nil, nil)
	codec.CreateTopicRequestHeader{Topic: orderTopic, DefaultTopic: "TBW102", ReadQueueNums: orderQueues, WriteQueueNums: orderQueues,
		Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(req)
	if resp, err := tryCall(c, req); err != nil || resp.Code != codec.Success {
		t.Fatalf("create topic: %v %v", resp, err)
	}
	for i := range orderPerQueue * orderQueues {
		h := codec.SendMessageRequestHeader{ProducerGroup: "OrdPG", Topic: orderTopic, DefaultTopic: "TBW102", DefaultTopicQueueNums: orderQueues,
			QueueID: int32(i % orderQueues), BornTimestamp: time.Now().UnixMilli()}
		req := codec.NewRequest(codec.RequestSendMessageV2, 0, nil, []byte("o-"+strconv.Itoa(i)))
		h.EncodeV2(req)
		if resp, err := tryCall(c, req); err != nil || resp.Code != codec.Success {
			t.Fatalf("send %d: %v %v", i, resp, err)
		}
	}

	st := &orderState{acked: map[[2]int64]bool{}, maybe: map[[2]int64]bool{}, leaseTo: map[[2]int64]int64{}}
	total := orderPerQueue * orderQueues
	restarts := 0
	kill := func() {
		b.kill(t)
		b = start(t, bin, dir, logDir, addr, restarts+1)
		restarts++
		c = orderDial(t, addr)
	}
	deadline := time.Now().Add(waitFor)
	for round := 0; len(st.acked) < total; round++ {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d messages acked after %s (%d restarts)\n%s", len(st.acked), total, waitFor, restarts, b.tail())
		}
		ds, err := orderPop(t, c)
		if err != nil {
			kill() // a kill cut the connection: reconnect to the restarted broker
			continue
		}
		st.check(t, ds)
		switch {
		case restarts == 0 && len(ds) > 0 && len(st.acked) >= total/4:
			// SIGKILL between the POP and its ACKs: the queue must stay
			// blocked until the lease's deadline, then come back in order.
			kill()
			continue
		case restarts == 1 && len(ds) > 1 && len(st.acked) >= total/2:
			// SIGKILL in the middle of the ACKs.
			st.ack(t, c, ds[0])
			kill()
			continue
		}
		for _, d := range ds {
			if !st.ack(t, c, d) {
				kill()
				break
			}
		}
	}
	if restarts != 2 {
		t.Fatalf("%d restarts, want 2", restarts)
	}
	for q := range int64(orderQueues) {
		for o := range int64(orderPerQueue) {
			if !st.acked[[2]int64{q, o}] {
				t.Fatalf("queue %d offset %d never acked", q, o)
			}
		}
	}
	b.kill(t)
}
