package remoting

import (
	"container/list"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/popshim/popshim/codec"
)

// maxOutboundBytes closes a connection whose unsent reply bytes (gnet's
// outbound buffer) exceed this many bytes: the peer stopped reading and
// would otherwise make the server buffer without bound.
const maxOutboundBytes = 64 << 20

// maxIovec caps the frames handed to one AsyncWritev: gnet passes them to
// writev(2) as they are, and Linux rejects more than IOV_MAX (1024) entries
// with EINVAL.
const maxIovec = 512

// nextConnID numbers connections for the life of the process (Conn.ID).
var nextConnID atomic.Uint64

// conn is the server-side state of one TCP connection. It is created in
// OnOpen and stored as the gnet.Conn context.
//
// Fields marked "loop" are touched only on the connection's event loop
// goroutine. The reply queue is guarded by mu and may be used from any
// goroutine.
type conn struct {
	srv    *Server
	gc     gnet.Conn // AsyncWritev and Close are safe from any goroutine
	id     uint64
	remote net.Addr // copied at OnOpen: gnet clears its own copy on close
	// fd is the socket's descriptor, copied at OnOpen, for direct replies
	// (direct.go): written only under mu while !closed.
	fd int

	// lastActive is the time of the last frame read or reply queued, in
	// monoNanos; the idle scan reads it from the ticker goroutine.
	// scanClosing is set when the ticker's idle or slow-frame scan
	// (slowframe.go) closed the connection, so neither closes it twice.
	lastActive  atomic.Int64
	scanClosing atomic.Bool

	consumed int64 // loop: stream bytes consumed by the decoder, for error offsets

	// owed counts requests dispatched on this connection that are not
	// oneway and have not been answered yet. dispatch (loop) adds; the
	// first response Reply of each request subtracts, under mu, after its
	// frame was queued.
	owed atomic.Int64

	mu       sync.Mutex
	closed   bool        // REQUIRES: mu held
	flushing bool        // REQUIRES: mu held. One AsyncWritev is outstanding.
	pending  []*frameBuf // REQUIRES: mu held. Encoded, not yet handed to gnet.
	// loopHolds is set when gnet's outbound buffer held bytes at the last
	// write callback: direct replies (direct.go) wait until one finds it
	// empty. REQUIRES: mu held.
	loopHolds bool
	// holds counts who holds this connection's replies (hold.go): its
	// event loop while in OnTraffic, a ReplyScope (scoped set) while a
	// group commit's replies are given. REQUIRES: mu held.
	holds  int
	scoped bool
	// readStopped is set (on the loop) when a malformed frame ended the
	// input: the connection then closes once nothing is owed or being
	// written (settledLocked), or when grace fires. REQUIRES: mu held.
	readStopped bool
	closeSent   bool        // REQUIRES: mu held. gc.Close was requested after readStopped.
	grace       *time.Timer // REQUIRES: mu held. Bounds the wait after readStopped.

	discarding bool // loop: input ended at a malformed frame; later bytes are dropped

	// sniffed is set (loop) once the first byte was checked against the
	// server's TLSMode, or at OnOpen when no check is due (TLS disabled,
	// or this is the plaintext side of a TLS session).
	sniffed bool
	// handedOff is set (loop) when the connection's socket went to a TLS
	// session (handOff); OnClose then closes only gnet's descriptor.
	handedOff bool
	// tls is the client's TLS state when this connection is the plaintext
	// side of a TLS session, else nil. Set at OnOpen, read-only after.
	tls *tlsPeer

	// Owned by whoever holds the flushing token (set flushing=true under mu,
	// cleared only by the write callback): the frames gnet is writing now and
	// the iovec handed to AsyncWritev. The write callback touches them
	// without mu, which is safe because only one write is outstanding.
	inflight []*frameBuf
	iov      [][]byte
	flushAt  int64 // monoNanos when inflight was handed to gnet

	// Read budget (readbudget.go, largeframe.go). waitElem, want and
	// granted are guarded by srv.budget.mu: the queue entry while this
	// connection waits for room for its next large frame, that frame's
	// size, and the reservation made for it while it waited (taken by
	// the loop on its next OnTraffic).
	waitElem *list.Element
	want     int64
	granted  int64
	// heldReqs are the large requests dispatched on this connection whose
	// budget is not returned yet (their answer is owed); OnClose returns
	// it for them. REQUIRES: mu held.
	heldReqs map[*request]struct{}
	// readWaiting is set while the connection's reads are paused; the
	// idle scan (ticker goroutine) leaves such a connection open.
	readWaiting atomic.Bool

	epfd       int    // loop: epoll of the connection's event loop; -1 when reads cannot be paused
	readPaused bool   // loop: EPOLLIN is removed from the connection's registration
	pausedBuf  int    // loop: bytes gnet holds for this connection, as of its last pause
	big        []byte // loop: the bytes of the large frame being read so far; nil when none
	bigSize    int    // loop: that frame's size
	bigHeld    int64  // loop: budget reserved for it (0 when the budget is off)
	// bigDeadline is when the large frame being read, which holds read
	// budget, must have arrived (monoNanos; slowFrameAllowance), 0 when
	// none; bigAnnounced is that frame's size. The slow-frame scan
	// (ticker goroutine) reads them.
	bigDeadline  atomic.Int64
	bigAnnounced atomic.Int64

	// outbound is gnet's outbound buffer of this connection as last seen
	// (replyheld.go), its share of Server.replyOutbound. Loop goroutine.
	outbound int64
	// outboundHeld is outbound, for the ticker's poll and slow-reader
	// scan; outboundSince is when it last shrank or started (monoNanos).
	outboundHeld  atomic.Int64
	outboundSince atomic.Int64
}

