package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// numberRounds sets Row.Round on the rows of family (familyOf) of every label that ran more
// than once and returns the median row of each such label, in order of
// first occurrence. A label whose runs all carry a round (bench --round,
// as make bench passes) keeps those numbers, so a missing run leaves a
// gap instead of shifting the pairs; otherwise its runs are numbered 1, 2,
// … in input order. A label that ran once keeps its round as reported.
func numberRounds(rows []Row, family string) []Row {
	count, explicit := map[string]int{}, map[string]int{}
	for _, r := range rows {
		if familyOf(r.Mode) == family {
			count[r.Label]++
			if r.Round > 0 {
				explicit[r.Label]++
			}
		}
	}
	seen := map[string]int{}
	var order []string
	for i := range rows {
		r := &rows[i]
		if familyOf(r.Mode) != family || count[r.Label] < 2 {
			continue
		}
		if seen[r.Label] == 0 {
			order = append(order, r.Label)
		}
		seen[r.Label]++
		if explicit[r.Label] < count[r.Label] {
			r.Round = seen[r.Label]
		}
	}
	medians := make([]Row, 0, len(order))
	for _, label := range order {
		medians = append(medians, medianRow(roundsOf(rows, label)))
	}
	return medians
}

// roundsOf returns the rows of label that carry a round, in input order.
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
// since any refusal in any round matters. Round is 0; InFlight is the
// first round's.
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
	m := Row{Label: rounds[0].Label, Mode: rounds[0].Mode, InFlight: rounds[0].InFlight}
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
	m.ServerCPUPerOpUs = pick(func(r Row) float64 { return r.ServerCPUPerOpUs })
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

// summaries returns one row per label of the compared family in order of first occurrence:
// its median row when it ran in rounds, else its only (last) row.
func (c *Comparison) summaries() []Row {
	var out []Row
	idx := map[string]int{}
	for _, r := range c.Rows {
		if familyOf(r.Mode) != c.Family {
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

// perRound formats f(s_k, o_k) for each round k that either label ran, in
// round order, e.g. "7.1×, 7.4×, 6.9×", with "–" where one of the two
// has no run of that round (the last run counts if a round repeats);
// "n/a" when the labels do not both have rounds.
func (c *Comparison) perRound(s, o string, f func(s, o Row) float64) string {
	byRound := func(label string) map[int]Row {
		m := map[int]Row{}
		for _, r := range roundsOf(c.Rows, label) {
			m[r.Round] = r
		}
		return m
	}
	sr, or := byRound(s), byRound(o)
	if len(sr) == 0 || len(or) == 0 {
		return "n/a"
	}
	var ks []int
	for k := range sr {
		ks = append(ks, k)
	}
	for k := range or {
		if _, ok := sr[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		a, okA := sr[k]
		b, okB := or[k]
		if !okA || !okB {
			parts[i] = "–"
			continue
		}
		parts[i] = ratioCell(f(a, b))
	}
	return strings.Join(parts, ", ")
}

// repeatedRounds lists "label round k" for every ack round that occurs
// more than once (e.g. the same report passed twice), for a note.
func (c *Comparison) repeatedRounds() []string {
	type key struct {
		label string
		round int
	}
	n := map[key]int{}
	var out []string
	for _, r := range c.Rows {
		if familyOf(r.Mode) != c.Family || r.Round == 0 {
			continue
		}
		k := key{r.Label, r.Round}
		if n[k]++; n[k] == 2 {
			out = append(out, fmt.Sprintf("%s round %d", r.Label, r.Round))
		}
	}
	return out
}

// ratioCell formats a ratio: one decimal, two significant digits below 1
// (so 0.04× is not printed as 0.0×); "n/a" for NaN.
func ratioCell(v float64) string {
	if !math.IsNaN(v) && v < 0.95 {
		return cell(v, "%.2g×")
	}
	return cell(v, "%.1f×")
}

// hasRounds reports whether any label of the compared family ran in rounds.
func (c *Comparison) hasRounds() bool { return len(c.Medians) > 0 }

// roundLabel is the label shown for r in the per-run table: with " #k"
// for round k and " (ended early)" when the prepared input ran out before
// the duration (such a run is shorter than its peers; compare with care).
func roundLabel(r Row) string {
	l := r.Label
	if r.Round > 0 {
		l = fmt.Sprintf("%s #%d", l, r.Round)
	}
	if r.Exhausted {
		l += " (ended early)"
	}
	return l
}

// writeOpsRatios writes the ratio table of a family other than ack: the
// first summary against each other one. Throughput ratio = ours ÷
// theirs; p99 (of the main series) and server CPU per operation = theirs
// ÷ ours, so above 1 is better for the first label in every column.
func (c *Comparison) writeOpsRatios(b *strings.Builder, sums []Row) {
	s := sums[0]
	rounds := c.hasRounds()
	b.WriteString("\n| " + s.Label + " vs | ops/s ratio | p99: theirs / ours | server CPU per op: theirs / ours |")
	sep := "|---|--:|--:|--:|"
	if rounds {
		b.WriteString(" ops/s ratio per round | p99 ratio per round | CPU per op ratio per round |")
		sep += "---|---|---|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, o := range sums[1:] {
		fmt.Fprintf(b, "| %s | %s | %s | %s |", o.Label, ratioCell(ratio(s.OpsPerSec, o.OpsPerSec)),
			ratioCell(ratio(o.AckP99Ms, s.AckP99Ms)), ratioCell(ratio(o.ServerCPUPerOpUs, s.ServerCPUPerOpUs)))
		if rounds {
			fmt.Fprintf(b, " %s | %s | %s |",
				c.perRound(s.Label, o.Label, func(s, o Row) float64 { return ratio(s.OpsPerSec, o.OpsPerSec) }),
				c.perRound(s.Label, o.Label, func(s, o Row) float64 { return ratio(o.AckP99Ms, s.AckP99Ms) }),
				c.perRound(s.Label, o.Label, func(s, o Row) float64 { return ratio(o.ServerCPUPerOpUs, s.ServerCPUPerOpUs) }))
		}
		b.WriteString("\n")
	}
}
