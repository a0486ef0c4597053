package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"
)

// Report is the result of one bench run, written by --json and read back
// by Compare. Latencies are microseconds; rates are per second.
type Report struct {
	Mode  string `json:"mode"`  // ack, pop, produce, heartbeat, raw-storage
	Label string `json:"label"` // --label
	// Workload is --workload, the name bench cost groups runs by (e.g.
	// "produce-1k"); "" outside such a series.
	Workload string `json:"workload,omitempty"`
	// Round is --round: the run's round in a make bench series, 0 = none.
	Round   int       `json:"round,omitempty"`
	Target  string    `json:"target,omitempty"`
	Started time.Time `json:"started"`
	// Seconds is the measured phase, from the first request to the last
	// reply (or the deadline).
	Seconds float64 `json:"seconds"`
	// Exhausted is true when the run ended because the prepared receipt
	// handles (or messages) ran out before Duration.
	Exhausted bool            `json:"exhausted,omitempty"`
	Config    map[string]any  `json:"config,omitempty"`
	Series    []SeriesSummary `json:"series"`
	// Bursts counts CHANGE bursts sent; BurstMillis summarises how long each
	// took from its first send to its last reply.
	Bursts      int           `json:"bursts,omitempty"`
	BurstMillis *Latency      `json:"burst_ms,omitempty"`
	Prepare     *PrepareStats `json:"prepare,omitempty"`
	Server      *ServerStats  `json:"server,omitempty"`
	BenchCPU    CPUStats      `json:"bench_cpu"`
	ServerCPU   *CPUStats     `json:"server_cpu,omitempty"`
	// Cost is the server's CPU time and disk writes per message, the
	// settle-after tail included (needs --server-pid).
	Cost *CostStats `json:"cost,omitempty"`
	// Disk is the 4 KiB write+fdatasync latency probed during the run.
	Disk      *DiskStats      `json:"disk,omitempty"`
	Machine   Machine         `json:"machine"`
	Storage   *StorageResult  `json:"storage,omitempty"`
	Timer     *TimerStats     `json:"timer,omitempty"`
	Intervals []IntervalStats `json:"intervals,omitempty"`
	Points    []Point         `json:"points,omitempty"`
}

// SeriesSummary is one request stream over the whole measured phase.
type SeriesSummary struct {
	Name      string           `json:"name"`
	OK        int64            `json:"ok"`
	Busy      int64            `json:"system_busy"`
	Errors    int64            `json:"errors"`
	Empty     int64            `json:"empty,omitempty"`
	OpsPerSec float64          `json:"ops_per_sec"` // OK / Seconds
	Latency   Latency          `json:"latency_us"`
	Codes     map[string]int64 `json:"codes,omitempty"` // non-success response code → count; "-1" transport
}

// Latency summarises a histogram, in the unit named by the field holding it.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
}

// PrepareStats describes the prepare phase (not measured as throughput).
type PrepareStats struct {
	Produced int     `json:"produced"`
	Receipts int     `json:"receipts"`
	Seconds  float64 `json:"seconds"`
	// SettleSeconds is how long the bench then waited for the server to go
	// idle (Options.SettleMax), and Settled whether it did.
	SettleSeconds float64 `json:"settle_seconds,omitempty"`
	Settled       bool    `json:"settled,omitempty"`
}

// IntervalStats is one report line: every series over one Interval.
type IntervalStats struct {
	T       float64                   `json:"t"`       // seconds since the start of the measured phase, end of the interval
	Seconds float64                   `json:"seconds"` // length of the interval
	Series  map[string]IntervalSeries `json:"series"`
	Server  *ServerDelta              `json:"server,omitempty"`
}

// IntervalSeries is one series over one interval.
type IntervalSeries struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	P50       int64   `json:"p50_us"`
	P99       int64   `json:"p99_us"`
	P999      int64   `json:"p999_us"`
	Max       int64   `json:"max_us"`
	Busy      int64   `json:"system_busy,omitempty"`
	Errors    int64   `json:"errors,omitempty"`
}

// Point is one sampler tick (100 ms) of the latency-over-time plot.
type Point struct {
	T      float64               `json:"t"` // seconds since start, end of the tick
	Burst  bool                  `json:"burst,omitempty"`
	Series map[string]PointStats `json:"series"`
}

// PointStats is one series in one tick; latencies in µs.
type PointStats struct {
	N   int64 `json:"n"`
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// CPUStats is the CPU time (user+system) a process used during the
// measured phase. Percent is of one core; MachinePercent of all cores.
type CPUStats struct {
	Seconds        float64 `json:"seconds"`
	Percent        float64 `json:"percent"`
	MachinePercent float64 `json:"machine_percent"`
	Source         string  `json:"source"` // "proc" (/proc/<pid>/stat) or "metrics" (process_cpu_seconds_total)
	// Parts is each process's share when the server is several processes
	// (--server-pid given more than once: a rocketmq-proxy and its broker);
	// the fields above are their sum.
	Parts []ProcCPU `json:"parts,omitempty"`
}

func latencyOf(w *window) Latency {
	h := w.h
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{Count: h.TotalCount(), Mean: h.Mean(), P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90),
		P99: h.ValueAtQuantile(99), P999: h.ValueAtQuantile(99.9), Max: h.Max()}
}

func summarize(name string, w *window, seconds float64) SeriesSummary {
	s := SeriesSummary{Name: name, OK: w.ok, Busy: w.busy, Errors: w.errs, Empty: w.empty, Latency: latencyOf(w)}
	if seconds > 0 {
		s.OpsPerSec = float64(w.ok) / seconds
	}
	if len(w.codes) > 0 {
		s.Codes = map[string]int64{}
		for c, n := range w.codes {
			s.Codes[strconv.Itoa(int(c))] = n
		}
	}
	return s
}

func intervalOf(w *window, seconds float64) IntervalSeries {
	l := latencyOf(w)
	return IntervalSeries{OpsPerSec: float64(w.ok) / seconds, P50: l.P50, P99: l.P99, P999: l.P999, Max: l.Max, Busy: w.busy, Errors: w.errs}
}

// SeriesByName returns the summary of the named series and whether it exists.
func (r *Report) SeriesByName(name string) (SeriesSummary, bool) {
	for _, s := range r.Series {
		if s.Name == name {
			return s, true
		}
	}
	return SeriesSummary{}, false
}

// WriteJSON writes r, indented, to path ("-" is stdout).
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encode report: %w", err)
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("bench: write report: %w", err)
	}
	return nil
}

// ReadReport reads a report written by WriteJSON. Errors: the read or JSON
// decode error, or a JSON file that is not a report (no mode or label).
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bench: decode report %s: %w", path, err)
	}
	if r.Mode == "" || r.Label == "" {
		return nil, fmt.Errorf("bench: %s is not a bench report (no mode or label)", path)
	}
	return &r, nil
}

// sortedCodes returns "code×n" pairs in code order, for the human lines.
func sortedCodes(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { a, _ := strconv.Atoi(keys[i]); b, _ := strconv.Atoi(keys[j]); return a < b })
	s := ""
	for _, k := range keys {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("%s×%d", k, m[k])
	}
	return s
}

// ReadReports reads several reports in order; the first error stops it.
func ReadReports(paths []string) ([]*Report, error) {
	out := make([]*Report, 0, len(paths))
	for _, p := range paths {
		r, err := ReadReport(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
