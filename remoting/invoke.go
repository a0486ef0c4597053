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

// ErrInvokeTimeout is the error an Invoke completion gets when the client
// did not answer within the timeout (Java's RemotingTimeoutException of
// invokeSync).
var ErrInvokeTimeout = errors.New("remoting: client did not answer in time")

// calls holds the requests this server sent with Invoke that wait for the
// client's response, keyed by connection and opaque.
type calls struct {
	next atomic.Int32 // opaque of the next Invoke
	mu   sync.Mutex
	m    map[callKey]*call // REQUIRES: mu held
}

type callKey struct {
	conn   uint64
	opaque int32
}

type call struct {
	done  func(*codec.Command, error)
	timer *time.Timer
}

// take removes and returns the call of k, or nil when it was already
// settled (answered, timed out or failed).
func (cs *calls) take(k callKey) *call {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[k]
	if c != nil {
		delete(cs.m, k)
		c.timer.Stop()
	}
	return c
}

// Invoke sends the request cmd on the open connection connID and calls
// done exactly once: with the client's response frame (matched by opaque),
// or with an error — ErrInvokeTimeout when no response came within
// timeout, net.ErrClosed (wrapped) when the connection is not open or
// closes first, or the write error. It is Java's RemotingServer.invokeSync
// for a broker → client request that expects an answer, such as
// PUSH_REPLY_MESSAGE_TO_CLIENT (326), without blocking: Invoke sets
// cmd.Opaque itself (a per-server counter) and clears FlagOneway. Any
// goroutine; done runs on the connection's event loop (response, close) or
// on a timer goroutine (timeout) and must not block.
func (s *Server) Invoke(connID uint64, cmd *codec.Command, timeout time.Duration, done func(*codec.Command, error)) {
	cmd.Flag &^= codec.FlagOneway | codec.FlagResponse
	cmd.Opaque = s.calls.next.Add(1)
	k := callKey{conn: connID, opaque: cmd.Opaque}
	c := &call{done: done}
	s.calls.mu.Lock()
	if s.calls.m == nil {
		s.calls.m = make(map[callKey]*call)
	}
	s.calls.m[k] = c
	c.timer = time.AfterFunc(timeout, func() {
		if c := s.calls.take(k); c != nil {
			c.done(nil, ErrInvokeTimeout)
		}
	})
	s.calls.mu.Unlock()
	if err := s.Send(connID, cmd); err != nil {
		if c := s.calls.take(k); c != nil {
			c.done(nil, err)
		}
	}
}

// settleCall hands a response frame from connection connID to the Invoke
// waiting for it; false when none waits (a late answer, or one to a
// oneway request). Event loop.
func (s *Server) settleCall(connID uint64, resp *codec.Command) bool {
	c := s.calls.take(callKey{conn: connID, opaque: resp.Opaque})
	if c == nil {
		return false
	}
	c.done(resp, nil)
	return true
}

// failCalls ends every Invoke still waiting on connection connID with
// net.ErrClosed. OnClose (event loop).
func (s *Server) failCalls(connID uint64) {
	var failed []*call
	s.calls.mu.Lock()
	for k, c := range s.calls.m {
		if k.conn == connID {
			delete(s.calls.m, k)
			c.timer.Stop()
			failed = append(failed, c)
		}
	}
	s.calls.mu.Unlock()
	for _, c := range failed {
		c.done(nil, fmt.Errorf("remoting: connection %d closed before it answered: %w", connID, net.ErrClosed))
	}
}
