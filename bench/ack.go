package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Series of the ack workload, in recorder order.
const (
	seriesAck = iota
	seriesAckBurst
	seriesAckCalm
	seriesChange
)

var ackSeries = []string{"ack", "ack_during_burst", "ack_outside_burst", "change"}

// RunAck runs the main workload: prepare o.Messages receipt handles, then a
// steady ACK stream (o.Conns×o.Inflight slots, open loop or o.Rate) with a
// CHANGE_MESSAGE_INVISIBLETIME burst of o.ChangeBurst every o.ChangePeriod
// on a separate pool of o.ChangePool handles. An ACK counts as "during
// burst" when it was sent while a CHANGE of any burst was outstanding.
// Writes the human lines to o.Out and the JSON/plot outputs when asked.
// Errors: dial, topic creation, prepare, output files; a canceled ctx ends
// the run early and is returned with the partial report.
func RunAck(ctx context.Context, o Options) (*Report, error) {
	o.Normalize()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.names("ack", time.Now().UnixMilli())
	clients, err := dialAll(ctx, &o)
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	receipts, prep, err := prepare(ctx, clients, &o)
	if err != nil {
		return nil, err
	}
	var pool []client.Receipt
	if o.ChangeBurst > 0 {
		k := min(o.ChangePool, len(receipts)/2)
		// A copy: the burster appends to its pool, which must never grow
		// into the ACK handles' backing array.
		pool, receipts = append([]client.Receipt(nil), receipts[:k]...), receipts[k:]
	}
	o.Log.Info().Int("ack_handles", len(receipts)).Int("change_handles", len(pool)).Msg("running")

	p := newPhase(&o, "ack", len(clients), ackSeries)
	p.rec.derive(seriesAck, seriesAckBurst, seriesAckCalm)
	var next atomic.Int64
	acks := newStream(clients, len(clients)*o.Inflight, o.Rate)
	frames := prepareAckFrames(o.Group, receipts, o.sign)
	if prep.SettleSeconds, prep.Settled, err = settle(ctx, &o); err != nil {
		return nil, err
	}
	acks.prepared = func(int) ([]byte, int, int, bool) {
		i := next.Add(1) - 1
		if i >= int64(len(receipts)) {
			return nil, 0, 0, false
		}
		tag := seriesAckCalm
		if p.burstOutstanding.Load() > 0 {
			tag = seriesAckBurst
		}
		f, at := frames.frame(int(i))
		return f, at, tag, true
	}
	acks.finishCode = func(sh, tag int, us int64, code int32) {
		if code == codec.Success {
			p.rec.ok(sh, tag, us) // and so in seriesAck (derived)
			return
		}
		p.rec.fail(sh, tag, code)
	}
	b := &burster{p: p, clients: clients, group: o.Group, size: o.ChangeBurst,
		period: o.ChangePeriod, invisible: o.InvisibleTime, sign: o.sign}
	for _, r := range pool {
		b.put(r)
	}
	var side []func(<-chan struct{})
	if o.ChangeBurst > 0 && len(pool) > 0 {
		side = append(side, b.loop)
	}
	seconds, exhausted, runErr := p.measure(ctx, acks, side...)
	r := p.report(seconds, exhausted, "ack", "ack", "change")
	r.Prepare = prep
	r.Bursts, r.BurstMillis = b.summary()
	if err := finishReport(&o, r); err != nil {
		return r, err
	}
	return r, runErr
}

// replyCode maps an outcome to a response code; transport errors are
// codeTransport.
func replyCode(resp *codec.Command, err error) int32 {
	if err != nil || resp == nil {
		return codeTransport
	}
	return resp.Code
}

// burster sends the CHANGE bursts. A handle whose CHANGE succeeded goes back
// to the pool with its new popTime; one refused with SYSTEM_BUSY goes back
// unchanged; any other failure drops it.
type burster struct {
	p         *phase
	clients   []*client.Conn
	group     string
	size      int
	period    time.Duration
	invisible time.Duration
	sign      func(*codec.Command) *codec.Command // Options.sign

	mu     sync.Mutex
	pool   []pooledChange // REQUIRES: mu held
	bursts int            // REQUIRES: mu held
	took   *window        // REQUIRES: mu held; burst durations in ms
	wg     sync.WaitGroup
}

// loop fires a burst every period until stop closes, then waits (bounded)
// for the outstanding CHANGE replies.
func (b *burster) loop(stop <-chan struct{}) {
	t := time.NewTicker(b.period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.fire()
		case <-stop:
			done := make(chan struct{})
			go func() { b.wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(drainTimeout):
			}
			return
		}
	}
}

// pooledChange is a handle of the CHANGE pool with its CHANGE frame,
// encoded when the handle enters the pool (codec.AppendPreparedFrame), so a
// burst only copies frames and the load generator's own encoding work does
// not pile up at the burst instant and delay the ACK stream.
type pooledChange struct {
	r     client.Receipt
	frame []byte
	at    int // opaque offset in frame
}

// put adds r to the pool with its CHANGE frame. Any goroutine.
func (b *burster) put(r client.Receipt) {
	frame, at := codec.AppendPreparedFrame(nil, b.sign(changeRequest(b.group, &r, b.invisible)))
	b.mu.Lock()
	b.pool = append(b.pool, pooledChange{r: r, frame: frame, at: at})
	b.mu.Unlock()
}

// fire sends up to size CHANGEs at once, spread over the connections.
func (b *burster) fire() {
	b.mu.Lock()
	n := min(b.size, len(b.pool))
	taken := append([]pooledChange(nil), b.pool[:n]...)
	b.pool = b.pool[n:]
	if n > 0 {
		b.bursts++
	}
	b.mu.Unlock()
	if n == 0 {
		return
	}
	var left atomic.Int64
	left.Store(int64(n))
	b.p.burstOutstanding.Add(int64(n))
	b.p.burstSeen.Store(true)
	start := time.Now()
	one := func() {
		b.p.burstOutstanding.Add(-1)
		if left.Add(-1) == 0 {
			b.mu.Lock()
			if b.took == nil {
				b.took = newWindow()
			}
			b.took.record(time.Since(start).Milliseconds())
			b.mu.Unlock()
		}
		b.wg.Done()
	}
	b.wg.Add(n)
	for j := range taken {
		rc := taken[j].r
		ci := j % len(b.clients)
		t0 := time.Now()
		err := b.clients[ci].InvokePreparedAsync(taken[j].frame, taken[j].at, func(resp *codec.Command, err error) {
			us := time.Since(t0).Microseconds()
			switch code := replyCode(resp, err); code {
			case codec.Success:
				if nr, err := changedReceipt(rc, resp); err == nil {
					b.p.rec.ok(ci, seriesChange, us)
					b.put(nr)
				} else {
					b.p.rec.fail(ci, seriesChange, codec.SystemError)
				}
			case codec.SystemBusy:
				b.p.rec.fail(ci, seriesChange, code)
				b.mu.Lock()
				b.pool = append(b.pool, taken[j])
				b.mu.Unlock()
			default:
				b.p.rec.fail(ci, seriesChange, code)
			}
			one()
		})
		if err != nil {
			b.p.rec.fail(ci, seriesChange, codeTransport)
			one()
		}
	}
}

// summary returns the burst count and durations (ms). Call after loop.
func (b *burster) summary() (int, *Latency) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.took == nil {
		return b.bursts, nil
	}
	l := latencyOf(b.took)
	return b.bursts, &l
}
