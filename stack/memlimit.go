package stack

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryLimitEvery is how often the default soft memory limit follows the
// live heap, and memoryLimitWindow how many of those samples it takes the
// smallest of.
const (
	memoryLimitEvery  = 500 * time.Millisecond
	memoryLimitWindow = 20
)

// liveHeapMetric is the runtime's live heap after the last GC, bytes, and
// gcCyclesMetric the number of GC cycles completed.
const (
	liveHeapMetric = "/gc/heap/live:bytes"
	gcCyclesMetric = "/gc/cycles/total:gc-cycles"
)

// memoryLimiter keeps the Go runtime's soft memory limit, when
// --memory-limit is left at 0, at
//
//	min(ceiling, max(base, min over the last 10 s of (live − held) × growth))
//
// base is conf.Config.EffectiveMemoryLimit (--queue-max-bytes + 64 MiB):
// room for the large frames the listeners hold (each at most
// --read-max-bytes, half of --queue-max-bytes by default) and for the
// garbage they leave. live is the heap the last GC found live, held the
// bytes of those frames now, with what gnet had already read from paused
// connections (remoting.Server.HeldReadBytes,
// grpcserver.Server.HeldSendBytes) and the bytes queued in the writer
// (batch.Writer.QueuedBytes), and growth 1 + --gc-percent/100. So a
// flood of 1 MiB SENDs cannot grow the heap to --gc-percent times the
// frames it holds, while a broker whose own state is large (a million
// checkpoints in flight, long polls) keeps the heap goal --gc-percent
// gives it instead of collecting without end under a fixed limit. The
// minimum over a window drops what a flood keeps live only in passing
// (stored records on their way to the WriteBatch, answers being
// written: 50–90 MiB beside 127 MiB of held frames in the 800 × 1 MiB
// SEND test, 2026-12-05), which growth would otherwise multiply. ceiling
// (conf.Config.MemoryLimitCeiling, 2 × --queue-max-bytes + 512 MiB, the
// fixed default before 2026-12-05) caps it: requests that grpc-go is
// still reading are live but not held, so a flood of large SendMessage
// calls would otherwise look like broker state.
// Used by Serve's goroutine only.
type memoryLimiter struct {
	base    int64
	ceiling int64
	growth  float64
	held    func() int64 // bytes of frames held by the listeners
	sample  []metrics.Sample
	others  [memoryLimitWindow]int64 // live − held of the last samples, bytes
	n       int                      // samples taken
	set     int64                    // the limit last applied, bytes
	cycles  uint64                   // GC cycles at the last sample
	heldGC  int64                    // held at the first sample after the last GC, bytes
}

// gcPercent returns the GC target in force (GOGC or --gc-percent),
// negative when the GC is off.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 100
	}
	p := s[0].Value.Uint64()
	if p > 1<<20 {
		return -1
	}
	return int(p)
}

// newMemoryLimiter builds the limiter for base and ceiling bytes and the
// GC target gcPercent (negative: GC off, taken as 100).
func newMemoryLimiter(base, ceiling int64, gcPercent int, held func() int64) *memoryLimiter {
	if gcPercent < 0 {
		gcPercent = 100
	}
	return &memoryLimiter{
		base: base, ceiling: max(base, ceiling), growth: 1 + float64(gcPercent)/100, held: held,
		sample: []metrics.Sample{{Name: liveHeapMetric}, {Name: gcCyclesMetric}},
	}
}

// limitFor records a sample of live heap bytes of which held are frames
// and returns the limit for the window that ends with it.
func (m *memoryLimiter) limitFor(live, held int64) int64 {
	m.others[m.n%memoryLimitWindow] = max(0, live-held)
	m.n++
	least := m.others[0]
	for _, o := range m.others[:min(m.n, memoryLimitWindow)] {
		least = min(least, o)
	}
	return min(m.ceiling, max(m.base, int64(float64(least)*m.growth)))
}

// limitAt pairs the live heap of GC cycle cycles with the held frames
// sampled first after that cycle (m.held), and returns limitFor of them.
// live changes only at a GC, held at any time: pairing a live heap
// measured while a flood's frames were held with held frames sampled
// after they went counted the flood as broker state, and 10 s after 1,000
// GET_ALL_TOPIC_CONFIG the limit rose from 320 to 856 MiB with no GC
// between (2026-12-07).
func (m *memoryLimiter) limitAt(cycles uint64, live int64) int64 {
	if m.n == 0 || cycles != m.cycles {
		m.cycles, m.heldGC = cycles, m.held()
	}
	return m.limitFor(live, m.heldGC)
}

// update reads the live heap and applies the limit when it moved by more
// than 1 MiB; it returns the limit in force.
func (m *memoryLimiter) update() int64 {
	metrics.Read(m.sample)
	var live int64
	var cycles uint64
	if m.sample[0].Value.Kind() == metrics.KindUint64 {
		live = int64(m.sample[0].Value.Uint64())
	}
	if m.sample[1].Value.Kind() == metrics.KindUint64 {
		cycles = m.sample[1].Value.Uint64()
	}
	next := m.limitAt(cycles, live)
	if d := next - m.set; d > 1<<20 || d < -(1<<20) {
		debug.SetMemoryLimit(next)
		m.set = next
	}
	return m.set
}

// run updates the limit every memoryLimitEvery until ctx is done, then
// closes done.
func (m *memoryLimiter) run(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(memoryLimitEvery)
	defer t.Stop()
	for {
		m.update()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// heldFrameBytes returns the bytes of requests the process holds now
// (memoryLimiter's held): large frames the listeners hold, and the
// mutations queued in the writer's lanes (stored records of SENDs, bounded
// by --queue-max-bytes). Without the queued ones, a flood of SENDs just
// under the large-frame size (61 KB from 2,000 connections × 4 in flight,
// 2026-12-05) kept the queue full of records that counted as broker state:
// growth multiplied them and the limit rose to its ceiling (1 GiB, peak RSS
// 1.1–1.2 GB against the 612 MiB bound). A SEND both held as a large frame
// and queued counts twice, which only lowers the limit. Replies waiting in
// outbound buffers for clients that do not read them count too
// (remoting.Server.HeldReplyBytes, bounded by --reply-max-bytes): 400
// connections that each POPped 15 MiB and read nothing raised the limit
// with them (peak RSS 714 MiB with the bound, 2026-12-07). So does the
// reply room reads hold while they read or build an answer
// (broker.Service.ReadingReplyBytes): answers to 1,000 pipelined
// GET_ALL_TOPIC_CONFIG built four at a time raised the limit to 662 MiB.
// Any goroutine.
func (st *Stack) heldFrameBytes() int64 {
	n := st.broker.HeldReadBytes() + st.broker.HeldReplyBytes() + st.Writer.QueuedBytes()
	if st.namesrv != nil {
		n += st.namesrv.HeldReadBytes()
	}
	if st.grpc != nil {
		n += st.grpc.srv.HeldSendBytes()
	}
	n += st.Broker.Svc.HeldReplyBytes() // gRPC ReceiveMessage messages not yet taken
	n += st.Broker.Svc.ReadingReplyBytes()
	return n
}
