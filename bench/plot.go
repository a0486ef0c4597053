package bench

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WritePlot draws latency over time (100 ms ticks, log-scale ms) to path;
// the extension (.svg, .png, .pdf) picks the format. One report: p50, p99
// and max of its main series, CHANGE p99 as points when present, and a mark along
// the bottom for every tick with a CHANGE burst outstanding. Several
// reports: the p99 of each one's main series, labelled by report, with
// the first report's burst marks. Errors:
// no points to draw, or the file cannot be written.
func WritePlot(path string, reports []*Report) error {
	p := plot.New()
	p.X.Label.Text = "time since start of run (s)"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ticks125{}
	p.Legend.Top = true
	p.Legend.Left = true
	lines := 0
	add := func(name string, xys plotter.XYs, i int) error {
		if len(xys) == 0 {
			return nil
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add(name, l)
		lines++
		return nil
	}
	if len(reports) == 1 {
		r := reports[0]
		main := mainSeries(r.Mode)
		p.Title.Text = fmt.Sprintf("%s: %s latency over time (%s)", r.Label, main, r.Target)
		for i, q := range []string{"p50", "p99", "max"} {
			if err := add(main+" "+q, pointSeries(r, main, q), i); err != nil {
				return err
			}
		}
		if xys := pointSeries(r, "change", "p99"); len(xys) > 0 {
			// CHANGE replies come in bursts: points, not a line across gaps.
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = plotutil.Color(3)
			sc.GlyphStyle.Shape = draw.CrossGlyph{}
			p.Add(sc)
			p.Legend.Add("change p99", sc)
		}
		if err := addBurstMarks(p, r); err != nil {
			return err
		}
	} else {
		p.Title.Text = "p99 latency over time"
		if mainSeries(reports[0].Mode) == "ack" {
			p.Title.Text = "ACK p99 latency over time"
		}
		for i, r := range reports {
			if err := add(r.Label+" "+mainSeries(r.Mode)+" p99", pointSeries(r, mainSeries(r.Mode), "p99"), i); err != nil {
				return err
			}
		}
		// Every run fires its bursts at the same offsets (one per
		// change period from its start): the first run's marks serve all.
		if err := addBurstMarks(p, reports[0]); err != nil {
			return err
		}
	}
	if lines == 0 {
		return errors.New("bench: nothing to plot (no latency points)")
	}
	return p.Save(22*vg.Centimeter, 12*vg.Centimeter, path)
}

// pointSeries returns (t, latency ms) of one quantile ("p50", "p99",
// "max") of series name, skipping ticks without replies.
func pointSeries(r *Report, name, q string) plotter.XYs {
	var xys plotter.XYs
	for _, pt := range r.Points {
		s, ok := pt.Series[name]
		if !ok || s.N == 0 {
			continue
		}
		v := s.P99
		switch q {
		case "p50":
			v = s.P50
		case "max":
			v = s.Max
		}
		xys = append(xys, plotter.XY{X: pt.T, Y: math.Max(float64(v)/1000, 0.001)})
	}
	return xys
}

// addBurstMarks puts a small grey mark at the bottom of the plot for every
// tick in which a CHANGE burst was outstanding.
func addBurstMarks(p *plot.Plot, r *Report) error {
	lo := math.Inf(1)
	for _, pt := range r.Points {
		for _, s := range pt.Series {
			if s.N > 0 && s.P50 > 0 {
				lo = math.Min(lo, float64(s.P50)/1000)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return nil
	}
	var xys plotter.XYs
	for _, pt := range r.Points {
		if pt.Burst {
			xys = append(xys, plotter.XY{X: pt.T, Y: lo / 2})
		}
	}
	if len(xys) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	s.GlyphStyle.Shape = draw.BoxGlyph{}
	s.GlyphStyle.Radius = vg.Points(1.5)
	s.GlyphStyle.Color = color.Gray{Y: 150}
	p.Add(s)
	p.Legend.Add("CHANGE burst outstanding", s)
	return nil
}

// ticks125 marks 1, 2 and 5 of every decade of a log axis, labelled
// (plot.LogTicks labels powers of ten only, too sparse for latency).
type ticks125 struct{}

// Ticks returns the marks between lo and hi (both > 0).
func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	return out
}
