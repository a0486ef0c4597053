package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// DiskStats is the disk's own latency measured during a run: a 4 KiB
// append plus fdatasync on a plain file in Options.FsyncProbeDir every
// Options.FsyncProbeEvery, the same probe as raw-storage's, so the ACK
// latency of the run can be read against what one synced write costs on
// this disk at that moment.
type DiskStats struct {
	Dir         string  `json:"dir"`
	FdatasyncUs Latency `json:"fdatasync_us"`
	// AckP50Ratio is ACK p50 over fdatasync p50, and AckBurstP99Ratio ACK
	// p99 during CHANGE bursts over fdatasync p99 (ack mode; 0 elsewhere).
	AckP50Ratio      float64 `json:"ack_p50_ratio,omitempty"`
	AckBurstP99Ratio float64 `json:"ack_burst_p99_ratio,omitempty"`
}

// fsyncProbe samples write+fdatasync latency on a side goroutine until
// stopped.
type fsyncProbe struct {
	dir string
	w   *window
	err error
}

// probe runs one 4 KiB write+fdatasync on f and records it in w.
func probe(f *os.File, buf []byte, w *window) error {
	t := time.Now()
	if _, err := f.Write(buf); err != nil {
		return fmt.Errorf("bench: fsync probe write: %w", err)
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("bench: fdatasync: %w", err)
	}
	w.record(time.Since(t).Microseconds())
	return nil
}

// loop is a phase side loop: a probe every period until stop closes. The
// probe file lives in a fresh temporary directory under dir, removed at
// the end; errors end the probing and are kept in p.err.
func (p *fsyncProbe) loop(period time.Duration) func(stop <-chan struct{}) {
	return func(stop <-chan struct{}) {
		dir, err := os.MkdirTemp(p.dir, "popshim-fsyncprobe-")
		if err != nil {
			p.err = fmt.Errorf("bench: fsync probe dir: %w", err)
			return
		}
		defer func() { p.err = errors.Join(p.err, os.RemoveAll(dir)) }()
		f, err := os.OpenFile(dir+"/probe", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			p.err = fmt.Errorf("bench: fsync probe: %w", err)
			return
		}
		defer func() { p.err = errors.Join(p.err, f.Close()) }()
		buf := make([]byte, 4096)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := probe(f, buf, p.w); err != nil {
					p.err = err
					return
				}
			}
		}
	}
}

// stats returns the probe's summary with the ACK ratios of r filled in.
func (p *fsyncProbe) stats(r *Report) *DiskStats {
	if p.w.h.TotalCount() == 0 {
		return nil
	}
	d := &DiskStats{Dir: p.dir, FdatasyncUs: latencyOf(p.w)}
	ack, ok1 := r.SeriesByName("ack")
	burst, ok2 := r.SeriesByName("ack_during_burst")
	if r.Mode == "ack" && ok1 && ok2 {
		if d.FdatasyncUs.P50 > 0 {
			d.AckP50Ratio = float64(ack.Latency.P50) / float64(d.FdatasyncUs.P50)
		}
		if d.FdatasyncUs.P99 > 0 && burst.Latency.Count > 0 {
			d.AckBurstP99Ratio = float64(burst.Latency.P99) / float64(d.FdatasyncUs.P99)
		}
	}
	return d
}

// printDisk writes the disk line of a report: the probe's p50 and p99 and,
// in ack mode, ACK p50 and p99 during bursts beside them with the ratios
// (ratioCell: two significant digits below 1, so 0.048× is not 0.0×).
func printDisk(out io.Writer, r *Report) {
	d := r.Disk
	fmt.Fprintf(out, "disk during the run: 4 KiB write+fdatasync p50 %s ms p99 %s ms (%d probes)",
		ms(d.FdatasyncUs.P50), ms(d.FdatasyncUs.P99), d.FdatasyncUs.Count)
	if r.Mode == "ack" {
		ack, _ := r.SeriesByName("ack")
		burst, _ := r.SeriesByName("ack_during_burst")
		fmt.Fprintf(out, "; ACK p50 %s ms = %s its p50, ACK p99 during bursts %s ms = %s its p99",
			ms(ack.Latency.P50), ratioCell(d.AckP50Ratio), ms(burst.Latency.P99), ratioCell(d.AckBurstP99Ratio))
	}
	fmt.Fprintln(out)
}
