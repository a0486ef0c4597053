package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printer writes the per-interval lines of a run. Sub-series (names with
// "_during_" or "_outside_") get a p99 column only.
type printer struct {
	out    io.Writer
	series []string
	quiet  bool
}

func newPrinter(out io.Writer, series []string, quiet bool) *printer {
	return &printer{out: out, series: series, quiet: quiet}
}

func isSubSeries(name string) bool {
	return strings.Contains(name, "_during_") || strings.Contains(name, "_outside_")
}

func ms(us int64) string { return fmt.Sprintf("%.2f", float64(us)/1000) }

func (p *printer) header() {
	if p.quiet {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%6s", "t(s)")
	for _, s := range p.series {
		if isSubSeries(s) {
			fmt.Fprintf(&b, " %14s", s+".p99")
			continue
		}
		fmt.Fprintf(&b, " | %9s %7s %7s %7s %7s", s+"/s", "p50", "p99", "p99.9", "max")
	}
	fmt.Fprintf(&b, " | %6s %5s | %8s %6s   (latency ms)\n", "busy", "err", "fsync/s", "batch")
	_, _ = io.WriteString(p.out, b.String())
}

func (p *printer) interval(iv *IntervalStats) {
	if p.quiet {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%6.1f", iv.T)
	var busy, errs int64
	for _, s := range p.series {
		x := iv.Series[s]
		if isSubSeries(s) {
			fmt.Fprintf(&b, " %14s", ms(x.P99))
			continue
		}
		busy += x.Busy
		errs += x.Errors
		fmt.Fprintf(&b, " | %9.0f %7s %7s %7s %7s", x.OpsPerSec, ms(x.P50), ms(x.P99), ms(x.P999), ms(x.Max))
	}
	fsync, batch := "-", "-"
	if iv.Server != nil {
		if iv.Seconds > 0 {
			fsync = fmt.Sprintf("%.0f", iv.Server.Fsyncs/iv.Seconds)
		}
		batch = fmt.Sprintf("%.1f", iv.Server.MeanBatch)
	}
	fmt.Fprintf(&b, " | %6d %5d | %8s %6s\n", busy, errs, fsync, batch)
	_, _ = io.WriteString(p.out, b.String())
}

// printSummary writes the end-of-run table of r.
func printSummary(out io.Writer, r *Report) {
	fmt.Fprintf(out, "\n== %s (%s) against %s: %.1f s", r.Label, r.Mode, r.Target, r.Seconds)
	if r.Exhausted {
		fmt.Fprint(out, ", ended early: prepared input exhausted")
	}
	fmt.Fprintln(out)
	if r.Prepare != nil {
		if r.Prepare.Receipts > 0 {
			fmt.Fprintf(out, "prepare: %d produced, %d receipt handles, %.1f s\n", r.Prepare.Produced, r.Prepare.Receipts, r.Prepare.Seconds)
		} else {
			fmt.Fprintf(out, "prepare: %d produced, %.1f s\n", r.Prepare.Produced, r.Prepare.Seconds)
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "series\tok\tops/s\tp50 ms\tp90 ms\tp99 ms\tp99.9 ms\tmax ms\tmean ms\tbusy\terrors\tcodes\t")
	for _, s := range r.Series {
		l := s.Latency
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.2f\t%d\t%d\t%s\t\n", s.Name, s.OK, s.OpsPerSec,
			ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max), l.Mean/1000, s.Busy, s.Errors, sortedCodes(s.Codes))
	}
	_ = tw.Flush()
	if r.Bursts > 0 && r.BurstMillis != nil {
		fmt.Fprintf(out, "CHANGE bursts: %d, time to last reply p50 %d ms, max %d ms\n", r.Bursts, r.BurstMillis.P50, r.BurstMillis.Max)
	}
	if s := r.Server; s != nil {
		fmt.Fprintf(out, "server: %.0f fsyncs, %.0f batches, %.0f mutations, batch mean %.1f p50≤%.0f p99≤%.0f, synced write mean %.2f ms (busy %.0f%%), rejects %.0f",
			s.Fsyncs, s.Batches, s.Mutations, s.MeanBatch, s.P50Batch, s.P99Batch, s.MeanWriteMs, 100*s.WriteBusy, s.Rejects)
		if s.FsyncsPer1000Acks > 0 {
			fmt.Fprintf(out, ", %.1f fsyncs per 1000 ACKs", s.FsyncsPer1000Acks)
		}
		fmt.Fprintln(out)
		printStages(out, s.Stages)
	}
	fmt.Fprintf(out, "cpu: bench %.0f%% of one core (%.0f%% of %d cores)", r.BenchCPU.Percent, r.BenchCPU.MachinePercent, r.Machine.CPUs)
	defer fmt.Fprintf(out, "load average at the end: %.2f\n", r.Machine.LoadAvg1)
	if c := r.ServerCPU; c != nil {
		fmt.Fprintf(out, ", server %.0f%% of one core (%s)", c.Percent, c.Source)
	}
	fmt.Fprintln(out)
	if r.Cost != nil {
		printCost(out, r.Cost)
	}
	if r.Disk != nil {
		printDisk(out, r)
	}
	if st := r.Storage; st != nil {
		printStorage(out, st)
	}
}
