package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// Timer series read from popshim's /metrics (broker/metrics.go).
const (
	metricTimerDequeued = "rocketmq_timer_dequeue_total"        // timers delivered
	metricTimerLateness = "popshim_timer_lateness_milliseconds" // histogram, ms after due
)

// TimerStats is the result of RunTimer.
type TimerStats struct {
	// Timers is how many timer SENDs answered SUCCESS (all due at DueMs).
	Timers int   `json:"timers"`
	DueMs  int64 `json:"due_ms"`
	// SendSeconds is how long the SENDs took; SentBeforeDue is false when
	// they ended after DueMs (the run then measures little).
	SendSeconds   float64 `json:"send_seconds"`
	SentBeforeDue bool    `json:"sent_before_due"`
	// Delivered counts rocketmq_timer_dequeue_total's growth; DrainSeconds
	// is from DueMs until it reached Timers; PerSecond is Timers/DrainSeconds.
	Delivered    int     `json:"delivered"`
	DrainSeconds float64 `json:"drain_seconds"`
	PerSecond    float64 `json:"per_second"`
	// P50LatenessMs and P99LatenessMs are bucket upper bounds of
	// popshim_timer_lateness_milliseconds over the run; MeanLatenessMs is
	// its sum over its count.
	P50LatenessMs  float64 `json:"p50_lateness_ms"`
	P99LatenessMs  float64 `json:"p99_lateness_ms"`
	MeanLatenessMs float64 `json:"mean_lateness_ms"`
	// StagesBeforeDue and StagesDuringDrain are the server's stage
	// breakdown (stages.go) from the start of the concurrent ACK stream
	// to the due time, and from the due time to the end of the delivery
	// (--rate runs against a popshim with the stage metrics only).
	StagesBeforeDue   []StageStats `json:"stages_before_due,omitempty"`
	StagesDuringDrain []StageStats `json:"stages_during_drain,omitempty"`
	// SpreadSeconds is --timer-spread (a fill run: the timers fall due
	// evenly over it, from FirstDueMs); FillPerSecond is Timers over
	// SendSeconds.
	SpreadSeconds float64 `json:"spread_seconds,omitempty"`
	FirstDueMs    int64   `json:"first_due_ms,omitempty"`
	FillPerSecond float64 `json:"fill_per_second,omitempty"`
}

// timerCounters is one scrape of the timer series.
type timerCounters struct {
	dequeued, latSum, latCount float64
	buckets                    []bucket
}

// scrapeTimers reads the timer series from url.
func scrapeTimers(ctx context.Context, url string) (timerCounters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return timerCounters{}, fmt.Errorf("bench: metrics url: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return timerCounters{}, fmt.Errorf("bench: scrape %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }() // read side: nothing to lose
	return parseTimers(resp.Body)
}

// parseTimers extracts the timer series from a text exposition (summed
// over label sets). Errors: a parse failure or no timer series.
func parseTimers(r io.Reader) (timerCounters, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return timerCounters{}, fmt.Errorf("bench: parse metrics: %w", err)
	}
	var c timerCounters
	f, ok := fams[metricTimerDequeued]
	if !ok {
		return c, fmt.Errorf("bench: %s not in /metrics (not a popshim with timers?)", metricTimerDequeued)
	}
	for _, m := range f.GetMetric() {
		c.dequeued += metricValue(m)
	}
	if f, ok := fams[metricTimerLateness]; ok {
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			c.latSum += h.GetSampleSum()
			c.latCount += float64(h.GetSampleCount())
			for _, b := range h.GetBucket() {
				c.buckets = append(c.buckets, bucket{upper: b.GetUpperBound(), count: float64(b.GetCumulativeCount())})
			}
		}
		c.buckets = append(c.buckets, bucket{upper: math.Inf(1), count: c.latCount})
	}
	return c, nil
}

// timerLead is how far ahead of the start the timers are due: time to
// send them all before any is due.
func timerLead(n int) time.Duration { return 5*time.Second + time.Duration(n)*200*time.Microsecond }

