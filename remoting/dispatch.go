package remoting

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/popshim/popshim/codec"
)

// OnTraffic decodes every whole frame buffered on the connection and
// dispatches it; a partial frame stays in gnet's inbound buffer until more
// bytes arrive. Each frame is copied into an owned *codec.Command before
// Discard, so nothing borrowed from gnet reaches a handler. A large frame
// (over LargeFrameBytes) is read into a buffer of its own once the read
// budget admits it, and the connection's reads pause while it waits
// (largeframe.go). A malformed or too large frame ends the input of this
// connection only (Server.malformed): the requests before it are still
// answered, then the connection closes. Replies given meanwhile are held
// and written together when it returns (hold.go).
func (s *Server) OnTraffic(gc gnet.Conn) gnet.Action {
	c := gc.Context().(*conn)
	c.observeOutbound(gc)
	c.holdReplies()
	a := s.onTraffic(c, gc)
	c.releaseHeld()
	return a
}

// onTraffic is OnTraffic while the connection holds its replies (hold.go).
func (s *Server) onTraffic(c *conn, gc gnet.Conn) gnet.Action {
	c.touch()
	if c.discarding {
		_, _ = gc.Discard(gc.InboundBuffered())
		return gnet.None
	}
	if !c.sniffed {
		if a, decided := s.sniff(c, gc); decided {
			return a
		}
	}
	for {
		if c.big != nil {
			if a, done := s.readLarge(c, gc); !done {
				return a
			}
			continue
		}
		head, err := gc.Peek(4)
		if err != nil {
			return gnet.None // fewer than 4 bytes buffered
		}
		if _, err := codec.PeekFrame(head, s.opts.MaxFrameBytes); err != nil {
			return s.malformed(c, gc, err)
		}
		size := int(binary.BigEndian.Uint32(head)) + 4 // PeekFrame checked 8 <= size <= max
		if size > LargeFrameBytes {
			ok, held := s.admit(c, gc, size)
			if !ok {
				return gnet.None // paused until the budget has room
			}
			c.startLarge(size, held)
			continue
		}
		if gc.InboundBuffered() < size {
			return gnet.None
		}
		frame, err := gc.Peek(size)
		if err != nil {
			return gnet.None
		}
		req, err := codec.DecodeFrameBorrowing(frame)
		if err != nil {
			return s.malformed(c, gc, err)
		}
		c.consumed += int64(size)
		if body := req.Body; len(body) > 0 && !req.IsResponse() && s.router.borrows(req.Code) {
			// The handler reads the body where gnet holds it; the bytes are
			// released only after it returned (gnet's Close is deferred to
			// a later loop task, so they stay in place until Discard).
			s.dispatch(c, req, 0)
			if s.opts.ScribbleBorrowedBodies {
				scribble(body)
			}
			_, _ = gc.Discard(size)
			continue
		}
		if len(req.Body) > 0 {
			req.Body = append([]byte(nil), req.Body...)
		}
		_, _ = gc.Discard(size)
		s.dispatch(c, req, 0)
	}
}

// scribble overwrites a borrowed body whose handler returned
// (ServerOptions.ScribbleBorrowedBodies).
func scribble(b []byte) {
	for i := range b {
		b[i] = 0xEE
	}
}

