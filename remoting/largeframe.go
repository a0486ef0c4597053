package remoting

import (
	"encoding/binary"

	"github.com/panjf2000/gnet/v2"

	"github.com/popshim/popshim/codec"
)

// A large frame (more than LargeFrameBytes) is not left to accumulate in
// gnet's inbound buffer, which grows by doubling and would hold up to twice
// the frame plus the copies made while growing. Once its 4-byte length is
// buffered and the read budget admitted it (readBudget.acquire), the loop
// moves every byte gnet reads into a buffer of its own: LargeFrameBytes at
// first, so a peer that trickles a frame in costs what it sent, then one
// buffer of the frame's exact size. The decoded Command's Body is the tail
// of that buffer, so a body is copied once from gnet's read buffer (and
// its first 64 KiB once more). When the budget has no room, the
// connection's reads are paused until it has (readpause_linux.go) and the
// bytes already read stay in gnet's buffer.

// startLarge begins reading a large frame of size bytes on c, with held
// bytes of budget reserved for it. Loop goroutine.
func (c *conn) startLarge(size int, held int64) {
	c.big, c.bigSize, c.bigHeld = make([]byte, 0, min(size, LargeFrameBytes)), size, held
	if held > 0 {
		c.bigAnnounced.Store(int64(size))
		c.bigDeadline.Store(monoNanos() + int64(c.srv.slowFrameAllowance(size)))
	}
}

// readLarge moves buffered bytes into c.big. It reports done=true when
// the frame was complete and dispatched (the caller goes on with the next
// frame); otherwise the caller returns the action: gnet.None while more
// bytes are needed, or the malformed-frame action.
func (s *Server) readLarge(c *conn, gc gnet.Conn) (a gnet.Action, done bool) {
	for len(c.big) < c.bigSize {
		if len(c.big) == cap(c.big) {
			c.big = append(make([]byte, 0, c.bigSize), c.big...)
		}
		n, _ := gc.Read(c.big[len(c.big):cap(c.big)])
		if n == 0 {
			return gnet.None, false
		}
		c.big = c.big[:len(c.big)+n]
	}
	frame, held := c.big, c.bigHeld
	c.big, c.bigSize, c.bigHeld = nil, 0, 0
	c.bigDeadline.Store(0)
	req, err := decodeOwned(frame)
	if err != nil {
		s.budget.release(held)
		return s.malformedAt(c, gc, err, frame[:min(len(frame), snippetBytes)]), false
	}
	c.consumed += int64(len(frame))
	s.dispatch(c, req, held)
	return gnet.None, true
}

// decodeOwned decodes a whole frame held in a buffer that belongs to the
// caller alone, without copying its body: the header part is decoded by
// codec.DecodeFrame (which copies what it keeps), and the returned
// Command's Body is frame's tail. The frame's bytes are left as they were.
// Errors as codec.DecodeFrame.
func decodeOwned(frame []byte) (*codec.Command, error) {
	if len(frame) < 8 {
		return codec.DecodeFrame(frame)
	}
	hlen := int(binary.BigEndian.Uint32(frame[4:]) & 0xFFFFFF)
	if hlen > len(frame)-8 {
		return codec.DecodeFrame(frame) // reports the bad header length; copies nothing
	}
	length := binary.BigEndian.Uint32(frame)
	binary.BigEndian.PutUint32(frame, uint32(4+hlen))
	cmd, err := codec.DecodeFrame(frame[:8+hlen])
	binary.BigEndian.PutUint32(frame, length)
	if err != nil {
		return nil, err
	}
	if len(frame) > 8+hlen {
		cmd.Body = frame[8+hlen : len(frame) : len(frame)]
	}
	return cmd, nil
}