// RunTimer measures timer delivery: o.Messages SEND_MESSAGE_V2 with
// TIMER_DELIVER_MS all set to the same instant (timerLead ahead), then
// /metrics (o.MetricsURL, required) is polled every 50 ms until
// rocketmq_timer_dequeue_total grew by the number sent; it reports the
// drain rate from the due time and the lateness percentiles of
// popshim_timer_lateness_milliseconds. With o.Rate > 0 it first prepares
// receipt handles (produce + POP on the same topic) and runs an ACK stream
// at o.Rate from timerAckLead before the due time until timerAckTail after
// the delivery ended: the report's series "ack_during_drain" and
// "ack_outside_drain" put the ACK latency with and without the concurrent
// timer drain side by side in one run. Errors: no metrics URL, failed
// SENDs, prepare failures, delivery not complete within o.Duration after
// the due time.
func RunTimer(ctx context.Context, o Options) (*Report, error) {
	if o.TimerSpread > 0 {
		return runTimerFill(ctx, o)
	}
	if o.MetricsURL == "" {
		return nil, fmt.Errorf("bench: timer mode reads the delivery from /metrics: --metrics-url is required")
	}
	clients, err := start(ctx, &o, "timer")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	started := time.Now()
	var ackRun *timerAckRun
	var prep *PrepareStats
	if o.Rate > 0 {
		if ackRun, prep, err = prepareTimerAck(ctx, clients, &o); err != nil {
			return nil, err
		}
		started = time.Now()
	} else if o.CreateTopic {
		if err := createTopic(ctx, clients[0], &o); err != nil {
			return nil, err
		}
	}
	before, err := scrapeTimers(ctx, o.MetricsURL)
	if err != nil {
		return nil, err
	}
	st := &TimerStats{DueMs: started.Add(timerLead(o.Messages)).UnixMilli()}
	sent, err := sendTimers(ctx, clients, &o, func(int64) int64 { return st.DueMs })
	if err != nil {
		return nil, err
	}
	st.Timers, st.SendSeconds = sent, time.Since(started).Seconds()
	st.SentBeforeDue = time.Now().UnixMilli() < st.DueMs
	var now timerCounters
	var r *Report
	if ackRun != nil {
		if r, now, err = ackRun.measure(ctx, st, sent, before); err != nil {
			return r, err
		}
		r.Prepare = prep
	} else {
		if now, err = waitDelivered(ctx, &o, st, sent, before); err != nil {
			return nil, err
		}
		st.DrainSeconds = max(float64(time.Now().UnixMilli()-st.DueMs)/1000, 0.001)
		r = &Report{Mode: "timer", Label: o.Label, Target: o.Addr, Started: started, Seconds: time.Since(started).Seconds(),
			Config: o.config(), Machine: machineInfo()}
	}
	st.PerSecond = float64(sent) / st.DrainSeconds
	if n := now.latCount - before.latCount; n > 0 {
		st.P50LatenessMs = bucketQuantile(before.buckets, now.buckets, n, 0.5)
		st.P99LatenessMs = bucketQuantile(before.buckets, now.buckets, n, 0.99)
		st.MeanLatenessMs = (now.latSum - before.latSum) / n
	}
	r.Timer = st
	fmt.Fprintf(o.Out, "timer: %d timers due at once (sent in %.1f s, before due: %v); delivered %d in %.2f s after due = %.0f/s; lateness p50 ≤ %.0f ms, p99 ≤ %.0f ms, mean %.0f ms\n",
		st.Timers, st.SendSeconds, st.SentBeforeDue, st.Delivered, st.DrainSeconds, st.PerSecond, st.P50LatenessMs, st.P99LatenessMs, st.MeanLatenessMs)
	if ackRun != nil {
		printSummary(o.Out, r)
		if len(st.StagesBeforeDue) > 0 {
			fmt.Fprintln(o.Out, "-- before the due time (ACK stream alone):")
			printStages(o.Out, st.StagesBeforeDue)
			fmt.Fprintln(o.Out, "-- during the drain:")
			printStages(o.Out, st.StagesDuringDrain)
		}
	}
	if o.JSON != "" {
		return r, r.WriteJSON(o.JSON)
	}
	return r, nil
}

