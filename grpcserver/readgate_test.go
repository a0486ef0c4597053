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
// slot is given back, then reads holding it.
func TestReadGateWaitsForASlot(t *testing.T) {
	g := newReadGate(2<<20, 1<<20)
	g.wait = time.Hour
	if cap(g.slots) != 2 {
		t.Fatalf("%d slots, want 2", cap(g.slots))
	}
	hold := make(chan struct{})
	var holders sync.WaitGroup
	for range 2 {
		holders.Add(1)
		go func() {
			defer holders.Done()
			_ = g.decode(context.Background(), func(any) error { <-hold; return nil }, nil)
		}()
	}
	if !waitFor(1000, func() bool { return len(g.slots) == 2 }) {
		t.Fatalf("%d slots held, want 2", len(g.slots))
	}
	var read atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- g.decode(context.Background(), func(any) error { read.Store(true); return nil }, nil)
	}()
	if !waitFor(1000, func() bool { return g.waited.Load() == 1 }) {
		t.Fatal("the third read did not wait")
	}
	if read.Load() {
		t.Fatal("the third read ran while every slot was held")
	}
	close(hold)
	holders.Wait()
	if err := <-done; err != nil || !read.Load() {
		t.Fatalf("third read: %v, ran %v", err, read.Load())
	}
	if g.peak.Load() != 2 || g.overflows.Load() != 0 || len(g.slots) != 0 {
		t.Fatalf("peak %d overflows %d held %d, want 2 0 0", g.peak.Load(), g.overflows.Load(), len(g.slots))
	}
}

// Nobody waits for ever: with every slot held, a read goes ahead after the
// gate's wait (counted as an overflow), or at once when its context ends;
// a gate without a bound never waits.
func TestReadGateNeverStarves(t *testing.T) {
	g := newReadGate(1<<20, 1<<20)
	g.wait = 10 * time.Millisecond
	g.slots <- struct{}{} // a slow client's read
	ran := 0
	dec := func(any) error { ran++; return nil }
	if err := g.decode(context.Background(), dec, nil); err != nil || ran != 1 || g.overflows.Load() != 1 {
		t.Fatalf("overflow read: %v ran %d overflows %d", err, ran, g.overflows.Load())
	}
	g.wait = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.decode(ctx, dec, nil); err != nil || ran != 2 {
		t.Fatalf("read with an ended context: %v ran %d", err, ran)
	}
	if len(g.slots) != 1 {
		t.Fatalf("%d slots held, want the slow client's 1", len(g.slots))
	}
	open := newReadGate(0, 1<<20)
	if open.slots != nil {
		t.Fatal("a gate without a bound has slots")
	}
	if err := open.decode(context.Background(), dec, nil); err != nil || ran != 3 {
		t.Fatalf("unbounded gate: %v ran %d", err, ran)
	}
}

// Many connections sending large SendMessages at once through a real
// endpoint: every call is answered (stored, or TOO_MANY_REQUESTS from the
// budget of decoded requests), and no more requests were being read at
// once than the gate has slots (MaxSendInflightBytes / MaxRecvMsgBytes).
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
	t.Logf("stored %d, too many requests %d; reads: peak %d of %d slots, waited %d, overflows %d",
		ok.Load(), busy.Load(), g.peak.Load(), cap(g.slots), g.waited.Load(), g.overflows.Load())
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
