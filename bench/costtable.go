package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// CostSeries is the runs of a cost series (testdata/bench/cost.sh) grouped
// by workload (Report.Workload) and label, each group in round order.
type CostSeries struct {
	Workloads []string // first-occurrence order
	Labels    []string // first-occurrence order
	// Anchor is the label every other label is divided by (the RocketMQ
	// run), "" when absent.
	Anchor string
	Runs   map[string]map[string][]*Report // workload → label → runs
}

// NewCostSeries groups reports that carry a workload and a cost (others are
// skipped). anchor names the reference label; "" picks the first label
// that starts with "rocketmq".
func NewCostSeries(rs []*Report, anchor string) *CostSeries {
	c := &CostSeries{Runs: map[string]map[string][]*Report{}, Anchor: anchor}
	for _, r := range rs {
		if r.Workload == "" || r.Cost == nil {
			continue
		}
		if _, ok := c.Runs[r.Workload]; !ok {
			c.Workloads = append(c.Workloads, r.Workload)
			c.Runs[r.Workload] = map[string][]*Report{}
		}
		if !slices.Contains(c.Labels, r.Label) {
			c.Labels = append(c.Labels, r.Label)
		}
		c.Runs[r.Workload][r.Label] = append(c.Runs[r.Workload][r.Label], r)
	}
	if c.Anchor == "" {
		for _, l := range c.Labels {
			if strings.HasPrefix(l, "rocketmq") {
				c.Anchor = l
				break
			}
		}
	}
	for _, byLabel := range c.Runs {
		for _, runs := range byLabel {
			slices.SortStableFunc(runs, func(a, b *Report) int { return a.Round - b.Round })
		}
	}
	return c
}

// spread is the median and range of some values; n = 0 when there are none.
type spread struct {
	med, lo, hi float64
	n           int
}

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return spread{med: median(s), lo: s[0], hi: s[len(s)-1], n: len(s)}
}

func (s spread) format(prec int) string {
	if s.n == 0 {
		return "n/a"
	}
	if s.n == 1 {
		return fmt.Sprintf("%.*f", prec, s.med)
	}
	return fmt.Sprintf("%.*f (%.*f–%.*f)", prec, s.med, prec, s.lo, prec, s.hi)
}

