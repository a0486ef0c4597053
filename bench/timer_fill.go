package bench

import (
	"context"
	"fmt"
	"time"
)

// runTimerFill is the timer mode with --timer-spread: it sends o.Messages
// TIMER_DELIVER_MS messages whose due times are spread evenly over
// o.TimerSpread, the first o.TimerSpreadStart after the start, and reports
// how fast they were stored. Nothing falls due during the run, so the
// broker is left holding o.Messages pending timers: what the long-timer
// measurement (testdata/bench/timers_long.sh) needs before it reads disk
// use, memory, restart time and ACK throughput beside them. Errors: failed
// SENDs, a failed topic creation.
func runTimerFill(ctx context.Context, o Options) (*Report, error) {
	clients, err := start(ctx, &o, "timer")
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	if o.CreateTopic {
		if err := createTopic(ctx, clients[0], &o); err != nil {
			return nil, err
		}
	}
	started := time.Now()
	first := started.Add(o.TimerSpreadStart).UnixMilli()
	n := int64(max(o.Messages, 1))
	step := o.TimerSpread.Milliseconds() / n
	st := &TimerStats{SpreadSeconds: o.TimerSpread.Seconds(), FirstDueMs: first}
	sent, err := sendTimers(ctx, clients, &o, func(q int64) int64 { return first + (q-1)%n*step })
	st.Timers, st.SendSeconds = sent, time.Since(started).Seconds()
	if err != nil {
		return nil, err
	}
	st.FillPerSecond = float64(sent) / max(st.SendSeconds, 0.001)
	r := &Report{Mode: "timer", Label: o.Label, Target: o.Addr, Started: started, Seconds: st.SendSeconds,
		Config: o.config(), Machine: machineInfo(), Timer: st}
	fmt.Fprintf(o.Out, "timer fill: %d timers due over %s from %s stored in %.1f s = %.0f/s\n",
		sent, o.TimerSpread, time.UnixMilli(first).UTC().Format(time.RFC3339), st.SendSeconds, st.FillPerSecond)
	if o.JSON != "" {
		return r, r.WriteJSON(o.JSON)
	}
	return r, nil
}
