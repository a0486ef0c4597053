package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/procfs"
)

// CostStats is what the server spent on a run: its CPU time and the bytes
// it had written to storage, from the start of the measured phase to the
// end of the settle-after wait (Options.SettleAfter), so background work a
// run leaves behind (RocksDB flushes and compactions, RocketMQ's flush and
// dispatch threads, a JVM's GC) is charged to the run that caused it.
// Needs --server-pid (summed over every pid given); nil otherwise.
type CostStats struct {
	// Ops is the number of messages the run is judged by: SENDs answered
	// SUCCESS (produce), ACKs (pop), ACKs and CHANGEs (ack), heartbeats.
	Ops int64 `json:"ops"`
	// CPUSeconds is the server's user+system CPU time (/proc/<pid>/stat)
	// over the window; CPUMicrosPerOp is CPUSeconds in µs over Ops.
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUMicrosPerOp float64 `json:"cpu_us_per_op"`
	// IdleCPUPercent is the server's CPU use, % of one core, over
	// idleSample right before the measured phase: what it spends doing
	// nothing for the bench (a JVM's timers and housekeeping threads, a few
	// % of a core for RocketMQ, ~0 for popshim). NetMicrosPerOp is
	// CPUMicrosPerOp without that rate over the window: the cost the
	// messages themselves caused. Measured only with SettleAfter.
	IdleCPUPercent float64 `json:"idle_cpu_percent"`
	NetMicrosPerOp float64 `json:"net_cpu_us_per_op"`
	// WindowSeconds is the measured phase plus the tail.
	WindowSeconds float64 `json:"window_seconds"`
	// TailSeconds is the settle-after part of the window, after the last
	// reply; Settled is whether the server went idle within it.
	TailSeconds float64 `json:"tail_seconds"`
	Settled     bool    `json:"settled"`
	// WriteBytes and CancelledWriteBytes are the deltas of /proc/<pid>/io
	// write_bytes (bytes the process caused to be sent to storage: page
	// cache pages it dirtied, counted again each time a page written back
	// is dirtied again) and cancelled_write_bytes (dirty pages dropped
	// before writeback, by truncation or deletion). Summed over every
	// thread of the server, so compactions and flushes count.
	WriteBytes          int64 `json:"write_bytes"`
	CancelledWriteBytes int64 `json:"cancelled_write_bytes"`
	// PayloadBytes is Ops × the body size for produce, 0 otherwise;
	// BytesPerPayloadByte is WriteBytes / PayloadBytes.
	PayloadBytes        int64   `json:"payload_bytes,omitempty"`
	BytesPerPayloadByte float64 `json:"bytes_per_payload_byte,omitempty"`
}

// costMeter reads the server's CPU time and I/O counters at the start of
// the measured phase, summed over its processes (Options.ServerPIDs).
type costMeter struct {
	pids           []int
	idle           float64 // % of one core before the run
	start, end1    time.Time
	cpu0, cpu1     float64
	io0, io1       ioCounters
	ok, ioOK       bool // start read
	ended, ioEnded bool // end read
	tail           float64
	settled        bool
}

// ioCounters are write_bytes and cancelled_write_bytes of /proc/<pid>/io.
type ioCounters struct{ write, cancelled int64 }

// procIO reads /proc/<pid>/io. Errors: the process or procfs is missing,
// or the caller may not read the file (another user's process).
func procIO(pid int) (procfs.ProcIO, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procfs.ProcIO{}, fmt.Errorf("bench: /proc/%d: %w", pid, err)
	}
	io, err := p.IO()
	if err != nil {
		return procfs.ProcIO{}, fmt.Errorf("bench: /proc/%d/io: %w", pid, err)
	}
	return io, nil
}

// sumCPU is the user+system CPU seconds of pids together.
func sumCPU(pids []int) (float64, error) {
	var t float64
	for _, pid := range pids {
		v, err := procCPUSeconds(pid)
		if err != nil {
			return 0, err
		}
		t += v
	}
	return t, nil
}

// sumIO is the I/O counters of pids together.
func sumIO(pids []int) (ioCounters, error) {
	var c ioCounters
	for _, pid := range pids {
		v, err := procIO(pid)
		if err != nil {
			return ioCounters{}, err
		}
		c.write += int64(v.WriteBytes)
		c.cancelled += v.CancelledWriteBytes
	}
	return c, nil
}

// idleSample is how long startCost watches the server's idle CPU use.
const idleSample = 2 * time.Second

// startCost reads the server's counters; with o.SettleAfter it first
// samples the server's idle CPU use for idleSample.
func startCost(o *Options) *costMeter {
	m := &costMeter{pids: o.serverPIDs()}
	if len(m.pids) == 0 {
		return m
	}
	if o.SettleAfter > 0 {
		if a, err := sumCPU(m.pids); err == nil {
			t := time.Now()
			time.Sleep(idleSample)
			if b, err := sumCPU(m.pids); err == nil {
				m.idle = 100 * (b - a) / time.Since(t).Seconds()
			}
		}
	}
	m.start = time.Now()
	if v, err := sumCPU(m.pids); err == nil {
		m.cpu0, m.ok = v, true
	}
	if v, err := sumIO(m.pids); err == nil {
		m.io0, m.ioOK = v, true
	}
	return m
}

