package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// numberRounds sets Row.Round on the ack rows of every label that occurs
// more than once (1, 2, … in input order) and returns the median row of
// each such label, in order of first occurrence.
func numberRounds(rows []Row) []Row {
	count := map[string]int{}
	for _, r := range rows {
		if r.Mode == "ack" {
			count[r.Label]++
		}
	}
	seen := map[string]int{}
	var order []string
	for i := range rows {
		r := &rows[i]
		if r.Mode != "ack" || count[r.Label] < 2 {
			continue
		}
		if seen[r.Label] == 0 {
			order = append(order, r.Label)
		}
		seen[r.Label]++
		r.Round = seen[r.Label]
	}
	medians := make([]Row, 0, len(order))
	for _, label := range order {
		medians = append(medians, medianRow(roundsOf(rows, label)))
	}
	return medians
}

// roundsOf returns the rows of label's rounds, in round order.
func roundsOf(rows []Row, label string) []Row {
	var out []Row
	for _, r := range rows {
		if r.Label == label && r.Round > 0 {
			out = append(out, r)
		}
	}
	return out
}

// medianRow is the per-field median of rounds (NaN values ignored; a field
// NaN in every round stays NaN). Counts (SYSTEM_BUSY, errors) are summed,
// since any refusal in any round matters. Round is 0.
func medianRow(rounds []Row) Row {
	pick := func(f func(Row) float64) float64 {
		var v []float64
		for _, r := range rounds {
			if x := f(r); !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		return median(v)
	}
	m := Row{Label: rounds[0].Label, Mode: rounds[0].Mode}
	m.OpsPerSec = pick(func(r Row) float64 { return r.OpsPerSec })
	m.AckP50Ms = pick(func(r Row) float64 { return r.AckP50Ms })
	m.AckP99Ms = pick(func(r Row) float64 { return r.AckP99Ms })
	m.AckBurstP99Ms = pick(func(r Row) float64 { return r.AckBurstP99Ms })
	m.AckCalmP99Ms = pick(func(r Row) float64 { return r.AckCalmP99Ms })
	m.AckP999Ms = pick(func(r Row) float64 { return r.AckP999Ms })
	m.AckMaxMs = pick(func(r Row) float64 { return r.AckMaxMs })
	m.ChangeOps = pick(func(r Row) float64 { return r.ChangeOps })
	m.ChangeP99Ms = pick(func(r Row) float64 { return r.ChangeP99Ms })
	m.FsyncsPer1000 = pick(func(r Row) float64 { return r.FsyncsPer1000 })
	m.BenchCPU = pick(func(r Row) float64 { return r.BenchCPU })
	m.ServerCPU = pick(func(r Row) float64 { return r.ServerCPU })
	m.FractionOfLimit = pick(func(r Row) float64 { return r.FractionOfLimit })
	m.LoadAvg1 = pick(func(r Row) float64 { return r.LoadAvg1 })
	for _, r := range rounds {
		m.Busy += r.Busy
		m.Errors += r.Errors
	}
	return m
}

// median of v (the mean of the middle two for an even count); NaN if empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return nan()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// summaries returns one row per ack label in order of first occurrence:
// its median row when it ran in rounds, else its only (last) row.
func (c *Comparison) summaries() []Row {
	var out []Row
	idx := map[string]int{}
	for _, r := range c.Rows {
		if r.Mode != "ack" {
			continue
		}
		i, ok := idx[r.Label]
		if !ok {
			idx[r.Label] = len(out)
			out = append(out, r)
			continue
		}
		out[i] = r
	}
	for _, m := range c.Medians {
		out[idx[m.Label]] = m
	}
	return out
}

// perRound formats f(s_k, o_k) for each round k that both labels ran, e.g.
// "7.1×, 7.4×, 6.9×"; "" when they did not both run in rounds.
func (c *Comparison) perRound(s, o string, f func(s, o Row) float64) string {
	sr, or := roundsOf(c.Rows, s), roundsOf(c.Rows, o)
	n := min(len(sr), len(or))
	if n == 0 {
		return ""
	}
	parts := make([]string, n)
	for k := range n {
		parts[k] = cell(f(sr[k], or[k]), "%.1f×")
	}
	return strings.Join(parts, ", ")
}

// hasRounds reports whether any ack label ran in rounds.
func (c *Comparison) hasRounds() bool { return len(c.Medians) > 0 }

// roundLabel is the label shown for r in the per-run table.
func roundLabel(r Row) string {
	if r.Round > 0 {
		return fmt.Sprintf("%s #%d", r.Label, r.Round)
	}
	return r.Label
}
