package remoting

import (
	"golang.org/x/sys/unix"
)

// Direct replies. A reply normally reaches the socket through gnet: the
// replying goroutine queues it with AsyncWritev, which wakes the
// connection's event loop (an eventfd write, an epoll_wait return and, in
// gnet's poller, a runtime.Gosched that wakes an idle P), and the loop
// calls writev. That hand-off lets the replies of one group commit
// coalesce into one writev per connection, but at light load every reply
// pays it alone. So a reply that settles the last request its connection
// is owed, with nothing queued or in gnet's outbound buffer, is written at
// once by the replying goroutine with a non-blocking send: nothing could
// coalesce with it. Replies while others are owed keep the hand-off.
//
// The send goes to the connection's socket descriptor (conn.fd, copied at
// OnOpen) under conn.mu, and only while the conn is not marked closed.
// gnet (v2.9.7, eventloop_unix.go close) runs OnClose, which marks the conn
// closed under that mutex, before it closes the descriptor, so a send never
// reaches a descriptor number that gnet closed and a new connection may
// have been given (TestOnCloseRunsBeforeDescriptorCloses holds gnet to
// that order). A TLS connection's descriptor is the event loop's end of
// its socketpair (tls_session.go), so its direct reply goes to the
// session's pump like any reply. A send that fails or is partial leaves
// what is left to gnet's path, which reports the error or waits for the
// socket to drain.

// sendDirectLocked writes f straight to the socket when no other reply is
// owed, queued or in flight, and reports whether f is done with (written
// whole and returned to the pool). A partial send leaves f's unsent tail
// (f.off) for the caller to queue; a failed one leaves f untouched.
// REQUIRES: mu held, c not closed.
func (c *conn) sendDirectLocked(f *frameBuf) bool {
	if c.flushing || c.loopHolds || len(c.pending) > 0 || c.owed.Load() != 0 {
		return false
	}
	n, err := unix.SendmsgN(c.fd, f.b, nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
	if err != nil || n <= 0 {
		return false
	}
	c.srv.directReplies.Add(1)
	if ctr := c.srv.directCtr; ctr != nil {
		ctr.Inc()
	}
	if n < len(f.b) {
		f.off = n
		return false
	}
	putFrame(f)
	return true
}

// Replies held during a read. A handler that answers on the event loop
// (HEART_BEAT, route, offset and admin queries) finds nothing else owed,
// so each of its replies would be a direct send of its own: a client that
// pipelines N such requests made the loop call sendmsg N times for one
// read (62 % of the server's CPU in the HEART_BEAT bench). While OnTraffic
// runs, a reply that would be sent directly is kept in pending instead,
// and releaseHeld writes everything kept with one sendmsg when OnTraffic
// returns. Replies from other goroutines meanwhile (a group commit's) are
// held the same way; the wait is bounded by one OnTraffic.

// holdLocked keeps f in pending when the connection is holding replies and
// f would otherwise be sent directly, and reports whether it did.
// REQUIRES: mu held, c not closed.
func (c *conn) holdLocked(f *frameBuf) bool {
	if !c.holding || c.flushing || c.loopHolds || c.owed.Load() != 0 {
		return false
	}
	c.pending = append(c.pending, f)
	return true
}

// holdReplies starts holding replies (OnTraffic). Loop goroutine only.
func (c *conn) holdReplies() {
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

// releaseHeld stops holding and writes what pending holds: with one
// non-blocking sendmsg when gnet holds nothing for the connection, and
// what that left (all of it on EAGAIN or an error, the tail of a partial
// send) through gnet's path. Loop goroutine only.
func (c *conn) releaseHeld() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	if c.closed || c.flushing || len(c.pending) == 0 {
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
