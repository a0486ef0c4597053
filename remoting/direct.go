package remoting

import (
	"sync/atomic"

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
// The send goes to a duplicate of the socket's descriptor, taken on the
// event loop when the connection dispatches its first request (take) and
// closed with the conn (closeLocked). gnet closes its own descriptor before
// it runs OnClose; writing through gnet's descriptor number from another
// goroutine in that gap could reach a connection accepted meanwhile under
// the same number. The duplicate keeps the socket itself alive until the
// conn is marked closed, under the same mutex as every send.
//
// Duplicates are bounded by directFDCap (a quarter of the process's
// descriptor limit), so they never take the descriptors accept needs;
// connections past the bound, TLS connections and connections that never
// send a request use gnet's path only. A send that fails or is partial
// leaves what is left to gnet's path, which reports the error or waits for
// the socket to drain.

// directFDs counts the duplicate descriptors held by every Server's conns.
var directFDs atomic.Int64

// directFDCap bounds directFDs: a quarter of RLIMIT_NOFILE's soft limit
// as the process started (Go raises it to the hard limit at start-up).
var directFDCap = func() int64 {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int64(min(r.Cur, 1<<30) / 4)
}()

// takeDirectFD duplicates the connection's socket descriptor for direct
// replies when the bound allows. Loop goroutine only (gnet cannot be
// closing the descriptor then), once per connection, before its first
// request is dispatched.
func (c *conn) takeDirectFD() {
	c.directTried = true
	if c.tls != nil {
		return
	}
	if directFDs.Add(1) > directFDCap {
		directFDs.Add(-1)
		return
	}
	fd, err := unix.FcntlInt(uintptr(c.gc.Fd()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		directFDs.Add(-1)
		return
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = unix.Close(fd)
		directFDs.Add(-1)
		return
	}
	c.directFD = fd
	c.mu.Unlock()
}

// releaseDirectFDLocked closes the duplicate descriptor. REQUIRES: mu held.
func (c *conn) releaseDirectFDLocked() {
	if c.directFD < 0 {
		return
	}
	_ = unix.Close(c.directFD)
	c.directFD = -1
	directFDs.Add(-1)
}

// sendDirectLocked writes f straight to the socket when no other reply is
// owed, queued or in flight, and reports whether f is done with (written
// whole and returned to the pool). A partial send leaves f's unsent tail
// (f.off) for the caller to queue; a failed one leaves f untouched.
// REQUIRES: mu held, c not closed.
func (c *conn) sendDirectLocked(f *frameBuf) bool {
	if c.directFD < 0 || c.flushing || c.loopHolds || len(c.pending) > 0 || c.owed.Load() != 0 {
		return false
	}
	n, err := unix.SendmsgN(c.directFD, f.b, nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
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
