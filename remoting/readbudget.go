package remoting

import (
	"container/list"
	"sync"
)

// LargeFrameBytes is the size above which a frame (length prefix included)
// is large: it is read into a buffer of its exact size instead of gnet's
// inbound buffer, and it needs room in the read budget
// (ServerOptions.MaxReadBytes) before its body is read. Smaller frames
// (HEART_BEAT, POP, ACK, CHANGE, most SENDs) are never delayed and not
// counted. 64 KiB is one read of gnet's default read buffer.
const LargeFrameBytes = 64 << 10

// readBudget bounds the bytes of large frames one Server holds: frames
// being read (counted at their full announced size from the moment they
// are admitted) and requests decoded from them that are not answered yet.
// A connection whose next frame is large waits in a FIFO queue, with its
// reads paused (readpause_linux.go), until the frame fits; a frame that
// does not fit even alone is admitted when nothing else is reserved, so
// any frame up to MaxFrameBytes is eventually read. Admission is strictly
// first come, first served: a connection that finished one large frame
// queues behind the others for its next one.
//
// Fields of conn guarded by mu: waitElem, want, granted.
type readBudget struct {
	limit int64 // bytes; <= 0 means no bound (nothing is counted)
	g     *readGauges

	mu       sync.Mutex
	reserved int64     // REQUIRES: mu held. Bytes admitted and not released.
	waiting  list.List // REQUIRES: mu held. *conn, oldest first.
}

// enabled reports whether large frames are counted and bounded.
func (b *readBudget) enabled() bool { return b.limit > 0 }

// acquire reserves size bytes for c's next frame. It reports true when the
// frame may be read now: the reservation was granted while c waited, or
// nobody waits and it fits (or nothing is reserved at all). Otherwise c is
// queued (once) and acquire reports false; c's loop is woken (Wake) when
// the grant is made. Loop goroutine of c.
func (b *readBudget) acquire(c *conn, size int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c.granted > 0 {
		c.granted = 0
		return true
	}
	if c.waitElem != nil {
		return false
	}
	n := int64(size)
	if b.waiting.Len() == 0 && (b.reserved+n <= b.limit || b.reserved == 0) {
		b.reserved += n
		b.g.setInflight(b.reserved)
		return true
	}
	c.want = n
	c.waitElem = b.waiting.PushBack(c)
	return false
}

// force reserves n bytes without waiting, beyond the bound if need be:
// for a connection whose reads cannot be paused. Any goroutine.
func (b *readBudget) force(n int64) {
	b.mu.Lock()
	b.reserved += n
	b.g.setInflight(b.reserved)
	b.mu.Unlock()
}

// release returns n bytes and admits waiting connections, oldest first,
// while their frames fit; each admitted connection is woken on its loop.
// Any goroutine.
func (b *readBudget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.reserved -= n
	woken := b.admitLocked(nil)
	b.g.setInflight(b.reserved)
	b.mu.Unlock()
	for _, c := range woken {
		c.wake()
	}
}

// admitLocked grants reservations to the oldest waiting connections that
// fit and appends them to woken. REQUIRES: mu held.
func (b *readBudget) admitLocked(woken []*conn) []*conn {
	for e := b.waiting.Front(); e != nil; e = b.waiting.Front() {
		c := e.Value.(*conn)
		if b.reserved+c.want > b.limit && b.reserved != 0 {
			break
		}
		b.waiting.Remove(e)
		c.waitElem = nil
		b.reserved += c.want
		c.granted = c.want
		woken = append(woken, c)
	}
	return woken
}

// forget drops a closed connection from the queue and returns what it
// held: a grant it had not taken yet plus extra (the reservation of a
// frame it was reading). Loop goroutine of c, from OnClose.
func (b *readBudget) forget(c *conn, extra int64) {
	b.mu.Lock()
	if c.waitElem != nil {
		b.waiting.Remove(c.waitElem)
		c.waitElem = nil
	}
	extra += c.granted
	c.granted = 0
	b.mu.Unlock()
	b.release(extra)
}

// stats returns the bytes reserved and the connections waiting. Any
// goroutine.
func (b *readBudget) stats() (reserved int64, waiting int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reserved, b.waiting.Len()
}

// HeldReadBytes returns the request bytes this Server holds now because
// of its read budget (ServerOptions.MaxReadBytes): large frames admitted
// by it (being read or not yet answered) plus what gnet had already read
// from connections whose reads are paused (at most one read of 64 KiB
// each, sitting in their inbound buffers); 0 when the budget is off. The
// process's soft memory limit subtracts them from the live heap
// (stack/memlimit.go), so that neither counts as broker state. Any
// goroutine.
func (s *Server) HeldReadBytes() int64 {
	if !s.budget.enabled() {
		return 0
	}
	reserved, _ := s.budget.stats()
	return reserved + s.pausedBuffered.Load()
}
