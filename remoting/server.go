package remoting

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Server is a multicore gnet TCP server for the remoting protocol. Build it
// with NewServer, then Start; Stop ends it. A Server runs once.
type Server struct {
	gnet.BuiltinEventEngine

	opts   ServerOptions
	router *Router
	log    zerolog.Logger
	// protoLog logs malformed frames (and connections closed because their
	// owed replies did not come within MalformedGrace) at most
	// malformedLogBurst lines per second, so a peer sending garbage cannot
	// flood the log (the malformed_frames_total counter still counts every
	// one).
	protoLog zerolog.Logger
	// limitLog logs connections refused by MaxConns, at most
	// connLimitLogBurst lines per second (its own budget, so a connection
	// flood does not hide malformed-frame lines, nor the reverse).
	limitLog zerolog.Logger

	// acceptLog logs accept errors (accept.go), at most acceptLogBurst
	// lines per second.
	acceptLog zerolog.Logger

	started  atomic.Bool
	startMu  sync.Mutex    // held by Start throughout, so shutdown sees its outcome
	stopOnce sync.Once     // starts shutdown once
	done     chan struct{} // closed when the event loops stopped, or when Start failed
	runErr   error         // valid after done is closed

	// Accepting (accept.go).
	stopAccept   chan struct{} // closed by shutdown: ends the accept loop's back-off pause
	acceptDone   chan struct{} // closed when the accept loop returned
	acceptErrors atomic.Uint64 // accept and enrollment errors, for tests

	flushes atomic.Uint64 // AsyncWritev calls made, for tests of reply coalescing
	// directReplies counts replies sent (whole or in part) by direct.go's
	// send, for its tests.
	directReplies atomic.Uint64
	// heldSends counts the sendmsg calls that wrote held replies (hold.go
	// sendPendingLocked), for its tests.
	heldSends atomic.Uint64
	// scope is the open ReplyScope, nil when none (hold.go).
	scope     atomic.Pointer[ReplyScope]
	directCtr prometheus.Counter // popshim_remoting_direct_replies_total; nil without metrics
	draining  atomic.Bool        // set by Drain: GO_AWAY to new clients

	// replyOutbound is the sum of the connections' outbound bytes as last
	// seen (replyheld.go); replyGauge publishes it (nil without Metrics).
	replyOutbound atomic.Int64
	replyFrames   atomic.Int64 // large reply frames encoded, not yet written or handed to gnet
	replyGauge    prometheus.Gauge

	// Read budget (readbudget.go, largeframe.go, readpause_linux.go).
	budget         readBudget
	gauges         *readGauges  // nil without Metrics
	paused         atomic.Int64 // connections whose reads are paused
	pausedBuffered atomic.Int64 // bytes gnet holds for paused connections
	epollMu        sync.Mutex
	epolls         map[gnet.EventLoop]int // REQUIRES: epollMu held. Event loop → its epoll fd, -1 unknown.

	mu   sync.Mutex
	ln   net.Listener // set by a successful Start. REQUIRES: startMu or mu held.
	cli  *gnet.Client // the event loops, no listener; set by a successful Start. REQUIRES: startMu or mu held.
	addr net.Addr
	// conns holds every accepted connection from OnOpen to OnClose, for
	// the idle scan and the MaxConns bound (its length is the open count).
	// Refused connections never enter it. REQUIRES: mu held.
	conns map[uint64]*conn

	calls calls // requests sent with Invoke, waiting for the client's answer

	// TLS sessions (tls_session.go): their goroutines run outside gnet,
	// so Stop ends and waits for them itself.
	tlsMu       sync.Mutex
	tlsSessions map[*tlsSession]struct{} // REQUIRES: tlsMu held
	tlsStopped  bool                     // REQUIRES: tlsMu held. No new sessions.
	tlsWG       sync.WaitGroup           // one per session, until its goroutines ended
}

// NewServer returns a server that dispatches through router, which must be
// fully built (it is read concurrently from then on). opts are completed
// with WithDefaults. log gets component=remoting and server=<Name>.
func NewServer(opts ServerOptions, router *Router, log zerolog.Logger) *Server {
	opts = opts.WithDefaults()
	l := log.With().Str("component", "remoting").Str("server", opts.Name).Logger()
	g := opts.Metrics.readGauges(opts.Name)
	return &Server{
		budget:   readBudget{limit: opts.MaxReadBytes, g: g},
		gauges:   g,
		epolls:   make(map[gnet.EventLoop]int),
		opts:     opts,
		router:   router,
		log:      l,
		protoLog: l.Sample(&zerolog.BurstSampler{Burst: malformedLogBurst, Period: time.Second}),
		limitLog: l.Sample(&zerolog.BurstSampler{Burst: connLimitLogBurst, Period: time.Second}),
		done:     make(chan struct{}),
		conns:    make(map[uint64]*conn),

		acceptLog:  l.Sample(&zerolog.BurstSampler{Burst: acceptLogBurst, Period: time.Second}),
		stopAccept: make(chan struct{}),
		acceptDone: make(chan struct{}),

		tlsSessions: make(map[*tlsSession]struct{}),
		directCtr:   opts.Metrics.directCounter(opts.Name),
		replyGauge:  opts.Metrics.replyGauge(opts.Name),
	}
}

