package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// sampleTick is the resolution of the latency-over-time plot.
const sampleTick = 100 * time.Millisecond

// drainTimeout bounds the wait for outstanding replies after the run.
const drainTimeout = 15 * time.Second

// phase is one measured phase: the streams and side loads that run in it,
// the recorder they report to and the sampler that turns it into intervals,
// plot points and totals. Built and driven by one Run* function.
type phase struct {
	opts *Options
	mode string
	rec  *recorder
	scr  *scraper

	// burst state, written by the CHANGE burst loop, read by the ACK stream
	// and the sampler.
	burstOutstanding atomic.Int64
	burstSeen        atomic.Bool

	start                time.Time
	tick, ival, total    []*window
	points               []Point
	intervals            []IntervalStats
	ivalStart            time.Time
	first, last, ivalSrv *serverCounters
	cpu                  *cpuMeter
	cost                 *costMeter
	probe                *fsyncProbe // nil without Options.FsyncProbeEvery
	printer              *printer
}

// newPhase builds the phase of a run over conns connections (one recorder
// shard per connection, at most two per P) recording the named series.
func newPhase(o *Options, mode string, conns int, series []string) *phase {
	// Only GOMAXPROCS reader goroutines record at once, so two shards per P
	// keep contention rare; every further shard costs the sampler histogram
	// merges each tick.
	shards := max(min(conns, 2*runtime.GOMAXPROCS(0)), 1)
	p := &phase{opts: o, mode: mode, rec: newRecorder(series, shards), scr: newScraper(o.MetricsURL)}
	p.tick, p.ival, p.total = p.rec.newWindows(), p.rec.newWindows(), p.rec.newWindows()
	p.printer = newPrinter(o.Out, series, o.Quiet)
	return p
}

// scrapeNow returns a scrape of the server counters, or nil without a
// metrics URL or on error (logged).
func (p *phase) scrapeNow(ctx context.Context) *serverCounters {
	if p.scr == nil {
		return nil
	}
	c, err := p.scr.scrape(ctx)
	if err != nil {
		p.opts.Log.Warn().Err(err).Msg("metrics scrape failed")
		return nil
	}
	return &c
}

// load is the main request stream of a phase: the remoting stream, or the
// gRPC workers (grpcLoad). Its methods are called by measure only.
type load interface {
	// start issues the first requests; called once.
	start()
	// stop makes every slot end after its current request; any goroutine.
	stop()
	// finished is closed when every slot has ended (after stop, or when the
	// input ran out).
	finished() <-chan struct{}
	// wait blocks until finished or timeout; false on timeout.
	wait(timeout time.Duration) bool
	// ranOut reports whether a slot ended because the input ran out.
	ranOut() bool
}

// measure starts main and the side loops, samples until Duration, main's
// exhaustion or ctx, then stops everything and drains outstanding replies.
// side loops get a stop channel and must return (after draining their own
// replies) when it closes. It returns
// the measured seconds and whether main ran out of input.
func (p *phase) measure(ctx context.Context, main load, side ...func(stop <-chan struct{})) (float64, bool, error) {
	p.cost = startCost(p.opts) // first: it may watch the idle server for a while
	p.first = p.scrapeNow(ctx)
	p.last, p.ivalSrv = p.first, p.first
	p.cpu = startCPU(p.opts.serverPIDs())
	if p.opts.FsyncProbeEvery > 0 {
		p.probe = &fsyncProbe{dir: p.opts.FsyncProbeDir, w: newWindow()}
		side = append(side, p.probe.loop(p.opts.FsyncProbeEvery))
	}
	if p.opts.CPUProfile != "" {
		side = append(side, profileSideLoop(p.opts))
	}
	p.start = time.Now()
	p.ivalStart = p.start
	p.printer.header()
	stopSide := make(chan struct{})
	sideDone := make(chan struct{}, len(side))
	for _, f := range side {
		go func() { f(stopSide); sideDone <- struct{}{} }()
	}
	main.start()
	ticker := time.NewTicker(sampleTick)
	defer ticker.Stop()
	deadline := time.NewTimer(p.opts.Duration)
	defer deadline.Stop()
	var cause error
loop:
	for {
		select {
		case now := <-ticker.C:
			p.sample(ctx, now)
		case <-main.finished():
			break loop
		case <-deadline.C:
			break loop
		case <-ctx.Done():
			cause = ctx.Err()
			break loop
		}
	}
	main.stop()
	close(stopSide)
	for range side {
		<-sideDone
	}
	if !main.wait(drainTimeout) {
		p.opts.Log.Warn().Msg("replies still outstanding after the drain timeout; closing connections")
	}
	end := time.Now()
	p.sample(ctx, end)
	p.flushInterval(ctx, end, true)
	p.cost.end(ctx, p.opts)
	if p.probe != nil && p.probe.err != nil {
		p.opts.Log.Warn().Err(p.probe.err).Msg("fsync probe")
	}
	return end.Sub(p.start).Seconds(), main.ranOut(), cause
}

// sample drains the recorder into one plot point and the running interval.
func (p *phase) sample(ctx context.Context, now time.Time) {
	p.rec.drainTo(p.tick)
	pt := Point{T: now.Sub(p.start).Seconds(), Series: map[string]PointStats{},
		Burst: p.burstSeen.Swap(false) || p.burstOutstanding.Load() > 0}
	for i, w := range p.tick {
		p.ival[i].add(w) // reaches total when the interval is flushed
		if w.ok > 0 {
			pt.Series[p.rec.names[i]] = pointOf(w)
		}
	}
	p.points = append(p.points, pt)
	if now.Sub(p.ivalStart) >= p.opts.Interval-sampleTick/2 {
		p.flushInterval(ctx, now, false)
	}
}