// end waits up to o.SettleAfter for the server to go idle (settle's test)
// and reads the counters again. Called once, after the last reply.
func (m *costMeter) end(ctx context.Context, o *Options) {
	if !m.ok {
		return
	}
	if o.SettleAfter > 0 {
		w := *o
		w.SettleMax = o.SettleAfter
		// A server that is never idle (a JVM's housekeeping threads) counts
		// as settled once back near its own idle level.
		w.SettleCPU = max(o.SettleCPU, m.idle+5)
		secs, ok, err := settle(ctx, &w)
		if err != nil {
			o.Log.Warn().Err(err).Msg("settle after the run")
		}
		m.tail, m.settled = secs, ok
	}
	if v, err := sumCPU(m.pids); err == nil {
		m.cpu1, m.ended = v, true
	}
	m.end1 = time.Now()
	if v, err := sumIO(m.pids); err == nil && m.ioOK {
		m.io1, m.ioEnded = v, true
	}
}

// stats returns the cost of ops messages of payload bytes each (0 for
// none), or nil when the server's counters could not be read.
func (m *costMeter) stats(ops int64, payload int) *CostStats {
	if !m.ok || !m.ended {
		return nil
	}
	c := &CostStats{Ops: ops, CPUSeconds: m.cpu1 - m.cpu0, TailSeconds: m.tail, Settled: m.settled,
		IdleCPUPercent: m.idle, WindowSeconds: m.end1.Sub(m.start).Seconds()}
	if ops > 0 {
		c.CPUMicrosPerOp = 1e6 * c.CPUSeconds / float64(ops)
		c.NetMicrosPerOp = 1e6 * (c.CPUSeconds - c.IdleCPUPercent/100*c.WindowSeconds) / float64(ops)
	}
	if m.ioOK && m.ioEnded {
		c.WriteBytes = m.io1.write - m.io0.write
		c.CancelledWriteBytes = m.io1.cancelled - m.io0.cancelled
	}
	if payload > 0 {
		c.PayloadBytes = ops * int64(payload)
		c.BytesPerPayloadByte = float64(c.WriteBytes) / float64(c.PayloadBytes)
	}
	return c
}

// costOps names the series counted as a mode's messages and whether each
// carries a body of Options.BodySize (produce, grpc-send).
func costOps(mode string) (series []string, payload bool) {
	switch mode {
	case "produce", "grpc-send":
		return []string{"send"}, true
	case "grpc-receive":
		return []string{"acked"}, false
	case "pop":
		return []string{"ack"}, false
	case "ack":
		return []string{"ack", "change"}, false
	case "heartbeat":
		return []string{"heartbeat"}, false
	}
	return nil, false
}

// printCost writes the cost line of a report.
func printCost(out io.Writer, c *CostStats) {
	fmt.Fprintf(out, "server cost: %.1f µs CPU per message", c.CPUMicrosPerOp)
	if c.TailSeconds > 0 { // the idle rate is measured with SettleAfter only
		fmt.Fprintf(out, ", %.1f µs net of its idle %.1f %% of a core", c.NetMicrosPerOp, c.IdleCPUPercent)
	}
	fmt.Fprintf(out, " (%d messages, %.2f CPU s", c.Ops, c.CPUSeconds)
	if c.TailSeconds > 0 {
		fmt.Fprintf(out, " in the run and the %.1f s after it", c.TailSeconds)
	}
	if !c.Settled && c.TailSeconds > 0 {
		fmt.Fprint(out, ", still busy")
	}
	fmt.Fprintf(out, "), disk writes %.1f MB (cancelled %.1f MB)", float64(c.WriteBytes)/1e6, float64(c.CancelledWriteBytes)/1e6)
	if c.PayloadBytes > 0 {
		fmt.Fprintf(out, ", %.2f bytes per payload byte", c.BytesPerPayloadByte)
	}
	fmt.Fprintln(out)
}

// MinuteRates returns the main series' OK/s in the first and in the last
// whole minute of the measured phase, from the report's intervals; ok=false
// when the phase was shorter than two minutes.
func (r *Report) MinuteRates(series string) (first, last float64, ok bool) {
	if r.Seconds < 120 {
		return 0, 0, false
	}
	var nFirst, nLast, sFirst, sLast float64
	for _, iv := range r.Intervals {
		x, found := iv.Series[series]
		if !found {
			continue
		}
		start := iv.T - iv.Seconds
		if iv.T <= 60+1e-6 {
			nFirst += x.OpsPerSec * iv.Seconds
			sFirst += iv.Seconds
		}
		if start >= r.Seconds-60-1e-6 && iv.T <= r.Seconds+1e-6 {
			nLast += x.OpsPerSec * iv.Seconds
			sLast += iv.Seconds
		}
	}
	if sFirst < 30 || sLast < 30 {
		return 0, 0, false
	}
	return nFirst / sFirst, nLast / sLast, true
}