// malformedLogBurst is how many malformed-frame lines are logged per second.
const malformedLogBurst = 10

// connLimitLogBurst is how many refused-connection lines (MaxConns) are
// logged per second.
const connLimitLogBurst = 10

// Start binds the listen address, starts the event loops and the accept
// loop (accept.go) and returns once the server accepts connections. It
// returns the bind or option error. Call it once, from any goroutine.
func (s *Server) Start() error {
	if s.started.Swap(true) {
		return errors.New("remoting: server already started")
	}
	s.startMu.Lock()
	defer s.startMu.Unlock()
	if err := s.opts.validate(); err != nil {
		return s.failStart(err)
	}
	ln, err := s.listen()
	if err != nil {
		return s.failStart(fmt.Errorf("remoting: listen %s: %w", s.opts.Addr, err))
	}
	if s.opts.wrapListener != nil {
		ln = s.opts.wrapListener(ln)
	}
	cli, err := gnet.NewClient(s,
		gnet.WithMulticore(true),
		gnet.WithNumEventLoop(s.opts.EventLoops),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(gnetLogger{log: s.log.With().Str("component", "gnet").Logger()}),
		gnet.WithTicker(s.opts.IdleTimeout > 0 || s.budget.enabled() || s.opts.MaxReplyBytes >= 0),
	)
	if err == nil {
		err = cli.Start()
	}
	if err != nil {
		_ = ln.Close() // nothing was accepted on it
		return s.failStart(fmt.Errorf("remoting: start event loops: %w", err))
	}
	s.mu.Lock()
	s.ln, s.cli, s.addr = ln, cli, ln.Addr()
	s.mu.Unlock()
	go s.acceptLoop(ln, cli)
	s.log.Info().Stringer("addr", ln.Addr()).Int("max_frame_bytes", s.opts.MaxFrameBytes).
		Dur("idle_timeout", s.opts.IdleTimeout).Int("max_conns", s.opts.MaxConns).Int64("max_read_bytes", s.opts.MaxReadBytes).
		Stringer("tls_mode", s.opts.TLSMode).Msg("remoting server listening")
	return nil
}

// failStart records err as the outcome Stop reports and returns it.
// REQUIRES: startMu held, by Start.
func (s *Server) failStart(err error) error {
	s.runErr = err
	close(s.done)
	return err
}

// Addr is the bound listen address (the real port when Addr asked for port
// 0). It is nil before Start returned successfully.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Stop closes the listener, ends the accept loop, closes every connection
// (OnClose runs for each; bytes already handed to gnet are flushed first),
// stops the event loops and waits until they ended, or until ctx is done
// (then it returns ctx.Err() and the shutdown continues in the
// background). Stop on a server that never started returns nil; Stop after
// a failed Start returns the Start error. Replies queued after Stop fail
// with net.ErrClosed. Callers that want in-flight work answered drain it
// (batch writer, parked polls) before calling Stop. Any goroutine; later
// calls wait for the same shutdown.
func (s *Server) Stop(ctx context.Context) error {
	if !s.started.Load() {
		return nil
	}
	s.stopOnce.Do(func() { go s.shutdown() })
	select {
	case <-s.done:
		return errors.Join(s.runErr, s.stopSessions(ctx))
	case <-ctx.Done():
		go func() { <-s.done; _ = s.stopSessions(context.Background()) }()
		return ctx.Err()
	}
}

// Drain starts the graceful shutdown of the remoting layer, as
// NettyRemotingServer.shutdown sets isShuttingDown in a Java broker: from
// now on a request whose version is above V5_3_1 (SupportsGoAway) is
// answered GO_AWAY (1500, remark "broker is shutting down; ...") without
// reaching its handler, unless its code is unknown (then
// REQUEST_CODE_NOT_SUPPORTED as always); oneway requests are dropped.
// Requests from older clients still reach their handlers. Replies to
// requests dispatched before Drain are not affected: a mutation accepted
// earlier still gets its real result. Connections stay open until Stop.
// Idempotent; any goroutine.
func (s *Server) Drain() {
	if !s.draining.Swap(true) {
		s.log.Info().Msg("draining: new requests from clients above V5_3_1 get GO_AWAY")
	}
}

// Draining reports whether Drain was called. Any goroutine.
func (s *Server) Draining() bool { return s.draining.Load() }

