package remoting

import "time"

// Slow large frames. The read budget reserves a large frame's whole
// announced size when it admits the frame, so a few peers that announce
// large frames and then send them a few bytes a second held the budget
// for as long as they trickled, and every other connection's next large
// frame waited unread behind them with its reads paused (8 connections
// announcing 16 MiB against the default 128 MiB budget: no 100 KiB SEND
// answered in 20 s, 2026-12-05). A frame that holds budget must arrive
// within Server.slowFrameAllowance of its admission; once that has passed, and
// only while other connections wait for budget, the slow-frame scan closes
// its connection (a Warn line, popshim_remoting_slow_frame_closed_total),
// which returns the budget to the oldest waiter. A slow peer that blocks
// no one is left alone, and a closed one that reconnects queues behind
// those already waiting.

const (
	// slowFrameGrace is what every large frame is allowed beyond its
	// transfer at slowFrameRate.
	slowFrameGrace = 5 * time.Second
	// slowFrameRate is the slowest average rate, bytes per second, at
	// which a large frame that others wait behind may arrive: a 4 MiB
	// SEND has 9 s, a 16 MiB frame (the default --max-frame-size) 21 s.
	slowFrameRate = 1 << 20
)

// slowFrameAllowance returns how long a large frame of size bytes may take
// to arrive once admitted: slowFrameGrace (ServerOptions.slowGrace in
// tests) plus its transfer at slowFrameRate. Any goroutine.
func (s *Server) slowFrameAllowance(size int) time.Duration {
	grace := slowFrameGrace
	if s.opts.slowGrace != 0 {
		grace = s.opts.slowGrace
	}
	return grace + time.Duration(int64(size)*int64(time.Second)/slowFrameRate)
}

// closeSlowFrames closes the connections whose admitted large frame is
// past its deadline at now (monoNanos), when other connections wait for
// read budget. Ticker goroutine (OnTick); it only reads atomics and calls
// gnet.Conn.Close, which is safe from any goroutine.
func (s *Server) closeSlowFrames(now int64) {
	if !s.budget.enabled() {
		return
	}
	if _, waiting := s.budget.stats(); waiting == 0 {
		return
	}
	victims := s.connsWhere(func(c *conn) bool {
		d := c.bigDeadline.Load()
		return d != 0 && now > d && !c.scanClosing.Load()
	})
	for _, c := range victims {
		if !c.scanClosing.CompareAndSwap(false, true) {
			continue
		}
		size := c.bigAnnounced.Load()
		s.opts.Metrics.slowClose(s.opts.Name)
		s.log.Warn().Uint64("conn", c.id).Stringer("remote", c.remote).Int64("frame_bytes", size).
			Dur("allowed", s.slowFrameAllowance(int(size))).
			Msg("closing connection: a large frame holding read budget has not arrived in time while others wait for it")
		_ = c.gc.Close()
	}
}
