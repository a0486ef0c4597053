package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Row is one run in a comparison table. Latencies in milliseconds; NaN
// where a run does not have the value (printed as "n/a").
type Row struct {
	Label         string
	Mode          string
	OpsPerSec     float64 // main series: ack, pop→ack, send, acked, commit (txn), heartbeat; raw-storage mutations
	AckP50Ms      float64
	AckP99Ms      float64
	AckBurstP99Ms float64 // ACK p99 while a CHANGE burst was outstanding
	AckCalmP99Ms  float64
	AckP999Ms     float64
	AckMaxMs      float64
	ChangeOps     float64
	ChangeP99Ms   float64
	FsyncsPer1000 float64 // server fsyncs per 1000 ACKs (ack mode) or per 1000 ops
	Busy, Errors  int64
	BenchCPU      float64 // percent of one core
	ServerCPU     float64 // percent of one core
	// ServerCPUPerOpUs is the server's CPU time per operation of the main
	// series (per ACK, per message sent, per message acked), µs: for a
	// proxy in front of a broker, both processes.
	ServerCPUPerOpUs float64
	FractionOfLimit  float64 // OpsPerSec / min(storage limit, network limit)
	LoadAvg1         float64 // machine load average when the run ended
	// Round is the run's round in a make bench series (the report's
	// --round, or its position among the runs of its label when those
	// carry none), 0 for a run outside one.
	Round int
	// Exhausted: the run ended early because its prepared input ran out.
	Exhausted bool
	// InFlight is the run's request window, connections × pipelined
	// requests per connection (its --conns × --inflight); 0 when the
	// report does not say (raw-storage, older reports).
	InFlight int
}

// Comparison is the side-by-side view of several reports.
type Comparison struct {
	Rows []Row
	// StorageLimit and NetworkLimit are ops/s from a raw-storage and a
	// heartbeat report, NaN when absent; Limit is the lower of the two.
	StorageLimit, NetworkLimit, Limit float64
	// Medians holds, for each ack label that ran in rounds, the median of
	// every value over its rounds (Round 0), in order of first occurrence.
	// The ratio table compares these.
	Medians []Row
	// Family is the compared family (familyOf): that of the first report
	// that is not a limit (raw-storage, heartbeat). Rounds, medians and
	// ratios are of its rows only.
	Family string
}

func nan() float64 { return math.NaN() }

func toMs(us int64) float64 { return float64(us) / 1000 }

// mainSeries names the series whose throughput a mode is judged by.
func mainSeries(mode string) string {
	switch mode {
	case "ack", "pop":
		return "ack"
	case "produce", "grpc-send":
		return "send"
	case "grpc-receive":
		return "acked"
	case "txn":
		return "commit"
	case "heartbeat":
		return "heartbeat"
	}
	return ""
}

// familyOf groups the modes whose main series count the same thing, so
// that one comparison can hold them: "send" (a message stored: produce,
// grpc-send), "consume" (a message consumed and acked: pop,
// grpc-receive); any other mode is its own family.
func familyOf(mode string) string {
	switch mode {
	case "produce", "grpc-send":
		return "send"
	case "pop", "grpc-receive":
		return "consume"
	}
	return mode
}

// limitMode reports whether mode measures a machine limit, not a workload.
func limitMode(mode string) bool { return mode == "raw-storage" || mode == "heartbeat" }

