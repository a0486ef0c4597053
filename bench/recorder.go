package bench

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/popshim/popshim/codec"
)

// Histogram range: 1 µs … 60 s, 3 significant digits (0.1 % resolution).
const (
	histMinMicros = 1
	histMaxMicros = 60_000_000
	histSigFigs   = 3
)

// codeTransport is the pseudo response code under which transport errors
// (connection closed, write failed) are counted.
const codeTransport int32 = -1

// window is one series over some span of time: a latency histogram of the
// SUCCESS replies (µs) and counts of every outcome. Not safe for concurrent
// use: the shard or the sampler that owns it serialises access.
type window struct {
	h     *hdr.Histogram
	ok    int64
	busy  int64 // SYSTEM_BUSY (2)
	errs  int64 // any other non-success code, and transport errors
	empty int64 // expected "nothing found" answers (POP), neither ok nor error
	codes map[int32]int64
}

func newWindow() *window {
	return &window{h: hdr.New(histMinMicros, histMaxMicros, histSigFigs), codes: map[int32]int64{}}
}

// record adds one SUCCESS latency in µs, clamped to the histogram range.
func (w *window) record(micros int64) {
	w.ok++
	if micros < histMinMicros {
		micros = histMinMicros
	} else if micros > histMaxMicros {
		micros = histMaxMicros
	}
	_ = w.h.RecordValue(micros) // cannot fail: clamped into range
}

// fail counts one non-success reply (SYSTEM_BUSY separately) or, with
// codeTransport, one transport error.
func (w *window) fail(code int32) {
	if code == codec.SystemBusy {
		w.busy++
	} else {
		w.errs++
	}
	w.codes[code]++
}

// add merges o into w. An empty o costs nothing.
func (w *window) add(o *window) {
	if o.ok+o.busy+o.errs+o.empty == 0 {
		return
	}
	w.h.Merge(o.h)
	w.ok += o.ok
	w.busy += o.busy
	w.errs += o.errs
	w.empty += o.empty
	for c, n := range o.codes {
		w.codes[c] += n
	}
}

// reset empties w. The histogram's counts (about 140 KiB) are cleared only
// when something was recorded.
func (w *window) reset() {
	if w.h.TotalCount() > 0 {
		w.h.Reset()
	}
	w.ok, w.busy, w.errs, w.empty = 0, 0, 0, 0
	clear(w.codes)
}

// shard holds one window per series for a subset of the connections, so
// completions on different connections' reader goroutines rarely contend.
type shard struct {
	mu sync.Mutex
	w  []*window // REQUIRES: mu held
}

// recorder collects outcomes of the named series from any goroutine; the
// sampler drains it periodically.
type recorder struct {
	names   []string
	shards  []*shard
	derived []derivedSeries // set before the first outcome, then read-only
}

// derivedSeries is a series made of others: see recorder.derive.
type derivedSeries struct {
	series int
	parts  []int
}

func newRecorder(names []string, nShards int) *recorder {
	r := &recorder{names: names}
	for range nShards {
		s := &shard{}
		for range names {
			s.w = append(s.w, newWindow())
		}
		r.shards = append(r.shards, s)
	}
	return r
}

// derive makes series d the union of series parts, which must not share
// outcomes (e.g. "ack" of "ack_during_burst" and "ack_outside_burst").
// Outcomes are recorded in the parts only, and drainTo fills d by merging
// the drained parts: one histogram record per outcome and one merge per
// part per drain, instead of two records and a merge of d per shard. Call
// before any outcome is recorded.
func (r *recorder) derive(d int, parts ...int) {
	r.derived = append(r.derived, derivedSeries{series: d, parts: parts})
}

// newWindows returns one empty window per series.
func (r *recorder) newWindows() []*window {
	out := make([]*window, len(r.names))
	for i := range out {
		out[i] = newWindow()
	}
	return out
}

// ok records a SUCCESS reply of series s on shard sh (any int: it is
// reduced modulo the shard count). Any goroutine.
func (r *recorder) ok(sh, s int, micros int64) {
	x := r.shards[sh%len(r.shards)]
	x.mu.Lock()
	x.w[s].record(micros)
	x.mu.Unlock()
}

// fail records a non-success reply (or codeTransport). Any goroutine.
func (r *recorder) fail(sh, s int, code int32) {
	x := r.shards[sh%len(r.shards)]
	x.mu.Lock()
	x.w[s].fail(code)
	x.mu.Unlock()
}

// empty records an expected empty answer. Any goroutine.
func (r *recorder) empty(sh, s int) {
	x := r.shards[sh%len(r.shards)]
	x.mu.Lock()
	x.w[s].empty++
	x.mu.Unlock()
}

// drainTo sets dst (one window per series) to the outcomes recorded since
// the last drain, derived series included, and resets the shards. Called
// by the sampler only.
func (r *recorder) drainTo(dst []*window) {
	for _, w := range dst {
		w.reset()
	}
	for _, x := range r.shards {
		x.mu.Lock()
		for i, w := range x.w {
			dst[i].add(w)
			w.reset()
		}
		x.mu.Unlock()
	}
	for _, d := range r.derived {
		for _, p := range d.parts {
			dst[d.series].add(dst[p])
		}
	}
}
