package bench

import (
	"context"
	"time"
)

// settleTick is how often settle samples the server's CPU time.
const settleTick = time.Second

// settle waits, after the prepare phase, until the server is idle: its CPU
// use over one settleTick (user+system, from /proc/<pid>/stat, summed over
// ServerPIDs) is
// below o.SettleCPU percent of one core. Producing and popping millions of
// messages leaves the server with background work (RocksDB flushes and
// compactions of the messages and pop column families, a JVM's GC) that
// would otherwise be charged to the measured ACK phase, more of it the more
// messages were prepared. It gives up after o.SettleMax and lets the run go
// on (logged). No wait when o.SettleMax is 0 or no ServerPIDs are given.
//
// Returns the seconds waited and whether the server went idle; the error
// is ctx's when the run was cancelled, or the /proc read's. Called on the
// CLI goroutine between prepare and the measured phase.
func settle(ctx context.Context, o *Options) (float64, bool, error) {
	pids := o.serverPIDs()
	if o.SettleMax <= 0 || len(pids) == 0 {
		return 0, false, nil
	}
	start := time.Now()
	prev, err := sumCPUSeconds(pids)
	if err != nil {
		return 0, false, err
	}
	t := time.NewTicker(settleTick)
	defer t.Stop()
	last := start
	for {
		select {
		case <-ctx.Done():
			return time.Since(start).Seconds(), false, ctx.Err()
		case now := <-t.C:
			cur, err := sumCPUSeconds(pids)
			if err != nil {
				return time.Since(start).Seconds(), false, err
			}
			pct := 100 * (cur - prev) / now.Sub(last).Seconds()
			prev, last = cur, now
			waited := now.Sub(start)
			if pct < o.SettleCPU {
				o.Log.Info().Float64("seconds", waited.Seconds()).Float64("server_cpu_pct", pct).Msg("server settled")
				return waited.Seconds(), true, nil
			}
			if waited >= o.SettleMax {
				o.Log.Warn().Float64("seconds", waited.Seconds()).Float64("server_cpu_pct", pct).
					Float64("settle_cpu_pct", o.SettleCPU).Msg("server still busy after --settle-max; measuring anyway")
				return waited.Seconds(), false, nil
			}
		}
	}
}

// sumCPUSeconds is the CPU seconds of pids together; the first read error
// is returned.
func sumCPUSeconds(pids []int) (float64, error) {
	var sum float64
	for _, p := range pids {
		v, err := procCPUSeconds(p)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}
