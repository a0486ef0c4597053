package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Series of the timer mode's concurrent ACK stream, in recorder order.
const (
	seriesTimerAck = iota
	seriesTimerAckDrain
	seriesTimerAckCalm
)

var timerAckSeries = []string{"ack", "ack_during_drain", "ack_outside_drain"}

// Timer mode with a concurrent ACK stream (--rate > 0): the stream runs
// from timerAckLead before the due time until timerAckTail after the last
// timer was delivered; an ACK counts as "during drain" when it was sent
// between the due time and the end of the delivery.
const (
	timerAckLead = 4 * time.Second
	timerAckTail = 3 * time.Second
	// timerAckSpan is the stream length the receipt handles are prepared
	// for, besides the drain itself: --rate × (lead + tail + this). 60 s:
	// a drain paced behind the ACK stream took 12–27 s for 100,000 timers
	// at the default --timer-drain-share and more at 0.25, where 30 s of
	// handles ran out before the drain ended.
	timerAckSpan = 60 * time.Second
)

// timerAckRun is the state shared by the ACK stream and the delivery
// poller of one timer run with --rate.
type timerAckRun struct {
	o        *Options
	clients  []*client.Conn
	receipts []client.Receipt
	draining atomic.Bool
	// scrapes of the server counters at the start of the ACK stream, at
	// the due time and at the end of the delivery (poll goroutine; nil
	// when a scrape failed): the stage breakdown before and during the
	// drain.
	scr                  *scraper
	atLead, atDue, atEnd *serverCounters
}

// prepareTimerAck prepares the receipt handles of the concurrent ACK
// stream (--rate × (timerAckLead + timerAckTail + timerAckSpan)) on o's
// topic and waits for the server to settle. It creates the topic.
func prepareTimerAck(ctx context.Context, clients []*client.Conn, o *Options) (*timerAckRun, *PrepareStats, error) {
	po := *o
	po.Messages = int(float64(o.Rate) * (timerAckLead + timerAckTail + timerAckSpan).Seconds())
	receipts, prep, err := prepare(ctx, clients, &po)
	if err != nil {
		return nil, prep, err
	}
	if prep.SettleSeconds, prep.Settled, err = settle(ctx, o); err != nil {
		return nil, prep, err
	}
	return &timerAckRun{o: o, clients: clients, receipts: receipts, scr: newScraper(o.MetricsURL)}, prep, nil
}

// measure runs the ACK stream from timerAckLead before dueMs while
// polling /metrics until sent timers were delivered, fills st's delivery
// fields and returns the phase report (ACK series: all, during the drain,
// outside it). Errors: scrape failures, delivery not complete within
// o.Duration after dueMs, ctx.
func (t *timerAckRun) measure(ctx context.Context, st *TimerStats, sent int, before timerCounters) (*Report, timerCounters, error) {
	o := t.o
	if wait := time.Until(time.UnixMilli(st.DueMs).Add(-timerAckLead)); wait > 0 {
		select {
		case <-ctx.Done():
			return nil, before, ctx.Err()
		case <-time.After(wait):
		}
	}
	po := *o
	po.Duration = time.Until(time.UnixMilli(st.DueMs)) + o.Duration + timerAckTail
	p := newPhase(&po, "timer", len(t.clients), timerAckSeries)
	p.rec.derive(seriesTimerAck, seriesTimerAckDrain, seriesTimerAckCalm)
	var next atomic.Int64
	frames := prepareAckFrames(o.Group, t.receipts, o.sign)
	acks := newStream(t.clients, len(t.clients)*o.Inflight, o.Rate)
	acks.prepared = func(int) ([]byte, int, int, bool) {
		i := next.Add(1) - 1
		if i >= int64(len(t.receipts)) {
			return nil, 0, 0, false
		}
		tag := seriesTimerAckCalm
		if t.draining.Load() {
			tag = seriesTimerAckDrain
		}
		f, at := frames.frame(int(i))
		return f, at, tag, true
	}
	acks.finishCode = func(sh, tag int, us int64, code int32) {
		if code == codec.Success {
			p.rec.ok(sh, tag, us)
			return
		}
		p.rec.fail(sh, tag, code)
	}
	var now timerCounters
	var pollErr error
	t.atLead = t.scrapeServer(ctx)
	poll := func(stop <-chan struct{}) {
		now, pollErr = t.poll(ctx, stop, st, sent, before)
		if pollErr == nil {
			select {
			case <-stop:
			case <-time.After(timerAckTail):
			}
		}
		acks.stop()
	}
	seconds, exhausted, err := p.measure(ctx, acks, poll)
	r := p.report(seconds, exhausted, "ack", "ack")
	if t.atLead != nil && t.atDue != nil && t.atEnd != nil {
		st.StagesBeforeDue = delta(*t.atLead, *t.atDue).Stages
		st.StagesDuringDrain = delta(*t.atDue, *t.atEnd).Stages
	}
	if pollErr != nil {
		return r, now, pollErr
	}
	return r, now, err
}

// poll scrapes the timer series every 50 ms, marks the drain (from the
// due time until sent timers were delivered) and records the drain time
// in st. Returns the last scrape. Errors: scrape failures, delivery not
// complete within o.Duration after the due time, stop or ctx first.
func (t *timerAckRun) poll(ctx context.Context, stop <-chan struct{}, st *TimerStats, sent int, before timerCounters) (timerCounters, error) {
	due := time.UnixMilli(st.DueMs)
	deadline := due.Add(t.o.Duration)
	for {
		if !time.Now().Before(due) && !t.draining.Load() {
			t.atDue = t.scrapeServer(ctx)
			t.draining.Store(true)
		}
		now, err := scrapeTimers(ctx, t.o.MetricsURL)
		if err != nil {
			t.draining.Store(false)
			return now, err
		}
		st.Delivered = int(now.dequeued - before.dequeued)
		if st.Delivered >= sent {
			t.draining.Store(false)
			st.DrainSeconds = max(float64(time.Now().UnixMilli()-st.DueMs)/1000, 0.001)
			t.atEnd = t.scrapeServer(ctx)
			return now, nil
		}
		if time.Now().After(deadline) {
			t.draining.Store(false)
			return now, fmt.Errorf("bench: %d of %d timers delivered %s after their due time", st.Delivered, sent, t.o.Duration)
		}
		select {
		case <-ctx.Done():
			return now, ctx.Err()
		case <-stop:
			return now, fmt.Errorf("bench: stopped with %d of %d timers delivered", st.Delivered, sent)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// scrapeServer returns the server counters now, or nil on a failed scrape.
func (t *timerAckRun) scrapeServer(ctx context.Context) *serverCounters {
	c, err := t.scr.scrape(ctx)
	if err != nil {
		t.o.Log.Warn().Err(err).Msg("metrics scrape failed")
		return nil
	}
	return &c
}