// waitDelivered polls /metrics every 50 ms until rocketmq_timer_dequeue_total
// grew by sent since before, and returns the last scrape. Errors: scrape
// failures, delivery not complete within o.Duration after st.DueMs, ctx.
func waitDelivered(ctx context.Context, o *Options, st *TimerStats, sent int, before timerCounters) (timerCounters, error) {
	deadline := time.UnixMilli(st.DueMs).Add(o.Duration)
	for {
		now, err := scrapeTimers(ctx, o.MetricsURL)
		if err != nil {
			return now, err
		}
		st.Delivered = int(now.dequeued - before.dequeued)
		if st.Delivered >= sent {
			return now, nil
		}
		if time.Now().After(deadline) {
			return now, fmt.Errorf("bench: %d of %d timers delivered %s after their due time", st.Delivered, sent, o.Duration)
		}
		select {
		case <-ctx.Done():
			return now, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sendTimers sends o.Messages timer messages over the clients, message q
// (1, 2, …) due at dueOf(q), round robin over the queues, and returns how
// many answered
// SUCCESS. SENDs answered SYSTEM_BUSY (a loaded broker shedding SENDs that
// waited too long in its queue) are sent again in further rounds, as
// produce does; it gives up after 5 rounds in a row that stored nothing.
// Errors: any other answer, a transport error, or giving up.
func sendTimers(ctx context.Context, clients []*client.Conn, o *Options, dueOf func(q int64) int64) (int, error) {
	body := make([]byte, o.BodySize)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	var issued, ok atomic.Int64
	var lastErr, lastBusy lastError
	for stalled := 0; stalled < 5 && ok.Load() < int64(o.Messages); {
		before := ok.Load()
		want := int64(o.Messages) - before
		var round atomic.Int64
		s := newStream(clients, len(clients)*o.Inflight, 0)
		s.build = func(int) (*codec.Command, int, bool) {
			if round.Add(1) > want {
				return nil, 0, false
			}
			q := issued.Add(1)
			c := newRequest(codec.RequestSendMessageV2)
			props := codec.PropertyUniqClientMessageIDKeyIdx + "\x01benchtimer" + strconv.FormatInt(q, 16) + "\x02" +
				codec.PropertyTimerDeliverMS + "\x01" + strconv.FormatInt(dueOf(q), 10) + "\x02"
			codec.SendMessageRequestHeader{ProducerGroup: "bench_producer", Topic: o.Topic, DefaultTopic: "TBW102",
				DefaultTopicQueueNums: int32(o.Queues), QueueID: int32(q % int64(o.Queues)), BornTimestamp: time.Now().UnixMilli(),
				Properties: props}.EncodeV2(c)
			c.Body = body
			return c, 1, true
		}
		s.finish = func(_, _ int, _ int64, resp *codec.Command, err error) {
			switch code := replyCode(resp, err); {
			case code == codec.Success:
				ok.Add(1)
			case code == codec.SystemBusy:
				lastBusy.Store(replyError("send", resp))
			case err != nil:
				lastErr.Store(err)
			default:
				lastErr.Store(replyError("send", resp))
			}
		}
		s.start()
		select {
		case <-s.done:
		case <-ctx.Done():
			s.stop()
			s.wait(drainTimeout)
			return int(ok.Load()), ctx.Err()
		}
		if err := lastErr.Load(); err != nil {
			return int(ok.Load()), fmt.Errorf("bench: %d of %d timer SENDs answered SUCCESS: %w", ok.Load(), o.Messages, err)
		}
		if ok.Load() == before {
			stalled++
		} else {
			stalled = 0
		}
	}
	if n := ok.Load(); n < int64(o.Messages) {
		err := lastBusy.Load()
		return int(n), fmt.Errorf("bench: %d of %d timer SENDs answered SUCCESS after 5 rounds without progress: %w", n, o.Messages, err)
	}
	return int(ok.Load()), nil
}
