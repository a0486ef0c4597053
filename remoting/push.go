package remoting

import (
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
	return c.reply(cmd, false)
}
