package remoting

import (
	"encoding/hex"
	"errors"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/popshim/popshim/codec"
)

// snippetBytes is how many bytes of a malformed frame are logged, in hex.
const snippetBytes = 32

// malformed handles a protocol error on the event loop: it logs the stream
// offset of the frame, the reason and a hex snippet of its first bytes,
// counts it, and ends the connection's input. Everything buffered from the
// bad frame on, and everything read later, is discarded. The connection is
// not closed yet when replies are still owed to requests decoded before the
// bad frame (a handler may answer from another goroutine after an fsync):
// it closes once those replies were handed to the socket, or when
// ServerOptions.MalformedGrace has passed, whichever comes first. Returns
// the action for OnTraffic: gnet.Close when nothing is owed.
func (s *Server) malformed(c *conn, gc gnet.Conn, err error) gnet.Action {
	snippet, _ := gc.Peek(min(gc.InboundBuffered(), snippetBytes))
	return s.malformedAt(c, gc, err, snippet)
}

// malformedAt is malformed with the snippet given: the first bytes of a
// large frame that was read into its own buffer (largeframe.go) and is no
// longer in gnet's.
func (s *Server) malformedAt(c *conn, gc gnet.Conn, err error, snippet []byte) gnet.Action {
	reason := "bad_frame"
	switch {
	case errors.Is(err, codec.ErrFrameTooLarge):
		reason = "too_large"
	case errors.Is(err, codec.ErrBadHeader):
		reason = "bad_header"
	}
	s.opts.Metrics.malformedFrame(s.opts.Name, reason)
	s.protoLog.Warn().Uint64("conn", c.id).Stringer("remote", c.remote).Int64("offset", c.consumed).
		Str("reason", reason).Err(err).Str("snippet", hex.EncodeToString(snippet)).
		Int64("owed_replies", c.owed.Load()).
		Msg("malformed frame; closing connection after the replies owed before it")
	c.discarding = true
	_, _ = gc.Discard(gc.InboundBuffered())
	if c.stopReading(s.opts.MalformedGrace) {
		return gnet.Close
	}
	return gnet.None
}

// stopReading marks the connection as closing once settled and arms the
// grace timer. It reports true when the connection may close at once:
// nothing is owed or being written, or grace is negative (no waiting).
// Loop goroutine only.
func (c *conn) stopReading(grace time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return true
	}
	c.readStopped = true
	if grace < 0 || c.settledLocked() {
		c.closeSent = true
		return true
	}
	c.grace = time.AfterFunc(grace, c.graceExpired)
	return false
}

// settledLocked reports whether every owed reply was handed to the socket:
// none owed, none pending, no write outstanding. REQUIRES: mu held.
func (c *conn) settledLocked() bool {
	return c.owed.Load() == 0 && !c.flushing && len(c.pending) == 0
}

// closeIfSettledLocked asks gnet to close a connection whose input ended
// at a malformed frame once it has settled. gnet runs the close after the
// write tasks already queued and flushes its outbound buffer first, so the
// last reply reaches the peer. REQUIRES: mu held; any goroutine.
func (c *conn) closeIfSettledLocked() {
	if !c.readStopped || c.closed || c.closeSent || !c.settledLocked() {
		return
	}
	c.closeSent = true
	_ = c.gc.Close()
}

// graceExpired closes a connection whose owed replies did not all arrive
// within MalformedGrace after its malformed frame; later replies fail with
// net.ErrClosed. It runs on the timer's goroutine and holds mu while it
// calls Close, so it never queues a task on a poller gnet already closed
// (OnClose marks the conn closed under mu first).
func (c *conn) graceExpired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.closeSent {
		return
	}
	c.closeSent = true
	c.srv.protoLog.Warn().Uint64("conn", c.id).Stringer("remote", c.remote).Int64("owed_replies", c.owed.Load()).
		Dur("grace", c.srv.opts.MalformedGrace).Msg("replies still owed after a malformed frame; closing connection anyway")
	_ = c.gc.Close()
}