// pointOf is the plot point of a tick: the count, p50, p99 and max of
// latencyOf in one block scan of the histogram (ValueAtPercentilesSlice),
// instead of latencyOf's seven passes.
func pointOf(w *window) PointStats {
	v := w.h.ValueAtPercentilesSlice(pointPercentiles)
	return PointStats{N: w.ok, P50: v[0], P99: v[1], Max: v[2]}
}

var pointPercentiles = []float64{50, 99, 100}

// flushInterval closes the running interval, adds it to the totals and
// prints its line. At the end (final) a partial interval is kept only when
// it saw replies.
func (p *phase) flushInterval(ctx context.Context, now time.Time, final bool) {
	seen := false
	for i, w := range p.ival {
		seen = seen || w.ok+w.busy+w.errs+w.empty > 0
		p.total[i].add(w) // every outcome once: ival is reset below on every path
	}
	secs := now.Sub(p.ivalStart).Seconds()
	if secs <= 0 {
		for _, w := range p.ival {
			w.reset()
		}
		return
	}
	srv := p.scrapeNow(ctx)
	if srv != nil {
		p.last = srv
	}
	if final && !seen {
		return
	}
	iv := IntervalStats{T: now.Sub(p.start).Seconds(), Seconds: secs, Series: map[string]IntervalSeries{}}
	for i, w := range p.ival {
		iv.Series[p.rec.names[i]] = intervalOf(w, secs)
		w.reset()
	}
	if srv != nil && p.ivalSrv != nil {
		d := delta(*p.ivalSrv, *srv)
		iv.Server = &d
	}
	if srv != nil {
		p.ivalSrv = srv
	}
	p.intervals = append(p.intervals, iv)
	p.ivalStart = now
	p.printer.interval(&iv)
}

// report assembles the Report of the phase. ackSeries names the series
// whose OK count normalises fsyncs ("" for none); writeSeries lists the
// series whose requests write (for fsyncs per 1000 ops).
func (p *phase) report(seconds float64, exhausted bool, ackSeries string, writeSeries ...string) *Report {
	r := &Report{Mode: p.mode, Label: p.opts.Label, Workload: p.opts.Workload, Round: p.opts.Round, Target: p.opts.Addr, Started: p.start,
		Seconds: seconds, Exhausted: exhausted, Machine: machineInfo(), Intervals: p.intervals, Points: p.points, Config: p.opts.config()}
	for i, w := range p.total {
		r.Series = append(r.Series, summarize(p.rec.names[i], w, seconds))
	}
	names, withBody := costOps(p.mode)
	var ops int64
	for _, name := range names {
		if s, ok := r.SeriesByName(name); ok {
			ops += s.OK
		}
	}
	payload := 0
	if withBody {
		payload = p.opts.BodySize
	}
	r.Cost = p.cost.stats(ops, payload)
	if p.probe != nil {
		r.Disk = p.probe.stats(r)
	}
	r.BenchCPU, r.ServerCPU = p.cpu.finish(seconds, p.first, p.last)
	if p.first != nil && p.last != nil && p.first.hasWriter {
		st := &ServerStats{ServerDelta: delta(*p.first, *p.last)}
		if s, ok := r.SeriesByName(ackSeries); ok && s.OK > 0 {
			st.FsyncsPer1000Acks = 1000 * st.Fsyncs / float64(s.OK)
		}
		var ops int64
		for _, name := range writeSeries {
			if s, ok := r.SeriesByName(name); ok {
				ops += s.OK
			}
		}
		if ops > 0 {
			st.FsyncsPer1000Ops = 1000 * st.Fsyncs / float64(ops)
		}
		r.Server = st
	}
	return r
}

// config is the part of o worth recording in a report.
func (o *Options) config() map[string]any {
	return map[string]any{
		"addr": o.Addr, "broker_name": o.BrokerName, "topic": o.Topic, "group": o.Group, "queues": o.Queues,
		"conns": o.Conns, "inflight": o.Inflight, "duration": o.Duration.String(), "rate": o.Rate,
		"messages": o.Messages, "produce_batch": o.ProduceBatch, "change_burst": o.ChangeBurst, "change_period": o.ChangePeriod.String(),
		"change_pool": o.ChangePool, "invisible_time": o.InvisibleTime.String(), "body_size": o.BodySize,
		"random_body": o.RandomBody, "settle_after": o.SettleAfter.String(), "tls": o.TLS,
	}
}

// grpcConfig is config plus the gRPC modes' settings.
func (o *Options) grpcConfig() map[string]any {
	c := o.config()
	for _, k := range []string{"broker_name", "change_burst", "change_period", "change_pool"} {
		delete(c, k)
	}
	c["remoting_addr"], c["batch_size"], c["ack_batch"] = o.GRPC.RemotingAddr, o.GRPC.ReceiveBatch, o.GRPC.AckBatch
	c["long_polling"] = o.GRPC.LongPolling.String()
	return c
}

// finishReport prints the summary and writes the JSON and plot outputs.
func finishReport(o *Options, r *Report) error {
	printSummary(o.Out, r)
	if o.JSON != "" {
		if err := r.WriteJSON(o.JSON); err != nil {
			return err
		}
	}
	if o.Plot != "" {
		if err := WritePlot(o.Plot, []*Report{r}); err != nil {
			return fmt.Errorf("bench: plot: %w", err)
		}
	}
	return nil
}
