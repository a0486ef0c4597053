package grpcserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// The gate lets as many reads run as it has slots; one more waits until a
// slot is given back, then takes it.
func TestReadGateWaitsForASlot(t *testing.T) {
	g := newReadGate(2<<20, 1<<20)
	g.wait = time.Hour
	if cap(g.slots) != 2 {
		t.Fatalf("%d slots, want 2", cap(g.slots))
	}
	for range 2 {
		if !g.take(context.Background()) {
			t.Fatal("a free slot was refused")
		}
	}
	got := make(chan bool, 1)
	go func() { got <- g.take(context.Background()) }()
	if !waitFor(1000, func() bool { return g.waited.Load() == 1 }) {
		t.Fatal("the third read did not wait")
	}
	select {
	case <-got:
		t.Fatal("the third read took a slot while every slot was held")
	default:
	}
	g.give()
	if !<-got {
		t.Fatal("the third read was refused after a slot was given back")
	}
	g.give()
	g.give()
	if g.peak.Load() != 2 || g.refused.Load() != 0 || len(g.slots) != 0 {
		t.Fatalf("peak %d refused %d held %d, want 2 0 0", g.peak.Load(), g.refused.Load(), len(g.slots))
	}
}

// Nobody waits for ever: with every slot held, a read is refused after the
// gate's wait, or at once when its context ends; a gate without a bound
// never waits.
func TestReadGateRefusesAfterItsWait(t *testing.T) {
	g := newReadGate(1<<20, 1<<20)
	g.wait = 10 * time.Millisecond
	g.slots <- struct{}{} // a slow client's read
	if g.take(context.Background()) || g.refused.Load() != 1 {
		t.Fatalf("took a slot that was held; refused %d", g.refused.Load())
	}
	g.wait = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if g.take(ctx) || g.refused.Load() != 2 {
		t.Fatalf("a read with an ended context took a held slot; refused %d", g.refused.Load())
	}
	if len(g.slots) != 1 {
		t.Fatalf("%d slots held, want the slow client's 1", len(g.slots))
	}
	open := newReadGate(0, 1<<20)
	if open.slots != nil || !open.take(context.Background()) {
		t.Fatal("a gate without a bound has slots or refused")
	}
	open.give()
}

// Many connections sending large SendMessages at once through a real
// endpoint: every call is answered (stored, or TOO_MANY_REQUESTS from the
// gate or the budget of decoded requests), and no more requests were being
// read at once than the gate has slots (MaxSendInflightBytes /
// MaxRecvMsgBytes).
func TestSendFloodThroughReadGate(t *testing.T) {
	const (
		conns = 16
		each  = 4
		body  = 512 << 10
	)
	f := newFixture(t, nil, func(c *Config) { c.MaxSendInflightBytes = 2 * int64(c.MaxRecvMsgBytes) })
	g := f.srv.svc.reads
	if cap(g.slots) != 2 {
		t.Fatalf("%d slots, want 2", cap(g.slots))
	}
	topic := unique("flood")
	f.createTopic(topic, 4, "")
	payload := make([]byte, body)
	var ok, busy atomic.Int64
	var wg sync.WaitGroup
	for range conns {
		c := bigClient(t, f.addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				m := goClientMessage(topic, payload)
				m.SystemProperties.MessageId = "01" + strings.ToUpper(unique("F"))
				r, err := c.SendMessage(f.ctx("p@1"), &v2.SendMessageRequest{Messages: []*v2.Message{m}})
				switch {
				case err != nil:
					t.Error(err)
				case r.GetStatus().GetCode() == v2.Code_OK:
					ok.Add(1)
				case r.GetStatus().GetCode() == v2.Code_TOO_MANY_REQUESTS:
					busy.Add(1)
				default:
					t.Errorf("send: %v", r.GetStatus())
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("stored %d, too many requests %d; reads: peak %d of %d slots, waited %d, refused unread %d",
		ok.Load(), busy.Load(), g.peak.Load(), cap(g.slots), g.waited.Load(), g.refused.Load())
	if ok.Load()+busy.Load() != conns*each || ok.Load() == 0 {
		t.Fatalf("stored %d + refused %d, want %d answered and some stored", ok.Load(), busy.Load(), conns*each)
	}
	if p := g.peak.Load(); p < 1 || p > int64(cap(g.slots)) {
		t.Fatalf("peak of %d reads at once through %d slots", p, cap(g.slots))
	}
	if len(g.slots) != 0 {
		t.Fatalf("%d slots still held", len(g.slots))
	}
}

// With every read slot held (slow clients), a SendMessage is answered
// TOO_MANY_REQUESTS after the gate's wait, its message unread, through
// the interceptors (counted as a SendMessage answer); once a slot is free
// the same request is stored.
func TestSendRefusedUnreadWhenNoSlot(t *testing.T) {
	f := newFixture(t, nil, func(c *Config) { c.MaxSendInflightBytes = int64(c.MaxRecvMsgBytes) })
	g := f.srv.svc.reads
	g.wait = 20 * time.Millisecond
	topic := unique("gate")
	f.createTopic(topic, 1, "")
	g.slots <- struct{}{} // the one slot, held
	m := goClientMessage(topic, make([]byte, 256<<10))
	m.SystemProperties.MessageId = "01" + strings.ToUpper(unique("G"))
	r, err := bigClient(t, f.addr).SendMessage(f.ctx("p@1"), &v2.SendMessageRequest{Messages: []*v2.Message{m}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_TOO_MANY_REQUESTS ||
		!strings.Contains(r.GetStatus().GetMessage(), "being read") {
		t.Fatalf("with no slot: %v %v", r, err)
	}
	if g.refused.Load() != 1 {
		t.Fatalf("refused %d, want 1", g.refused.Load())
	}
	<-g.slots
	r, err = bigClient(t, f.addr).SendMessage(f.ctx("p@1"), &v2.SendMessageRequest{Messages: []*v2.Message{m}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("with a free slot: %v %v", r, err)
	}
}
