package batch

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// fifo is a growable ring of ops.
type fifo struct {
	buf  []*Op
	head int
	n    int
}

func (f *fifo) push(op *Op) {
	if f.n == len(f.buf) {
		nb := make([]*Op, max(16, 2*len(f.buf)))
		for i := 0; i < f.n; i++ {
			nb[i] = f.buf[(f.head+i)%len(f.buf)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)%len(f.buf)] = op
	f.n++
}

func (f *fifo) peek() *Op { return f.buf[f.head] }

func (f *fifo) pop() *Op {
	op := f.buf[f.head]
	f.buf[f.head] = nil
	f.head = (f.head + 1) % len(f.buf)
	f.n--
	return op
}

// lanes is the bounded multi-lane queue in front of the writer (one fifo
// per Lane, each bounded by cap). Submitters push under mu (never blocking
// on I/O); the writer takes batches under mu.
type lanes struct {
	mu       sync.Mutex
	q        [numLanes]fifo
	cap      int
	maxBytes int64 // bound of bytes, the sum of queued Op.Bytes over all lanes
	bytes    int64 // queued Op.Bytes, all lanes
	maxWait  int64 // produce ops queued longer than this (ns) are shed; 0: never
	seq      uint64
	closed   bool
	failed   error         // failure cause until recovered
	diskFull bool          // produce lane refuses with ErrDiskFull
	signal   chan struct{} // capacity 1: "something was queued or closed"
	rejects  [numLanes]uint64
	taken    [numLanes][]*Op // takeBatch scratch, reused (one writer)
	// accepted counts ops accepted per lane since start; read without mu
	// (Writer.Accepted).
	accepted [numLanes]atomic.Uint64
}

func newLanes(capacity int, maxBytes int64, maxWait time.Duration) *lanes {
	return &lanes{cap: capacity, maxBytes: maxBytes, maxWait: int64(maxWait), signal: make(chan struct{}, 1)}
}

func (l *lanes) wake() {
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// push queues op or returns ErrBusy (lane full, or the queued bytes would
// pass maxBytes while something is queued), ErrClosed, ErrFailed or
// ErrDiskFull (produce lane) at once.
func (l *lanes) push(op *Op) error {
	if op.Lane >= numLanes {
		return fmt.Errorf("%w: %d", ErrBadLane, op.Lane)
	}
	if op.Job != nil && (op.Apply != nil || op.Done != nil || nilJob(op.Job)) {
		return ErrBadOp
	}
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return ErrClosed
	case l.failed != nil:
		err := l.failed
		l.mu.Unlock()
		return err
	case op.Lane == LaneProduce && l.diskFull:
		l.mu.Unlock()
		return ErrDiskFull
	case l.q[op.Lane].n >= l.cap, !op.PastByteBound && l.bytes > 0 && l.bytes+int64(op.Bytes) > l.maxBytes:
		l.rejects[op.Lane]++
		l.mu.Unlock()
		return ErrBusy
	}
	l.bytes += int64(op.Bytes)
	l.seq++
	op.seq = l.seq
	op.queued = monoNanos()
	op.err = nil
	lane := op.Lane // op is the writer's once unlocked: it may complete and be reused
	l.q[lane].push(op)
	l.mu.Unlock()
	l.accepted[lane].Add(1)
	l.wake()
	return nil
}

// shed marks produce op, already popped, as shed at now (its
// *QueueTimeoutError names the ops still queued) and counts it.
// REQUIRES: l.mu held.
func (l *lanes) shed(op *Op, now int64) {
	op.err = &QueueTimeoutError{Waited: time.Duration(now - op.queued), Queued: l.q[LaneProduce].n}
	l.rejects[LaneProduce]++
}

// depth returns the queued ops of one lane.
func (l *lanes) depth(lane Lane) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.q[lane].n
}

// addReject counts an op answered busy outside push (shed in sync mode).
func (l *lanes) addReject(lane Lane) {
	l.mu.Lock()
	l.rejects[lane]++
	l.mu.Unlock()
}

func (l *lanes) rejected(lane Lane) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rejects[lane]
}

// bulkBacklogDivisor: besides Options.MaxBulkOps, each batch takes this
// fraction (1/256) of the queued bulk ops. A burst of 2 000 CHANGEs adds at
// most 7 ops per batch; a sustained overload of the bulk lane, which a fixed
// cap would let grow until ErrBusy, drains at a rate that grows with its
// backlog (steady state: backlog ≈ 256 × (arrivals per batch − MaxBulkOps)).
const bulkBacklogDivisor = 256