// OnOpen attaches a conn to the new connection, or closes it at once when
// MaxConns connections are already open. The check and the insertion into
// conns happen under one hold of mu, so the bound is exact across event
// loops. A refused connection gets no context, which is how OnClose (gnet
// calls it for that connection too) recognises it.
func (s *Server) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	s.mu.Lock()
	if open := len(s.conns); s.opts.MaxConns > 0 && open >= s.opts.MaxConns {
		s.mu.Unlock()
		s.opts.Metrics.connRefused(s.opts.Name)
		s.limitLog.Warn().Stringer("remote", gc.RemoteAddr()).Int("open", open).Int("max_conns", s.opts.MaxConns).
			Msg("connection refused: too many open connections")
		return nil, gnet.Close
	}
	c := newConn(s, gc)
	c.sniffed = s.opts.TLSMode == TLSDisabled
	if peer, ok := gc.Context().(*tlsPeer); ok {
		c.tls, c.remote, c.sniffed = peer, peer.remote, true
	}
	gc.SetContext(c)
	s.conns[c.id] = c
	s.mu.Unlock()
	c.epfd = s.loopEpoll(gc)
	s.opts.Metrics.connOpened(s.opts.Name, c.tls == nil)
	s.log.Debug().Uint64("conn", c.id).Stringer("remote", c.remote).Bool("tls", c.tls != nil).Msg("connection opened")
	return nil, gnet.None
}

// OnClose makes later replies on the connection fail with net.ErrClosed,
// removes it from the open count and fails the Invokes waiting on it. A connection OnOpen refused has no
// conn context and is ignored.
func (s *Server) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, ok := gc.Context().(*conn)
	if !ok {
		return gnet.None
	}
	c.markClosed()
	c.setOutbound(0)
	s.closeReads(c)
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
	s.failCalls(c.id)
	s.opts.Metrics.connClosed(s.opts.Name)
	if s.opts.OnClose != nil {
		s.opts.OnClose(c.id)
	}
	s.log.Debug().Uint64("conn", c.id).Stringer("remote", c.remote).AnErr("reason", err).
		Bool("handed_to_tls", c.handedOff).Msg("connection closed")
	return gnet.None
}

// connsWhere returns the open connections keep reports true for; keep
// runs under mu and must only read atomics. Any goroutine.
func (s *Server) connsWhere(keep func(*conn) bool) []*conn {
	var out []*conn
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// openConns is the number of accepted connections not yet closed (OnClose
// not yet run). Any goroutine.
func (s *Server) openConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// loopEpoll returns the epoll descriptor of gc's event loop, found on the
// loop's first connection (findLoopEpoll) and cached once found; -1 when
// the read budget is off or the descriptor cannot be found (then that
// connection's large frames are counted but its reads are never paused,
// a sampled warning says so, and the next connection looks again). Loop
// goroutine, from OnOpen.
func (s *Server) loopEpoll(gc gnet.Conn) int {
	if !s.budget.enabled() {
		return -1
	}
	el := gc.EventLoop()
	s.epollMu.Lock()
	defer s.epollMu.Unlock()
	if fd, ok := s.epolls[el]; ok {
		return fd
	}
	fd, err := findEpoll(gc.Fd())
	if err != nil {
		// Not remembered: the lookup reads /proc/self/fd, which fails with
		// EMFILE while the process is out of descriptors; the next
		// connection on this loop tries again, and only this one keeps
		// its reads unpausable.
		s.limitLog.Warn().Err(err).Msg("reads of this connection cannot be paused; large frames are counted but not held back")
		return -1
	}
	s.epolls[el] = fd
	return fd
}

// findEpoll is findLoopEpoll; tests replace it to make the lookup fail.
var findEpoll = findLoopEpoll

// readStats reports the read budget: bytes reserved, connections queued
// for it, connections whose reads are paused, bytes gnet holds for them.
// Any goroutine; for tests.
func (s *Server) readStats() (reserved int64, waiting int, paused, buffered int64) {
	reserved, waiting = s.budget.stats()
	return reserved, waiting, s.paused.Load(), s.pausedBuffered.Load()
}

// OnTick closes connections idle for longer than IdleTimeout, except those
// whose reads the server paused (the peer is not idle, the server is not
// reading it), and those whose large frame arrives too slowly while
// others wait for read budget (slowframe.go). gnet runs it on its own
// goroutine; it only reads atomics and calls gnet.Conn.Close, which is
// safe from any goroutine.
func (s *Server) OnTick() (time.Duration, gnet.Action) {
	now := monoNanos()
	s.closeSlowFrames(now)
	s.closeSlowReaders(now)
	next := time.Second
	if s.pollOutbound() {
		next = outboundPollEvery
	}
	idle := s.opts.IdleTimeout
	if idle <= 0 {
		return next, gnet.None
	}
	deadline := now - int64(idle)
	victims := s.connsWhere(func(c *conn) bool {
		return c.lastActive.Load() < deadline && !c.scanClosing.Load() && !c.readWaiting.Load()
	})
	for _, c := range victims {
		c.scanClosing.Store(true)
		s.opts.Metrics.idleClose(s.opts.Name)
		s.log.Info().Uint64("conn", c.id).Stringer("remote", c.remote).Dur("idle_timeout", idle).Msg("closing idle connection")
		_ = c.gc.Close()
	}
	return min(max(idle/4, 10*time.Millisecond), next), gnet.None
}
