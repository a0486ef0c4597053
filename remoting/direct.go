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