// takeBatch moves up to maxOps ops (and about maxBytes of Op.Bytes) into dst
// and returns them in accept order. Lanes are served in this order: the
// background lane (at most bgMax ops), the bulk lane (at most bulkMax plus
// 1/bulkBacklogDivisor of its backlog), then foreground and produce with
// what is left. Serving the capped lanes first means they always make
// progress however much foreground work is queued; their caps keep them
// from filling the batch. Within the batch every op is applied in accept
// order (mergeBySeq); across batches a capped lane's ops may be applied
// after foreground ops accepted later (see LaneBulk). headWait receives,
// per lane, how long the oldest op taken from it waited in its queue (-1:
// none taken). done=true when the queue is closed and empty.
func (l *lanes) takeBatch(dst []*Op, maxOps, maxBytes, bgMax, bulkMax int, headWait *[numLanes]time.Duration) (ops []*Op, done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	taken := &l.taken
	for i := range taken {
		clear(taken[i])
		taken[i] = taken[i][:0]
	}
	n, bytes := 0, 0
	now := monoNanos()
	takeFrom := func(lane Lane, limit int) {
		q := &l.q[lane]
		start := n
		for q.n > 0 && n < maxOps && n-start < limit {
			op := q.peek()
			if n > 0 && bytes+op.Bytes > maxBytes {
				return
			}
			q.pop()
			l.bytes -= int64(op.Bytes)
			if lane == LaneProduce && l.maxWait > 0 && now-op.queued > op.shedAfter(time.Duration(l.maxWait)) {
				// past a limit of its own shorter than maxWait, behind
				// ops within theirs (the scan below stopped before it)
				l.shed(op, now)
			}
			taken[lane] = append(taken[lane], op)
			n++
			bytes += op.Bytes
		}
	}
	if l.maxWait > 0 {
		// Shed produce ops that waited too long (brokerFastFailure's
		// cleanExpiredRequestInQueue): they are returned with an
		// *ErrQueueTimeout and not applied; shed here, from the head,
		// they cost no batch room. An op with a limit of its own
		// (Op.MaxWait) is shed past that one; past maxWait but within a
		// longer one of its own it is taken into this batch. The queue is
		// in accept order: the scan stops at the first op within both
		// limits (takeFrom sheds one with a shorter limit behind it).
		q := &l.q[LaneProduce]
		for q.n > 0 {
			waited := now - q.peek().queued
			within := waited <= q.peek().shedAfter(time.Duration(l.maxWait))
			if within && waited <= l.maxWait {
				break
			}
			op := q.pop()
			l.bytes -= int64(op.Bytes)
			if within {
				taken[LaneProduce] = append(taken[LaneProduce], op)
				n++
				bytes += op.Bytes
				continue
			}
			l.shed(op, now)
			taken[LaneProduce] = append(taken[LaneProduce], op)
		}
	}
	takeFrom(LaneBackground, bgMax)
	takeFrom(LaneBulk, bulkMax+l.q[LaneBulk].n/bulkBacklogDivisor)
	takeFrom(LaneForeground, maxOps)
	takeFrom(LaneProduce, maxOps)
	if n == 0 && len(taken[LaneProduce]) == 0 {
		return dst[:0], l.closed
	}
	for lane := range taken {
		headWait[lane] = -1
		if len(taken[lane]) > 0 {
			headWait[lane] = time.Duration(now - taken[lane][0].queued)
		}
	}
	return mergeBySeq(dst[:0], *taken), false
}

// takeOne pops the next op for a sync-mode worker: the older of the
// foreground and bulk heads (sync mode keeps them in accept order), else
// produce, else background. done=true when closed and empty.
func (l *lanes) takeOne() (op *Op, done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fg, bulk := &l.q[LaneForeground], &l.q[LaneBulk]
	first := LaneForeground
	if bulk.n > 0 && (fg.n == 0 || bulk.peek().seq < fg.peek().seq) {
		first = LaneBulk
	}
	for _, lane := range [...]Lane{first, LaneForeground, LaneProduce, LaneBackground} {
		if l.q[lane].n > 0 {
			op = l.q[lane].pop()
			l.bytes -= int64(op.Bytes)
			if l.queued() > 0 {
				l.wake() // hand the rest to another worker
			}
			return op, false
		}
	}
	if l.closed {
		l.wake() // let the next worker see it too
	}
	return nil, l.closed
}

// queued returns the ops queued in all lanes. REQUIRES: mu held.
func (l *lanes) queued() int {
	n := 0
	for i := range l.q {
		n += l.q[i].n
	}
	return n
}

// close stops accepting; queued ops stay to be drained.
func (l *lanes) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.wake()
}

// fail records a sticky failure and returns every queued op, in accept
// order, for the caller to complete with the error.
func (l *lanes) fail(cause error) []*Op {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed == nil {
		l.failed = fmt.Errorf("%w: %w", ErrFailed, cause)
	}
	var taken [numLanes][]*Op
	for lane := range l.q {
		for l.q[lane].n > 0 {
			taken[lane] = append(taken[lane], l.q[lane].pop())
		}
	}
	l.bytes = 0
	return mergeBySeq(nil, taken)
}

// recover clears the failure: Submit accepts work again.
func (l *lanes) recover() {
	l.mu.Lock()
	l.failed = nil
	l.mu.Unlock()
}

// setDiskFull sets whether the produce lane refuses with ErrDiskFull.
func (l *lanes) setDiskFull(full bool) {
	l.mu.Lock()
	l.diskFull = full
	l.mu.Unlock()
}

// state returns the failure (nil: none) and the disk-full flag.
func (l *lanes) state() (failed error, diskFull bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed, l.diskFull
}

// queuedBytes returns the sum of Op.Bytes queued in all lanes.
func (l *lanes) queuedBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes
}

func (l *lanes) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// mergeBySeq merges per-lane runs (each already in accept order) into one
// accept-ordered slice.
func mergeBySeq(dst []*Op, runs [numLanes][]*Op) []*Op {
	var idx [numLanes]int
	for {
		best := -1
		for i := range runs {
			if idx[i] < len(runs[i]) && (best < 0 || runs[i][idx[i]].seq < runs[best][idx[best]].seq) {
				best = i
			}
		}
		if best < 0 {
			return dst
		}
		dst = append(dst, runs[best][idx[best]])
		idx[best]++
	}
}

// nilJob reports whether j is a nil pointer (or other nil value) stored in
// the Job interface, whose methods would dereference nil on the writer.
func nilJob(j Job) bool {
	v := reflect.ValueOf(j)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}
