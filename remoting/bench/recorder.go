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

func (w *window) add(o *window) {
	w.h.Merge(o.h)
	w.ok += o.ok
	w.busy += o.busy
	w.errs += o.errs
	w.empty += o.empty
	for c, n := range o.codes {
		w.codes[c] += n
	}
}

func (w *window) reset() {
	w.h.Reset()
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
	names  []string
	shards []*shard
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

// drainInto adds every shard's windows to dst (one per series) and resets
// them. Called by the sampler only.
func (r *recorder) drainInto(dst []*window) {
	for _, x := range r.shards {
		x.mu.Lock()
		for i, w := range x.w {
			dst[i].add(w)
			w.reset()
		}
		x.mu.Unlock()
	}
}