// admit decides whether c may read its next frame, a large one of size
// bytes: it reserves budget and resumes reads if they were paused, or
// queues c and pauses its reads. It reports whether the frame may be read
// now, and the budget reserved for it. A connection whose reads cannot be
// paused (epfd < 0) is admitted at once, counted beyond the bound. Loop
// goroutine.
func (s *Server) admit(c *conn, gc gnet.Conn, size int) (ok bool, held int64) {
	if !s.budget.enabled() {
		return true, 0
	}
	if c.epfd < 0 {
		s.budget.force(int64(size))
		return true, int64(size)
	}
	if s.budget.acquire(c, size) {
		if c.readPaused {
			s.resumeReads(c, gc)
		}
		return true, int64(size)
	}
	s.pauseReads(c, gc)
	return false, 0
}

// pauseReads stops the event loop reading c's socket. It is repeated on
// every OnTraffic of a waiting connection, since gnet re-adds read
// interest when its outbound buffer fills or drains. Loop goroutine.
func (s *Server) pauseReads(c *conn, gc gnet.Conn) {
	if err := setReadInterest(c.epfd, gc, false); err != nil {
		s.protoLog.Warn().Uint64("conn", c.id).Err(err).Msg("cannot pause reads")
	}
	if !c.readPaused {
		c.readPaused = true
		c.readWaiting.Store(true)
		s.paused.Add(1)
		s.gauges.pause()
	}
	buffered := gc.InboundBuffered()
	delta := int64(buffered - c.pausedBuf)
	s.pausedBuffered.Add(delta)
	s.gauges.addPausedBuffered(delta)
	c.pausedBuf = buffered
}

// resumeReads lets the event loop read c's socket again. Loop goroutine.
func (s *Server) resumeReads(c *conn, gc gnet.Conn) {
	if err := setReadInterest(c.epfd, gc, true); err != nil {
		s.protoLog.Warn().Uint64("conn", c.id).Err(err).Msg("cannot resume reads")
	}
	s.unpaused(c)
}

// unpaused updates the pause counters when c's reads resume or c closes.
// Loop goroutine.
func (s *Server) unpaused(c *conn) {
	if !c.readPaused {
		return
	}
	c.readPaused = false
	c.readWaiting.Store(false)
	s.paused.Add(-1)
	s.gauges.resume()
	s.pausedBuffered.Add(int64(-c.pausedBuf))
	s.gauges.addPausedBuffered(int64(-c.pausedBuf))
	c.pausedBuf = 0
}

// wake runs OnTraffic on c's loop (the budget admitted its waiting frame),
// unless c closed. It holds mu so no task is queued on a poller gnet
// already closed during Stop (see conn.reply). Any goroutine.
func (c *conn) wake() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		_ = c.gc.Wake(nil)
	}
}

// trackHeld records a dispatched large request whose budget is returned
// when it is answered or, at the latest, when c closes. Loop goroutine.
func (c *conn) trackHeld(r *request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.heldReqs == nil {
		c.heldReqs = make(map[*request]struct{})
	}
	c.heldReqs[r] = struct{}{}
}

// releaseHeld returns r's budget, once (the answer and the connection's
// close may race). Any goroutine.
func (r *request) releaseHeld() {
	n := r.held.Swap(0)
	if n == 0 {
		return
	}
	c := r.c
	c.mu.Lock()
	delete(c.heldReqs, r)
	c.mu.Unlock()
	c.srv.budget.release(n)
}

// closeReads returns everything c holds in the read budget when it
// closed: the frame it was reading, a grant not yet taken, its place in
// the queue and the budget of its unanswered large requests (their
// answers, if they still come, fail with net.ErrClosed anyway). Loop
// goroutine, from OnClose after markClosed.
func (s *Server) closeReads(c *conn) {
	s.unpaused(c)
	held := c.bigHeld
	c.big, c.bigSize, c.bigHeld = nil, 0, 0
	c.bigDeadline.Store(0)
	c.mu.Lock()
	for r := range c.heldReqs {
		held += r.held.Swap(0)
	}
	c.heldReqs = nil
	c.mu.Unlock()
	s.budget.forget(c, held)
}