func newConn(s *Server, gc gnet.Conn) *conn {
	c := &conn{srv: s, gc: gc, id: nextConnID.Add(1), remote: gc.RemoteAddr(), epfd: -1, fd: gc.Fd()}
	c.touch()
	return c
}

func (c *conn) touch() { c.lastActive.Store(monoNanos()) }

// reply encodes resp on the caller's goroutine and sends it. When it settles
// the last owed request and nothing else is queued, it is written to the
// socket at once (direct.go). Otherwise, if no write is outstanding, it hands
// everything pending to gnet in one AsyncWritev; else the frame leaves with
// the next flush, started by the write callback. settles marks the answer
// to an owed request (c.owed drops by one once the frame is queued).
// Returns net.ErrClosed when the connection is gone (the frame is dropped)
// or the error of AsyncWritev when the engine is shutting down.
//
// AsyncWritev is called with mu held: OnClose (markClosed) then cannot run
// between the closed check and the hand-off, so no task is ever queued on a
// poller that gnet has already closed during Stop. AsyncWritev only enqueues
// and never blocks.
func (c *conn) reply(resp *codec.Command, settles bool) error {
	f := getFrame()
	f.b = codec.AppendFrame(f.b, resp)
	c.srv.countReply(f)
	c.mu.Lock()
	defer c.mu.Unlock()
	if settles {
		c.owed.Add(-1)
	}
	if c.closed {
		putFrame(f)
		return net.ErrClosed
	}
	if c.holdLocked(f) {
		return nil
	}
	if c.sendDirectLocked(f) {
		c.touch()
		c.closeIfSettledLocked()
		return nil
	}
	c.pending = append(c.pending, f)
	if c.flushing {
		return nil
	}
	c.flushing = true
	c.takePending()
	c.touch()
	return c.flushLocked()
}

// flushLocked hands c.inflight to gnet. REQUIRES: mu held, the caller holds
// the flushing token and c.inflight is non-empty.
func (c *conn) flushLocked() error {
	iov := c.iov[:0]
	for _, f := range c.inflight {
		iov = append(iov, f.b[f.off:])
	}
	c.iov = iov
	c.flushAt = monoNanos()
	c.srv.flushes.Add(1)
	err := c.gc.AsyncWritev(iov, c.written)
	if err != nil {
		// The callback will never run: the engine refused the task.
		c.releaseInflight()
		c.closeLocked()
	}
	return err
}

// written is gnet's write callback; it runs on the event loop after the
// bytes were written or copied into gnet's outbound buffer, or with
// net.ErrClosed when the connection closed first. It returns the buffers to
// the pool and starts the next flush if replies queued up meanwhile.
func (c *conn) written(gc gnet.Conn, err error) error {
	c.srv.opts.Metrics.observeFlush(time.Duration(monoNanos() - c.flushAt))
	c.releaseInflight()
	held := gc.OutboundBuffered()
	if err == nil {
		c.setOutbound(int64(held))
	}
	if err != nil {
		c.srv.log.Debug().Uint64("conn", c.id).Err(err).Msg("reply write failed")
	} else if held > maxOutboundBytes {
		c.srv.log.Warn().Uint64("conn", c.id).Stringer("remote", c.remote).
			Int("outbound_bytes", gc.OutboundBuffered()).Msg("peer is not reading its replies; closing connection")
		_ = gc.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loopHolds = held > 0
	if c.closed || len(c.pending) == 0 {
		c.flushing = false
		c.closeIfSettledLocked()
		return nil
	}
	c.takePending()
	return c.flushLocked()
}

// takePending moves up to maxIovec pending frames to inflight, oldest
// first. REQUIRES: mu held, the caller holds the flushing token and
// inflight is empty.
func (c *conn) takePending() {
	if len(c.pending) <= maxIovec {
		c.inflight, c.pending = c.pending, c.inflight[:0]
		return
	}
	c.inflight = append(c.inflight[:0], c.pending[:maxIovec]...)
	rest := copy(c.pending, c.pending[maxIovec:])
	clear(c.pending[rest:])
	c.pending = c.pending[:rest]
}

// releaseInflight returns the frames of the finished write to the pool.
// REQUIRES: the caller holds the flushing token.
func (c *conn) releaseInflight() {
	for i, f := range c.inflight {
		putFrame(f)
		c.inflight[i] = nil
	}
	c.inflight = c.inflight[:0]
	for i := range c.iov {
		c.iov[i] = nil
	}
}

// markClosed makes later replies fail with net.ErrClosed and frees frames
// not yet handed to gnet. Frames in flight are freed by their callback.
func (c *conn) markClosed() {
	c.mu.Lock()
	c.closeLocked()
	c.mu.Unlock()
}

// closeLocked is markClosed with mu held.
func (c *conn) closeLocked() {
	c.closed = true
	if c.grace != nil {
		c.grace.Stop()
		c.grace = nil
	}
	for i, f := range c.pending {
		putFrame(f)
		c.pending[i] = nil
	}
	c.pending = c.pending[:0]
}