// rowOf extracts the comparable values of r.
func rowOf(r *Report) Row {
	row := Row{Label: r.Label, Mode: r.Mode, OpsPerSec: nan(), AckP50Ms: nan(), AckP99Ms: nan(), AckBurstP99Ms: nan(),
		AckCalmP99Ms: nan(), AckP999Ms: nan(), AckMaxMs: nan(), ChangeOps: nan(), ChangeP99Ms: nan(), FsyncsPer1000: nan(),
		BenchCPU: r.BenchCPU.Percent, ServerCPU: nan(), ServerCPUPerOpUs: nan(), FractionOfLimit: nan(), LoadAvg1: r.Machine.LoadAvg1,
		Round: r.Round, Exhausted: r.Exhausted, InFlight: configInt(r, "conns") * configInt(r, "inflight")}
	if r.Storage != nil {
		row.OpsPerSec = r.Storage.OpsPerSec
	}
	if s, ok := r.SeriesByName(mainSeries(r.Mode)); ok {
		row.OpsPerSec = s.OpsPerSec
		row.AckP50Ms, row.AckP99Ms = toMs(s.Latency.P50), toMs(s.Latency.P99)
		row.AckP999Ms, row.AckMaxMs = toMs(s.Latency.P999), toMs(s.Latency.Max)
	}
	for _, s := range r.Series {
		row.Busy += s.Busy
		row.Errors += s.Errors
	}
	if s, ok := r.SeriesByName("ack_during_burst"); ok && s.OK > 0 {
		row.AckBurstP99Ms = toMs(s.Latency.P99)
	}
	if s, ok := r.SeriesByName("ack_outside_burst"); ok && s.OK > 0 {
		row.AckCalmP99Ms = toMs(s.Latency.P99)
	}
	if s, ok := r.SeriesByName("change"); ok {
		row.ChangeOps = s.OpsPerSec
		if s.OK > 0 {
			row.ChangeP99Ms = toMs(s.Latency.P99)
		}
		// The ACK sub-series counted ACK replies twice; busy/errors of the
		// total are the ack and change series only.
		a, _ := r.SeriesByName("ack")
		row.Busy, row.Errors = a.Busy+s.Busy, a.Errors+s.Errors
	}
	if r.Server != nil {
		switch {
		case r.Server.FsyncsPer1000Acks > 0:
			row.FsyncsPer1000 = r.Server.FsyncsPer1000Acks
		case r.Server.FsyncsPer1000Ops > 0:
			row.FsyncsPer1000 = r.Server.FsyncsPer1000Ops
		}
	}
	if r.ServerCPU != nil {
		row.ServerCPU = r.ServerCPU.Percent
		if row.OpsPerSec > 0 {
			row.ServerCPUPerOpUs = 1e4 * row.ServerCPU / row.OpsPerSec
		}
	}
	return row
}

// configInt reads a whole-number setting from r.Config: an int when the
// report was built in this process, a float64 when it was read from JSON.
// 0 when absent or of another type.
func configInt(r *Report, key string) int {
	switch v := r.Config[key].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// Compare builds the comparison of reports, in the order given. Limits come
// from the raw-storage and heartbeat reports among them (the last of each).
func Compare(reports []*Report) *Comparison {
	c := &Comparison{StorageLimit: nan(), NetworkLimit: nan(), Limit: nan()}
	for _, r := range reports {
		if c.Family == "" && !limitMode(r.Mode) {
			c.Family = familyOf(r.Mode)
		}
		row := rowOf(r)
		switch r.Mode {
		case "raw-storage":
			c.StorageLimit = row.OpsPerSec
		case "heartbeat":
			c.NetworkLimit = row.OpsPerSec
		}
		c.Rows = append(c.Rows, row)
	}
	c.Limit = math.Min(c.StorageLimit, c.NetworkLimit) // NaN when either is NaN
	switch {
	case math.IsNaN(c.StorageLimit):
		c.Limit = c.NetworkLimit
	case math.IsNaN(c.NetworkLimit):
		c.Limit = c.StorageLimit
	}
	for i := range c.Rows {
		if c.Rows[i].Mode == "ack" && c.Limit > 0 {
			c.Rows[i].FractionOfLimit = c.Rows[i].OpsPerSec / c.Limit
		}
	}
	c.Medians = numberRounds(c.Rows, c.Family)
	return c
}

func cell(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf(format, v)
}

// ratio returns a/b, NaN when either is missing or b is 0.
func ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return nan()
	}
	return a / b
}

