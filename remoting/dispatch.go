package remoting

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/popshim/popshim/codec"
)

// snippetBytes is how many bytes of a malformed frame are logged, in hex.
const snippetBytes = 32

// OnTraffic decodes every whole frame buffered on the connection and
// dispatches it; a partial frame stays in gnet's inbound buffer until more
// bytes arrive. Each frame is copied into an owned *codec.Command before
// Discard, so nothing borrowed from gnet reaches a handler. A malformed or
// too large frame closes this connection only.
func (s *Server) OnTraffic(gc gnet.Conn) gnet.Action {
	c := gc.Context().(*conn)
	c.touch()
	for {
		head, err := gc.Peek(4)
		if err != nil {
			return gnet.None // fewer than 4 bytes buffered
		}
		if _, err := codec.PeekFrame(head, s.opts.MaxFrameBytes); err != nil {
			s.malformed(c, gc, err)
			return gnet.Close
		}
		size := int(binary.BigEndian.Uint32(head)) + 4 // PeekFrame checked 8 <= size <= max
		if gc.InboundBuffered() < size {
			return gnet.None
		}
		frame, err := gc.Peek(size)
		if err != nil {
			return gnet.None
		}
		req, err := codec.DecodeFrame(frame)
		if err != nil {
			s.malformed(c, gc, err)
			return gnet.Close
		}
		_, _ = gc.Discard(size)
		c.consumed += int64(size)
		s.dispatch(c, req)
	}
}

// malformed logs a protocol error with the stream offset of the frame, the
// reason and a hex snippet of its first bytes, and counts it.
func (s *Server) malformed(c *conn, gc gnet.Conn, err error) {
	n := min(gc.InboundBuffered(), snippetBytes)
	snippet, _ := gc.Peek(n)
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
		Msg("malformed frame; closing connection")
}

// dispatch runs the handler for req on the event loop. Responses from the
// peer are ignored; unknown codes get REQUEST_CODE_NOT_SUPPORTED; a panicking
// handler is logged and answered with SYSTEM_ERROR instead of ending the loop.
func (s *Server) dispatch(c *conn, req *codec.Command) {
	if req.IsResponse() {
		s.log.Debug().Uint64("conn", c.id).Int32("code", req.Code).Int32("opaque", req.Opaque).
			Msg("ignoring response frame from client")
		return
	}
	r := &request{c: c, code: req.Code, opaque: req.Opaque, oneway: req.IsOneway(), start: time.Now()}
	h := s.router.Lookup(req.Code)
	if h == nil {
		_ = r.Reply(codec.NewResponse(req, codec.RequestCodeNotSupported,
			fmt.Sprintf(" request type %d not supported", req.Code)))
		return
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Uint64("conn", c.id).Int32("code", req.Code).Interface("panic", p).Msg("handler panicked")
			_ = r.Reply(codec.NewResponse(req, codec.SystemError, fmt.Sprintf("handler panic: %v", p)))
		}
	}()
	h(r, req)
	if b := s.opts.LoopBudget; b > 0 {
		if d := time.Since(r.start); d > b {
			s.log.Warn().Int32("code", req.Code).Dur("took", d).Dur("budget", b).Msg("handler ran too long on the event loop")
		}
	}
}

// request is the Conn a handler receives: a per-request view of the
// connection that drops replies to oneway requests and records
// rocketmq_rpc_latency from dispatch to each Reply.
type request struct {
	c        *conn
	code     int32
	opaque   int32
	oneway   bool
	start    time.Time
	longPoll atomic.Bool
}

// Reply queues resp on the connection (see conn.reply), unless the request
// was oneway: then it returns nil and sends nothing.
func (r *request) Reply(resp *codec.Command) error {
	d := time.Since(r.start)
	m := r.c.srv.opts.Metrics
	if r.oneway {
		m.observeRPC(r.code, resp.Code, r.longPoll.Load(), resultOneway, d)
		return nil
	}
	err := r.c.reply(resp)
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
