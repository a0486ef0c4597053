package remoting

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Held replies. A reply normally leaves at once: directly when it settles
// the last request its connection is owed (direct.go), else handed to the
// connection's event loop with AsyncWritev (an eventfd write, the loop's
// wake-up, a writev). Two kinds of giver answer many requests of one
// connection in a row, and hold those replies to write them with one
// sendmsg instead:
//   - the event loop, while OnTraffic runs: a handler answering on the
//     loop (HEART_BEAT, route, offset and admin queries) finds nothing
//     else owed, so N pipelined requests in one read were N sends (62 % of
//     the server's CPU in the HEART_BEAT bench);
//   - the group-commit writer while it completes a batch (ReplyScope):
//     the replies of one fsync to one connection, each of which took the
//     AsyncWritev hand-off in turn.
//
// A held reply waits in pending; when the last holder lets go (release),
// pending is written with one non-blocking sendmsg by the releasing
// goroutine when gnet holds nothing for the connection, and what is left
// goes through gnet's path. A reply given while a write through gnet is
// outstanding, or while gnet holds bytes, is never held: it queues behind
// them as before. The wait of a held reply is bounded by one OnTraffic or
// one batch's completion.

// holdLocked keeps f in pending when the connection's replies are held,
// joining the server's open ReplyScope when f would otherwise be handed to
// the event loop, and reports whether it kept f. REQUIRES: mu held, c not
// closed.
func (c *conn) holdLocked(f *frameBuf) bool {
	if c.flushing || c.loopHolds {
		return false
	}
	if c.holds == 0 {
		if c.owed.Load() == 0 {
			return false // settles the last owed request: sent directly
		}
		h := c.srv.scope.Load()
		if h == nil || c.scoped || !h.join(c) {
			return false
		}
		c.scoped = true
		c.holds++
	}
	c.pending = append(c.pending, f)
	return true
}

// holdReplies starts the event loop's hold (OnTraffic). Loop goroutine
// only.
func (c *conn) holdReplies() {
	c.mu.Lock()
	c.holds++
	c.mu.Unlock()
}

// releaseHeld ends the event loop's hold. Loop goroutine only.
func (c *conn) releaseHeld() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseLocked()
}

// releaseLocked ends one hold; when it was the last, it writes what
// pending holds. REQUIRES: mu held.
func (c *conn) releaseLocked() {
	c.holds--
	if c.holds > 0 || c.closed || c.flushing || len(c.pending) == 0 {
		return
	}
	c.touch()
	if !c.loopHolds {
		c.sendPendingLocked()
	}
	if len(c.pending) == 0 {
		c.closeIfSettledLocked()
		return
	}
	c.flushing = true
	c.takePending()
	_ = c.flushLocked() // on error the connection is closed
}

// ReplyScope holds, from Begin to End, the replies given on the server's
// connections that would be handed to their event loops, and writes each
// connection's at End with one sendmsg from End's goroutine (see above).
// One scope is open per Server at a time; Begin and End are called by one
// goroutine (the group-commit writer's completer), in pairs.
type ReplyScope struct {
	srv   *Server
	mu    sync.Mutex
	open  bool
	conns []*conn // joined since Begin. REQUIRES: mu held
	spare []*conn // End's copy, reused
}

// ReplyScope returns a scope of s's connections (batch.CompletionScope).
func (s *Server) ReplyScope() *ReplyScope { return &ReplyScope{srv: s} }

// Begin opens the scope: replies from now on may be held.
func (h *ReplyScope) Begin() {
	h.mu.Lock()
	h.open = true
	h.mu.Unlock()
	h.srv.scope.Store(h)
}

// End closes the scope and writes the replies it held.
func (h *ReplyScope) End() {
	h.srv.scope.CompareAndSwap(h, nil)
	h.mu.Lock()
	h.open = false
	conns := h.conns
	h.conns, h.spare = h.spare[:0], conns
	h.mu.Unlock()
	for i, c := range conns {
		c.mu.Lock()
		c.scoped = false
		c.releaseLocked()
		c.mu.Unlock()
		conns[i] = nil
	}
}

// join adds c to the scope while it is open. REQUIRES: c.mu held (lock
// order: conn, then scope).
func (h *ReplyScope) join(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.open {
		return false
	}
	h.conns = append(h.conns, c)
	return true
}

// sendPendingLocked sends up to maxIovec pending frames with one
// non-blocking sendmsg and drops what was written whole from pending; a
// frame written in part keeps its unsent tail (f.off). REQUIRES: mu held,
// c not closed, no write outstanding (c.iov is free).
func (c *conn) sendPendingLocked() {
	iov := c.iov[:0]
	for _, f := range c.pending[:min(len(c.pending), maxIovec)] {
		iov = append(iov, f.b[f.off:])
	}
	n, err := unix.SendmsgBuffers(c.fd, iov, nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
	clear(iov)
	c.iov = iov[:0]
	if err != nil || n <= 0 {
		return
	}
	c.srv.heldSends.Add(1)
	done, started := 0, 0 // frames written whole; frames whose first byte went now
	for _, f := range c.pending {
		if f.off == 0 {
			started++
		}
		left := len(f.b) - f.off
		if n < left {
			f.off += n
			break
		}
		n -= left
		putFrame(f)
		done++
		if n == 0 {
			break
		}
	}
	c.srv.directReplies.Add(uint64(started))
	if ctr := c.srv.directCtr; ctr != nil {
		ctr.Add(float64(started))
	}
	rest := copy(c.pending, c.pending[done:])
	clear(c.pending[rest:])
	c.pending = c.pending[:rest]
}
