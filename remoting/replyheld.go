package remoting

import (
	"math"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// Reply bytes held for peers that do not read. A reply that the socket
// does not take at once stays in gnet's outbound buffer of its connection
// until the peer reads. POP and PULL answers carry up to 16 MiB each, so
// consumers that stop reading (a frozen process, a saturated link, or a
// flood of connections that each send one POP and never read) made the
// server hold one answer per connection: 200 such connections each
// popping 15 MiB of 1 MiB messages took popshim to 1.39 GB of RSS
// (2026-12-07), whatever --queue-max-bytes said; only the per-connection
// maxOutboundBytes (64 MiB) closed anything.
//
// A reply frame of at least LargeFrameBytes counts from its encoding until
// it was written or handed to gnet (replyFrames, released by putFrame).
// Each connection's outbound bytes are looked at on its event loop after
// every write callback, at every OnTraffic and, while they are not zero,
// by a loop task the ticker queues every outboundPollEvery; the Server
// keeps their sum (replyOutbound). Counting outbound bytes alone let 400
// connections' POPs pass a 128 MiB bound with 304 MiB: readers encode
// answers faster than the loops copy them. ReplyRoom is
// ServerOptions.MaxReplyBytes minus both sums, and the broker reads no
// message bodies for a POP or PULL
// while it is not positive (broker.Settings.ReplyRoom): those wait, then
// answer empty at the end of their poll, as if nothing had come. So that
// peers that never read cannot keep every other consumer waiting, a
// connection whose outbound bytes have not shrunk for slowReplyGrace is
// closed while the bound is reached (a Warn line,
// popshim_remoting_slow_reply_closed_total); its POPs come back after
// their invisibleTime, as for any client that goes away. A client that
// reads at all, however slowly, shrinks its bytes between two looks; the
// grace does not grow with what it holds (with 5 s plus 1 s per MiB, as
// slow frames get, stuck connections that had several POPs answered kept
// a healthy consumer's POPs empty for 31 s, 2026-12-07).

// slowReplyGrace is how long a connection's outbound bytes may stay
// without shrinking while the reply bound is reached.
const slowReplyGrace = 3 * time.Second

// outboundPollEvery is how often the ticker asks each connection with
// outbound bytes to look at them again while any are held.
const outboundPollEvery = 100 * time.Millisecond

// ReplyRoom returns how many more bytes of replies this Server may hold
// for peers that have not read them: ServerOptions.MaxReplyBytes minus the
// bytes in its connections' outbound buffers as last seen; may be
// negative; math.MaxInt64 when the bound is off. Any goroutine.
func (s *Server) ReplyRoom() int64 {
	if s.opts.MaxReplyBytes < 0 {
		return math.MaxInt64
	}
	return s.opts.MaxReplyBytes - s.HeldReplyBytes()
}

// publishReplyHeld sets popshim_remoting_reply_held_bytes to
// HeldReplyBytes; called at every change of the outbound sum and every
// tick, so frames counted between them show at the next. Any goroutine.
func (s *Server) publishReplyHeld() {
	if s.replyGauge != nil {
		s.replyGauge.Set(float64(s.HeldReplyBytes()))
	}
}

// countReply counts f, just encoded, in replyFrames when it is a large
// reply and the bound is on. Any goroutine.
func (s *Server) countReply(f *frameBuf) {
	if n := int64(len(f.b)); n >= LargeFrameBytes && s.opts.MaxReplyBytes >= 0 {
		f.held, f.heldN = &s.replyFrames, n
		s.replyFrames.Add(n)
	}
}

// HeldReplyBytes returns the reply bytes this Server holds for peers: large
// reply frames not yet written or handed to gnet, and outbound bytes as
// last seen (0 when MaxReplyBytes is negative). The stack's memory limit
// counts them as held frames, not as broker state. Any goroutine.
func (s *Server) HeldReplyBytes() int64 { return s.replyFrames.Load() + s.replyOutbound.Load() }

// observeOutbound records how many bytes gnet's outbound buffer of the
// connection holds now. Loop goroutine.
func (c *conn) observeOutbound(gc gnet.Conn) {
	c.setOutbound(int64(gc.OutboundBuffered()))
}

// setOutbound moves c's share of Server.replyOutbound to n and notes when
// it last shrank or started. Loop goroutine (OnClose calls it with 0).
func (c *conn) setOutbound(n int64) {
	old := c.outbound
	if n == old || c.srv.opts.MaxReplyBytes < 0 {
		return
	}
	c.outbound = n
	c.srv.replyOutbound.Add(n - old)
	c.srv.publishReplyHeld()
	if n > 0 && (old == 0 || n < old) {
		c.outboundSince.Store(monoNanos())
	}
	c.outboundHeld.Store(n)
}

// pollOutbound queues, for every connection whose outbound bytes were not
// zero when last seen, a loop task that looks at them again (gnet drains
// the buffer on the loop without telling the handler). Reports whether
// any was queued. Ticker goroutine (OnTick).
func (s *Server) pollOutbound() bool {
	if s.opts.MaxReplyBytes < 0 {
		return false
	}
	s.publishReplyHeld()
	held := s.connsWhere(func(c *conn) bool { return c.outboundHeld.Load() > 0 })
	for _, c := range held {
		// An empty writev: gnet appends nothing and runs the callback on
		// the connection's loop, where OutboundBuffered may be read.
		_ = c.gc.AsyncWritev(nil, func(gc gnet.Conn, err error) error {
			if err == nil { // closed: OnClose already dropped its share
				c.observeOutbound(gc)
			}
			return nil
		})
	}
	return len(held) > 0
}

// closeSlowReaders closes the connections whose outbound bytes have not
// shrunk within slowReplyGrace (ServerOptions.slowGrace in tests), when
// ReplyRoom is not positive at now (monoNanos). Ticker goroutine (OnTick); it reads atomics and calls
// gnet.Conn.Close, which is safe from any goroutine.
func (s *Server) closeSlowReaders(now int64) {
	if s.ReplyRoom() > 0 {
		return
	}
	grace := slowReplyGrace
	if s.opts.slowGrace != 0 {
		grace = s.opts.slowGrace
	}
	victims := s.connsWhere(func(c *conn) bool {
		return c.outboundHeld.Load() > 0 && now-c.outboundSince.Load() > int64(grace) && !c.scanClosing.Load()
	})
	for _, c := range victims {
		if !c.scanClosing.CompareAndSwap(false, true) {
			continue
		}
		n := c.outboundHeld.Load()
		s.opts.Metrics.slowReplyClose(s.opts.Name)
		s.log.Warn().Uint64("conn", c.id).Stringer("remote", c.remote).Int64("outbound_bytes", n).
			Dur("allowed", grace).Int64("reply_max_bytes", s.opts.MaxReplyBytes).
			Msg("closing connection: its peer has not read its replies in time while they hold the reply bound")
		_ = c.gc.Close()
	}
}