// WriteMarkdown writes the comparison as Markdown tables: one row per run
// (a run of a repeated label is suffixed " #round"), the medians of labels
// that ran in rounds, then the ratios of the first label of the compared
// family against every other label of it (medians where there are rounds,
// with the per-round ratios beside them), then the limits.
func (c *Comparison) WriteMarkdown(w io.Writer) {
	var b strings.Builder
	writeRows(&b, c.Rows)
	if c.hasRounds() {
		b.WriteString("\nMedian over the rounds (SYSTEM_BUSY and errors: summed over them):\n\n")
		writeRows(&b, c.Medians)
	}
	if acks := c.summaries(); len(acks) > 1 && c.Family != "ack" {
		c.writeOpsRatios(&b, acks)
	} else if len(acks) > 1 {
		s := acks[0]
		rounds := c.hasRounds()
		b.WriteString("\n| " + s.Label + " vs | ACK ops/s ratio | ACK p99 during bursts: theirs / ours | ACK p99: theirs / ours | fsyncs per 1000 ACKs: theirs / ours |")
		sep := "|---|--:|--:|--:|--:|"
		if rounds {
			b.WriteString(" ACK ops/s ratio per round | burst p99 ratio per round |")
			sep += "---|---|"
		}
		b.WriteString("\n" + sep + "\n")
		for _, o := range acks[1:] {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |", o.Label, ratioCell(ratio(s.OpsPerSec, o.OpsPerSec)),
				ratioCell(ratio(o.AckBurstP99Ms, s.AckBurstP99Ms)), ratioCell(ratio(o.AckP99Ms, s.AckP99Ms)),
				ratioCell(ratio(o.FsyncsPer1000, s.FsyncsPer1000)))
			if rounds {
				fmt.Fprintf(&b, " %s | %s |",
					c.perRound(s.Label, o.Label, func(s, o Row) float64 { return ratio(s.OpsPerSec, o.OpsPerSec) }),
					c.perRound(s.Label, o.Label, func(s, o Row) float64 { return ratio(o.AckBurstP99Ms, s.AckBurstP99Ms) }))
			}
			b.WriteString("\n")
		}
	}
	if depths := c.mixedInFlight(); depths != "" {
		fmt.Fprintf(&b, "\nNote: the ack runs compared had different request windows (%s in flight), so their ratios mix two workloads.\n", depths)
	}
	if rep := c.repeatedRounds(); len(rep) > 0 {
		fmt.Fprintf(&b, "\nNote: %s appear more than once; the medians count every run, the per-round ratios the last.\n", strings.Join(rep, ", "))
	}
	if !math.IsNaN(c.Limit) {
		fmt.Fprintf(&b, "\nLimits on this machine: storage %s ops/s (synced WriteBatches), network %s ops/s (HEART_BEAT round trips); lower: %s ops/s.\n",
			cell(c.StorageLimit, "%.0f"), cell(c.NetworkLimit, "%.0f"), cell(c.Limit, "%.0f"))
		if c.exceedsLimit() {
			b.WriteString("A fraction of limit above 1 means ACKs went faster than the lower limit, so that limit is an underestimate: look at its run's bench CPU (the HEART_BEAT run can be limited by the bench client) and load average.\n")
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// writeRows writes the per-run table of rows. ops/s and the p50, p99,
// p99.9 and max columns are of each mode's main series (mainSeries: ACK,
// send, acked, heartbeat).
func writeRows(b *strings.Builder, rows []Row) {
	b.WriteString("| run | mode | ops/s | p50 ms | p99 ms | ACK p99 during CHANGE bursts ms | ACK p99 outside bursts ms | p99.9 ms | max ms | CHANGE ops/s | CHANGE p99 ms | fsyncs / 1000 ACKs | SYSTEM_BUSY | errors | bench CPU % | server CPU % | fraction of limit | load avg | in flight | server CPU µs / op |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s | %s | %s | %.1f | %s | %s |\n",
			roundLabel(r), r.Mode, cell(r.OpsPerSec, "%.0f"), cell(r.AckP50Ms, "%.2f"), cell(r.AckP99Ms, "%.2f"),
			cell(r.AckBurstP99Ms, "%.2f"), cell(r.AckCalmP99Ms, "%.2f"), cell(r.AckP999Ms, "%.2f"), cell(r.AckMaxMs, "%.2f"),
			cell(r.ChangeOps, "%.0f"), cell(r.ChangeP99Ms, "%.2f"), cell(r.FsyncsPer1000, "%.1f"), r.Busy, r.Errors,
			cell(r.BenchCPU, "%.0f"), cell(r.ServerCPU, "%.0f"), cell(r.FractionOfLimit, "%.2f"), r.LoadAvg1, inFlightCell(r.InFlight),
			cell(r.ServerCPUPerOpUs, "%.1f"))
	}
}

// inFlightCell formats a request window, "n/a" when unknown.
func inFlightCell(n int) string {
	if n <= 0 {
		return "n/a"
	}
	return fmt.Sprint(n)
}

// mixedInFlight lists the distinct known request windows of the ack runs
// ("512, 2048") when there are two or more, else "".
func (c *Comparison) mixedInFlight() string {
	var depths []int
	for _, r := range c.Rows {
		if r.Mode == "ack" && r.InFlight > 0 && !slices.Contains(depths, r.InFlight) {
			depths = append(depths, r.InFlight)
		}
	}
	if len(depths) < 2 {
		return ""
	}
	slices.Sort(depths)
	parts := make([]string, len(depths))
	for i, d := range depths {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, ", ")
}

// exceedsLimit reports whether an ack run went faster than the lower limit.
func (c *Comparison) exceedsLimit() bool {
	for _, r := range append(slices.Clone(c.Rows), c.Medians...) {
		if r.Mode == "ack" && r.FractionOfLimit > 1 {
			return true
		}
	}
	return false
}
