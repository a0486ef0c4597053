package remoting

import (
	"errors"
	"fmt"
	"net"

	"github.com/popshim/popshim/codec"
)

// Send writes cmd on the open connection connID (Conn.ID) without
// blocking: a request the server sends to a client, as Java's
// RemotingServer.invokeOneway does for CHECK_TRANSACTION_STATE (39) or
// NOTIFY_CONSUMER_IDS_CHANGED (40). Mark it FlagOneway: nothing waits for
// or matches an answer, and a response frame the client sends anyway is
// dropped by dispatch (Invoke is the call that waits for one). The frame is encoded on the caller's goroutine and
// queued like a reply, in order with the connection's replies. Any
// goroutine. Errors: net.ErrClosed (wrapped) when no open connection has
// that id or it closed meanwhile; gnet's error when the engine is
// shutting down.
func (s *Server) Send(connID uint64, cmd *codec.Command) error {
	s.mu.Lock()
	c := s.conns[connID]
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("remoting: connection %d: %w", connID, net.ErrClosed)
	}
	if c.pushBacklogged() {
		s.opts.Metrics.pushDrop(s.opts.Name)
		return ErrPushBacklog
	}
	return c.reply(cmd, false)
}

// ErrPushBacklog is Send's error for a connection whose client has not
// read earlier frames: more than pushMaxOutbound bytes in gnet's outbound
// buffer as last seen, or more than pushMaxQueued frames not yet handed
// to gnet. The request is dropped (popshim_remoting_push_dropped_total),
// as a Java broker drops a oneway request when its 256 permits
// (serverOnewaySemaphoreValue) stay taken for 10 ms. Without it, 400
// connections that each joined 1,000 consumer groups by HEART_BEAT and read
// nothing were sent NOTIFY_CONSUMER_IDS_CHANGED for every later join
// (peak RSS 1,291 MiB, 2026-12-07).
var ErrPushBacklog = errors.New("remoting: the client has not read earlier frames; request not sent")

// pushMaxOutbound and pushMaxQueued bound the unread backlog past which
// Send drops (ErrPushBacklog).
const (
	pushMaxOutbound = 256 << 10
	pushMaxQueued   = 256
)

// pushBacklogged reports whether c's client has left more than the push
// backlog unread. Any goroutine.
func (c *conn) pushBacklogged() bool {
	if c.outboundHeld.Load() > pushMaxOutbound {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > pushMaxQueued // inflight belongs to the flushing token holder
}
