package remoting

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/codec"
)

// ErrCallTimeout is the error a Server.Invoke callback gets when the
// client did not answer within the timeout (Java's RemotingTimeoutException
// of invokeSync).
var ErrCallTimeout = errors.New("remoting: no response from the client in time")

// CallFunc receives the client's response to a Server.Invoke request, or
// a nil response and the error that ended the wait: ErrCallTimeout
// (wrapped) after the timeout, net.ErrClosed (wrapped) when the
// connection closed first. It is called exactly once: on the event loop
// of the client's connection (response, close) or on a timer goroutine
// (timeout), so it must not block. resp is owned by the callee.
type CallFunc func(resp *codec.Command, err error)

// callKey names one server-initiated request: the connection it went to
// and the opaque the server gave it.
type callKey struct {
	conn   uint64
	opaque int32
}

// pendingCall is one request waiting for its response.
type pendingCall struct {
	cb    CallFunc
	timer *time.Timer // fires the timeout; stopped when the call settles otherwise
}

// callTable holds the server-initiated requests waiting for a response,
// as NettyRemotingAbstract.responseTable does for a Java broker.
type callTable struct {
	opaque atomic.Int32
	mu     sync.Mutex
	calls  map[callKey]*pendingCall // REQUIRES: mu held
}

// take removes and returns the pending call of k; nil when it settled
// already (answered, timed out, or failed by the connection closing).
func (t *callTable) take(k callKey) *pendingCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.calls[k]
	if p != nil {
		delete(t.calls, k)
	}
	return p
}

// takeConn removes and returns every pending call of connection id.
func (t *callTable) takeConn(id uint64) []*pendingCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*pendingCall
	for k, p := range t.calls {
		if k.conn == id {
			out = append(out, p)
			delete(t.calls, k)
		}
	}
	return out
}

// pending is how many server-initiated requests wait for a response
// (tests).
func (t *callTable) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// Invoke sends req as a request (flags cleared, a fresh server opaque) on
// the open connection connID (Conn.ID) and calls cb with the client's
// response, matched by connection and opaque (a frame with flag bit 0
// set, routed by dispatch), or with an error after timeout or when the
// connection closes first, as Java's RemotingServer.invokeSync does for
// GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY. It never
// blocks: the frame is queued like a reply, and cb runs later (see
// CallFunc). Any goroutine. It overwrites req.Opaque and req.Flag.
//
// Errors (cb is then never called): net.ErrClosed (wrapped) when no open
// connection has that id or it closed meanwhile; gnet's error when the
// engine is shutting down; an error for timeout <= 0.
func (s *Server) Invoke(connID uint64, req *codec.Command, timeout time.Duration, cb CallFunc) error {
	if timeout <= 0 {
		return fmt.Errorf("remoting: invoke timeout %v must be positive", timeout)
	}
	s.mu.Lock()
	c := s.conns[connID]
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("remoting: connection %d: %w", connID, net.ErrClosed)
	}
	t := &s.calls
	k := callKey{conn: connID, opaque: t.opaque.Add(1)}
	req.Opaque, req.Flag = k.opaque, 0
	remote := c.remote
	p := &pendingCall{cb: cb}
	// Registered before the frame leaves, so an answer cannot come first;
	// OnClose marks the connection closed before it fails the calls of it,
	// so a call is either refused by reply below or failed by OnClose.
	t.mu.Lock()
	if t.calls == nil {
		t.calls = make(map[callKey]*pendingCall)
	}
	t.calls[k] = p
	p.timer = time.AfterFunc(timeout, func() {
		if q := t.take(k); q != nil {
			q.cb(nil, fmt.Errorf("%w: wait response on the channel <%s> timeout, %d(ms)",
				ErrCallTimeout, remote, timeout.Milliseconds()))
		}
	})
	t.mu.Unlock()
	if err := c.reply(req, false); err != nil {
		if q := t.take(k); q != nil {
			q.timer.Stop()
		}
		return fmt.Errorf("remoting: connection %d: %w", connID, err)
	}
	return nil
}

// completeCall hands resp, a response frame the client sent on c, to the
// Invoke waiting for its opaque, and reports whether one was waiting. Runs
// on c's event loop.
func (s *Server) completeCall(c *conn, resp *codec.Command) bool {
	p := s.calls.take(callKey{conn: c.id, opaque: resp.Opaque})
	if p == nil {
		return false
	}
	p.timer.Stop()
	p.cb(resp, nil)
	return true
}

// failCalls ends every Invoke still waiting on connection c with
// net.ErrClosed. Runs from OnClose, after c was marked closed.
func (s *Server) failCalls(c *conn) {
	for _, p := range s.calls.takeConn(c.id) {
		p.timer.Stop()
		p.cb(nil, fmt.Errorf("remoting: send request to <%s> failed: connection closed: %w", c.remote, net.ErrClosed))
	}
}

// ServerOf returns the Server that dispatched the request behind c, so a
// handler can reach another connection of the same listener
// (Server.Invoke, Server.Send); nil for a Conn that did not come from a
// Server's dispatch.
func ServerOf(c Conn) *Server {
	if r, ok := c.(*request); ok {
		return r.c.srv
	}
	return nil
}