// values returns f of every run of (workload, label) where ok.
func (c *CostSeries) values(w, label string, f func(*Report) (float64, bool)) []float64 {
	var out []float64
	for _, r := range c.Runs[w][label] {
		if v, ok := f(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// ratios returns the per-round ratios f(label)/f(anchor) of workload w,
// pairing runs by Round.
func (c *CostSeries) ratios(w, label string, f func(*Report) (float64, bool)) []float64 {
	var out []float64
	for _, r := range c.Runs[w][label] {
		for _, a := range c.Runs[w][c.Anchor] {
			if a.Round != r.Round {
				continue
			}
			x, ok1 := f(r)
			y, ok2 := f(a)
			if ok1 && ok2 && y != 0 {
				out = append(out, x/y)
			}
		}
	}
	return out
}

// cpuPerMsg is the server's CPU per message: all of its CPU time in the
// window, idle draw included (CostStats.NetMicrosPerOp leaves that out,
// but its idle sample can catch a broker still finishing the previous
// run's work, so the table keeps the plain figure).
func cpuPerMsg(r *Report) (float64, bool) { return r.Cost.CPUMicrosPerOp, r.Cost.Ops > 0 }

func bytesPerPayload(r *Report) (float64, bool) {
	return r.Cost.BytesPerPayloadByte, r.Cost.PayloadBytes > 0
}

func mainRate(r *Report) (float64, bool) {
	s, ok := r.SeriesByName(mainSeries(r.Mode))
	return s.OpsPerSec, ok
}

func minuteRatio(r *Report) (float64, bool) {
	first, last, ok := r.MinuteRates(mainSeries(r.Mode))
	return last / first, ok && first > 0
}

// ratioCells are the "label ÷ anchor" cells: median and per-round values.
func (c *CostSeries) ratioCells(w string, f func(*Report) (float64, bool)) []string {
	var cells []string
	for _, l := range c.Labels {
		if l == c.Anchor || c.Anchor == "" {
			continue
		}
		rs := c.ratios(w, l, f)
		if len(rs) == 0 {
			cells = append(cells, "n/a")
			continue
		}
		per := make([]string, len(rs))
		for i, x := range rs {
			per[i] = fmt.Sprintf("%.2f", x)
		}
		cells = append(cells, fmt.Sprintf("**%.2f** (%s)", spreadOf(rs).med, strings.Join(per, ", ")))
	}
	return cells
}

// WriteMarkdown prints the cost tables: server CPU µs per message per
// workload and label (median, range over rounds, ratio to the anchor per
// round), throughput, disk bytes per payload byte with the first and last
// minute's rate for the workloads that carry a payload, and ACK latency
// against the disk's fdatasync for ack workloads.
func (c *CostSeries) WriteMarkdown(out io.Writer) {
	var ratioHead []string
	for _, l := range c.Labels {
		if l != c.Anchor && c.Anchor != "" {
			ratioHead = append(ratioHead, l+" ÷ "+c.Anchor+" (median; per round)")
		}
	}
	head := func(first string, cols []string) {
		fmt.Fprintf(out, "| %s | %s |\n|---|%s\n", first, strings.Join(cols, " | "), strings.Repeat("--:|", len(cols)))
	}
	fmt.Fprintln(out, "Server CPU per message, µs (/proc/<pid>/stat utime+stime from the first request until idle; median (min–max) over rounds); messages/s in brackets:")
	fmt.Fprintln(out)
	head("workload", append(slices.Clone(c.Labels), ratioHead...))
	for _, w := range c.Workloads {
		cells := []string{w}
		for _, l := range c.Labels {
			rate := "n/a"
			if r := spreadOf(c.values(w, l, mainRate)); r.n > 0 {
				rate = fmt.Sprintf("%.0f", r.med)
			}
			cells = append(cells, fmt.Sprintf("%s [%s]", spreadOf(c.values(w, l, cpuPerMsg)).format(1), rate))
		}
		cells = append(cells, c.ratioCells(w, cpuPerMsg)...)
		fmt.Fprintf(out, "| %s |\n", strings.Join(cells, " | "))
	}
	c.writeDisk(out, ratioHead)
	c.writeLatency(out)
}

func (c *CostSeries) writeDisk(out io.Writer, ratioHead []string) {
	var ws []string
	for _, w := range c.Workloads {
		for _, l := range c.Labels {
			if len(c.values(w, l, bytesPerPayload)) > 0 {
				ws = append(ws, w)
				break
			}
		}
	}
	if len(ws) == 0 {
		return
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Disk bytes written (/proc/<pid>/io write_bytes, until idle after the run) per payload byte; last minute's ÷ first minute's rate:")
	fmt.Fprintln(out)
	var cols []string
	for _, l := range c.Labels {
		cols = append(cols, l+" bytes/byte", l+" last ÷ first minute")
	}
	cols = append(cols, ratioHead...)
	fmt.Fprintf(out, "| workload | %s |\n|---|%s\n", strings.Join(cols, " | "), strings.Repeat("--:|", len(cols)))
	for _, w := range ws {
		cells := []string{w}
		for _, l := range c.Labels {
			cells = append(cells, spreadOf(c.values(w, l, bytesPerPayload)).format(2), spreadOf(c.values(w, l, minuteRatio)).format(2))
		}
		cells = append(cells, c.ratioCells(w, bytesPerPayload)...)
		fmt.Fprintf(out, "| %s |\n", strings.Join(cells, " | "))
	}
}

func (c *CostSeries) writeLatency(out io.Writer) {
	first := true
	for _, w := range c.Workloads {
		for _, l := range c.Labels {
			for _, r := range c.Runs[w][l] {
				if r.Mode != "ack" || r.Disk == nil {
					continue
				}
				if first {
					fmt.Fprintln(out)
					fmt.Fprintln(out, "ACK latency against the disk's 4 KiB write+fdatasync probed in the same run, ms:")
					fmt.Fprintln(out)
					fmt.Fprintln(out, "| workload | label | round | ACK/s | ACK p50 | fdatasync p50 | ratio | ACK p99 during bursts | fdatasync p99 | ratio |")
					fmt.Fprintln(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
					first = false
				}
				ack, _ := r.SeriesByName("ack")
				burst, _ := r.SeriesByName("ack_during_burst")
				d := r.Disk
				fmt.Fprintf(out, "| %s | %s | %d | %.0f | %s | %s | %s | %s | %s | %s |\n", w, l, r.Round, ack.OpsPerSec,
					ms(ack.Latency.P50), ms(d.FdatasyncUs.P50), ratioCell(d.AckP50Ratio), ms(burst.Latency.P99), ms(d.FdatasyncUs.P99), ratioCell(d.AckBurstP99Ratio))
			}
		}
	}
}