// dispatch runs the handler for req on the event loop. A response from the
// peer settles the Invoke waiting for it (invoke.go) and is otherwise
// ignored; unknown codes get REQUEST_CODE_NOT_SUPPORTED; while the
// server drains (Server.Drain), requests from clients newer than V5_3_1 get
// GO_AWAY (1500) without reaching their handler, and older clients'
// requests run as usual (a Java broker keeps serving them in its shutdown
// grace period); then ServerOptions.Guard may answer instead of the
// handler; a panicking handler is logged and answered with
// SYSTEM_ERROR instead of ending the loop. held is the read budget of a
// large frame: it returns when the request is answered (or its connection
// closes), at once for a response frame, after the handler for a oneway
// request.
func (s *Server) dispatch(c *conn, req *codec.Command, held int64) {
	if req.IsResponse() {
		// The budget goes back first: a settled answer (a ConsumerRunningInfo
		// with a jstack can pass LargeFrameBytes) owns its Body.
		s.budget.release(held)
		if !s.settleCall(c.id, req) {
			s.log.Debug().Uint64("conn", c.id).Int32("code", req.Code).Int32("opaque", req.Opaque).
				Msg("ignoring response frame from client")
		}
		return
	}
	r := &request{c: c, code: req.Code, opaque: req.Opaque, version: req.Version, oneway: req.IsOneway(), start: monoNanos()}
	if !r.oneway {
		r.owes.Store(true)
		c.owed.Add(1)
		if held > 0 {
			r.held.Store(held)
			c.trackHeld(r)
		}
	} else if held > 0 {
		defer s.budget.release(held)
	}
	h := s.router.Lookup(req.Code)
	if h == nil {
		_ = r.Reply(codec.NewResponse(req, codec.RequestCodeNotSupported,
			fmt.Sprintf(" request type %d not supported", req.Code)))
		return
	}
	if s.draining.Load() && SupportsGoAway(req.Version) {
		s.log.Debug().Uint64("conn", c.id).Int32("code", req.Code).Int32("opaque", req.Opaque).
			Msg("draining: answering GO_AWAY")
		_ = r.Reply(codec.NewResponse(req, codec.GoAway, goAwayRemark))
		return
	}
	if g := s.opts.Guard; g != nil {
		if resp := guard(g, r, req); resp != nil {
			_ = r.Reply(resp)
			return
		}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Uint64("conn", c.id).Int32("code", req.Code).Interface("panic", p).Msg("handler panicked")
			_ = r.Reply(codec.NewResponse(req, codec.SystemError, fmt.Sprintf("handler panic: %v", p)))
		}
	}()
	h(r, req)
	if b := s.opts.LoopBudget; b > 0 {
		if d := time.Duration(monoNanos() - r.start); d > b {
			s.log.Warn().Int32("code", req.Code).Dur("took", d).Dur("budget", b).Msg("handler ran too long on the event loop")
		}
	}
}

// guard runs g, answering SYSTEM_ERROR when it panics (odd input must
// not end the event loop).
func guard(g func(Conn, *codec.Command) *codec.Command, r *request, req *codec.Command) (resp *codec.Command) {
	defer func() {
		if p := recover(); p != nil {
			r.c.srv.log.Error().Int32("code", req.Code).Interface("panic", p).Msg("request guard panicked")
			resp = codec.NewResponse(req, codec.SystemError, fmt.Sprintf("guard panic: %v", p))
		}
	}()
	return g(r, req)
}

// request is the Conn a handler receives: a per-request view of the
// connection that drops replies to oneway requests, adapts GO_AWAY to the
// client's version (forClient), settles the connection's owed count with
// the first response, and records rocketmq_rpc_latency from dispatch to
// each Reply.
type request struct {
	c        *conn
	code     int32
	opaque   int32
	version  int32 // the request's version field (MQVersion ordinal)
	oneway   bool
	start    int64 // monoNanos at dispatch
	longPoll atomic.Bool
	owes     atomic.Bool  // not answered yet (never set for oneway requests)
	held     atomic.Int64 // read budget of a large request, returned by its answer (releaseHeld)
}

// Reply queues resp on the connection (see conn.reply), unless the request
// was oneway: then it returns nil and sends nothing. The first response
// returns the read budget of a large request. A GO_AWAY response to
// a client at or below V5_3_1 is sent as SYSTEM_BUSY (forClient).
func (r *request) Reply(resp *codec.Command) error {
	resp = forClient(resp, r.version)
	d := time.Duration(monoNanos() - r.start)
	m := r.c.srv.opts.Metrics
	if r.oneway {
		m.observeRPC(r.code, resp.Code, r.longPoll.Load(), resultOneway, d)
		return nil
	}
	settles := resp.IsResponse() && r.owes.CompareAndSwap(true, false)
	if settles {
		// Before the reply is sent: once it may reach the client (a direct
		// reply, direct.go, does before reply returns), the client may send
		// its next large frame against this budget.
		r.releaseHeld()
	}
	err := r.c.reply(resp, settles)
	result := resultSuccess
	if err != nil {
		result = resultWriteChannelFailed
	}
	m.observeRPC(r.code, resp.Code, r.longPoll.Load(), result, d)
	return err
}

// RemoteAddr is the peer address.
func (r *request) RemoteAddr() net.Addr { return r.c.remote }

// ID is the connection id.
func (r *request) ID() uint64 { return r.c.id }
