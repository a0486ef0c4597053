package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CurvePoint is one ack run of a latency-versus-load sweep (make bench's
// curve phase): the offered ACK rate (--rate; 0 = open loop at max), what
// was achieved, and the latencies in ms.
type CurvePoint struct {
	Label string
	// Offered is --rate, ACK/s (0: open loop); PercentOfMax is Offered
	// over the label's max (its open-loop run's ACK/s, else its largest
	// Achieved), 100 for the open-loop run.
	Offered, PercentOfMax float64
	Achieved              float64 // ACK/s
	P50Ms, P99Ms          float64 // all ACKs
	BurstP99Ms            float64 // ACKs sent while a CHANGE burst was outstanding
	ChangeP99Ms           float64
	// ServerCPUPerAckUs is the server's CPU time per ACK, µs (NaN when not
	// measured); CHANGE work is included.
	ServerCPUPerAckUs float64
	LoadAvg1          float64
}

// CurvePoints extracts the sweep from ack reports, sorted by label, then
// offered rate. Reports of other modes are skipped.
func CurvePoints(reports []*Report) []CurvePoint {
	var pts []CurvePoint
	maxOf := map[string]float64{}
	for _, r := range reports {
		if r.Mode != "ack" {
			continue
		}
		p := CurvePoint{Label: r.Label, ServerCPUPerAckUs: math.NaN(), LoadAvg1: r.Machine.LoadAvg1}
		if v, ok := r.Config["rate"].(float64); ok {
			p.Offered = v
		} else if v, ok := r.Config["rate"].(int); ok {
			p.Offered = float64(v)
		}
		ms := func(us int64) float64 { return float64(us) / 1000 }
		if s, ok := r.SeriesByName("ack"); ok {
			p.Achieved, p.P50Ms, p.P99Ms = s.OpsPerSec, ms(s.Latency.P50), ms(s.Latency.P99)
			if r.ServerCPU != nil && s.OpsPerSec > 0 {
				p.ServerCPUPerAckUs = 1e6 * r.ServerCPU.Percent / 100 / s.OpsPerSec
			}
		}
		if s, ok := r.SeriesByName("ack_during_burst"); ok {
			p.BurstP99Ms = ms(s.Latency.P99)
		}
		if s, ok := r.SeriesByName("change"); ok {
			p.ChangeP99Ms = ms(s.Latency.P99)
		}
		if p.Offered == 0 {
			maxOf[p.Label] = math.Max(maxOf[p.Label], p.Achieved)
		}
		pts = append(pts, p)
	}
	largest := map[string]float64{}
	for _, p := range pts {
		largest[p.Label] = math.Max(largest[p.Label], p.Achieved)
	}
	for l, v := range largest { // no open-loop run: the largest achieved rate
		if _, ok := maxOf[l]; !ok {
			maxOf[l] = v
		}
	}
	for i := range pts {
		switch m := maxOf[pts[i].Label]; {
		case pts[i].Offered == 0:
			pts[i].PercentOfMax = 100
		case m > 0:
			pts[i].PercentOfMax = 100 * pts[i].Offered / m
		}
	}
	sort.SliceStable(pts, func(i, j int) bool {
		if pts[i].Label != pts[j].Label {
			return pts[i].Label < pts[j].Label
		}
		return pts[i].PercentOfMax < pts[j].PercentOfMax
	})
	return pts
}

// WriteCurveTable writes the sweep as a Markdown table.
func WriteCurveTable(w io.Writer, pts []CurvePoint) {
	fmt.Fprintln(w, "| run | offered ACK/s | % of max | achieved ACK/s | ACK p50 ms | ACK p99 ms | ACK p99 during bursts ms | CHANGE p99 ms | server CPU µs/ACK | load avg |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range pts {
		off := fmt.Sprintf("%.0f", p.Offered)
		if p.Offered == 0 {
			off = "max (open loop)"
		}
		cpu := "–"
		if !math.IsNaN(p.ServerCPUPerAckUs) {
			cpu = fmt.Sprintf("%.1f", p.ServerCPUPerAckUs)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.0f | %s | %.1f |\n", p.Label, off, p.PercentOfMax,
			p.Achieved, p.P50Ms, p.P99Ms, p.BurstP99Ms, p.ChangeP99Ms, cpu, p.LoadAvg1)
	}
}

// WriteCurve plots the sweep to path (.svg, .png, .pdf): ACK p50 (solid)
// and ACK p99 during CHANGE bursts (dashed, same colour) of each label
// against the offered load in percent of that label's max, log-scale ms.
// Errors: no ack reports, or the file cannot be written.
func WriteCurve(path string, pts []CurvePoint) error {
	byLabel := map[string]plotter.XYs{}
	burst := map[string]plotter.XYs{}
	var labels []string
	for _, p := range pts {
		if _, ok := byLabel[p.Label]; !ok {
			labels = append(labels, p.Label)
		}
		byLabel[p.Label] = append(byLabel[p.Label], plotter.XY{X: p.PercentOfMax, Y: math.Max(p.P50Ms, 0.001)})
		if p.BurstP99Ms > 0 {
			burst[p.Label] = append(burst[p.Label], plotter.XY{X: p.PercentOfMax, Y: p.BurstP99Ms})
		}
	}
	if len(labels) == 0 {
		return errors.New("bench: nothing to plot (no ack reports)")
	}
	pl := plot.New()
	pl.Title.Text = "ACK latency against offered load (CHANGE bursts of 2,000 every second)"
	pl.X.Label.Text = "offered ACK load (% of that system's max)"
	pl.Y.Label.Text = "latency (ms, log scale)"
	pl.Y.Scale = plot.LogScale{}
	pl.Y.Tick.Marker = ticks125{}
	pl.Legend.Top = true
	pl.Legend.Left = true
	for i, l := range labels {
		for _, s := range []struct {
			name   string
			xys    plotter.XYs
			dashed bool
		}{{l + " p50", byLabel[l], false}, {l + " p99 during bursts", burst[l], true}} {
			if len(s.xys) == 0 {
				continue
			}
			line, sc, err := plotter.NewLinePoints(s.xys)
			if err != nil {
				return err
			}
			line.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
			sc.Shape = draw.CircleGlyph{}
			if s.dashed {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				sc.Shape = draw.TriangleGlyph{}
			}
			pl.Add(line, sc)
			pl.Legend.Add(s.name, line, sc)
		}
	}
	return pl.Save(22*vg.Centimeter, 13*vg.Centimeter, path)
}
