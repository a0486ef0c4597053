package batch

import (
	"fmt"
	"sync"
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

// lanes is the bounded three-lane queue in front of the writer. Submitters
// push under mu (never blocking on I/O); the writer takes batches under mu.
type lanes struct {
	mu      sync.Mutex
	q       [numLanes]fifo
	cap     int
	seq     uint64
	closed  bool
	failed  error         // sticky failure cause
	signal  chan struct{} // capacity 1: "something was queued or closed"
	rejects [numLanes]uint64
	taken   [numLanes][]*Op // takeBatch scratch, reused (one writer)
}

func newLanes(capacity int) *lanes {
	return &lanes{cap: capacity, signal: make(chan struct{}, 1)}
}

func (l *lanes) wake() {
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// push queues op or returns ErrBusy/ErrClosed/ErrFailed at once.
func (l *lanes) push(op *Op) error {
	if op.Lane >= numLanes {
		return fmt.Errorf("%w: %d", ErrBadLane, op.Lane)
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
	case l.q[op.Lane].n >= l.cap:
		l.rejects[op.Lane]++
		l.mu.Unlock()
		return ErrBusy
	}
	l.seq++
	op.seq = l.seq
	op.err = nil
	l.q[op.Lane].push(op)
	l.mu.Unlock()
	l.wake()
	return nil
}

// depth returns the queued ops of one lane.
func (l *lanes) depth(lane Lane) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.q[lane].n
}

func (l *lanes) rejected(lane Lane) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rejects[lane]
}

// takeBatch moves up to maxOps ops (and about maxBytes of Op.Bytes) into dst
// and returns them in accept order. The background lane gets at most bgMax
// of them and is served first, so it cannot starve; then foreground, then
// produce. done=true when the queue is closed and empty.
func (l *lanes) takeBatch(dst []*Op, maxOps, maxBytes, bgMax int) (ops []*Op, done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	taken := &l.taken
	for i := range taken {
		clear(taken[i])
		taken[i] = taken[i][:0]
	}
	n, bytes := 0, 0
	takeFrom := func(lane Lane, limit int) {
		q := &l.q[lane]
		start := n
		for q.n > 0 && n < maxOps && n-start < limit {
			op := q.peek()
			if n > 0 && bytes+op.Bytes > maxBytes {
				return
			}
			q.pop()
			taken[lane] = append(taken[lane], op)
			n++
			bytes += op.Bytes
		}
	}
	takeFrom(LaneBackground, bgMax)
	takeFrom(LaneForeground, maxOps)
	takeFrom(LaneProduce, maxOps)
	if n == 0 {
		return dst[:0], l.closed
	}
	return mergeBySeq(dst[:0], *taken), false
}

// takeOne pops the oldest op of the highest-priority non-empty lane
// (foreground, produce, background) for a sync-mode worker. done=true when
// closed and empty.
func (l *lanes) takeOne() (op *Op, done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lane := range [...]Lane{LaneForeground, LaneProduce, LaneBackground} {
		if l.q[lane].n > 0 {
			op = l.q[lane].pop()
			if l.q[LaneForeground].n+l.q[LaneProduce].n+l.q[LaneBackground].n > 0 {
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
	return mergeBySeq(nil, taken)
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
