package remoting

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/popshim/popshim/codec"
)

// ServerOptions configures one Server. The zero value of each field means
// its documented default; WithDefaults fills them in.
type ServerOptions struct {
	// Name labels this server in logs and popshim_remoting_* metrics, e.g.
	// "broker" or "namesrv". Default "broker".
	Name string
	// Addr is the TCP listen address, host:port. ":0" or "127.0.0.1:0" picks
	// a free port; Server.Addr reports the bound one. Default ":10911".
	Addr string
	// MaxFrameBytes is the largest whole frame, 4-byte length prefix
	// included, that a client may send. A larger announced length closes the
	// connection (as Java's NettyDecoder does). Default codec.DefaultMaxFrame
	// (16 MiB).
	MaxFrameBytes int
	// IdleTimeout closes a connection that has neither received nor sent a
	// frame for this long (Java's serverChannelMaxIdleTimeSeconds, 120 s).
	// Zero means the default 120 s; a negative value disables the check.
	IdleTimeout time.Duration
	// EventLoops is the number of gnet event loops. Zero means one per
	// CPU (runtime.NumCPU, gnet's count).
	EventLoops int
	// MaxConns bounds the connections open at once on this Server (each
	// Server counts its own). A connection accepted while MaxConns are open
	// is closed in OnOpen before any of its bytes is read, counted in
	// popshim_remoting_connections_refused_total and logged (warn, at most
	// connLimitLogBurst lines per second). Zero means DefaultMaxConns
	// (10000); a negative value disables the bound. A Java broker has no
	// such bound.
	MaxConns int
	// MaxReadBytes bounds the bytes of large frames (over LargeFrameBytes)
	// this Server holds at once: frames being read, counted at their
	// announced size from the moment reading their body starts, plus
	// requests decoded from them and not answered yet (readbudget.go).
	// A connection whose next frame is large and does not fit stops being
	// read (its socket is left unread, so TCP flow control slows the
	// peer) until answers return enough budget; waiting connections are
	// admitted oldest first, and a frame larger than the bound alone is
	// read when nothing else is held. Small frames are never held back.
	// Each Server counts its own. Zero means DefaultMaxReadBytes; a
	// negative value disables the bound (every frame is read at once).
	MaxReadBytes int64
	// MaxReplyBytes bounds the reply bytes this Server holds for peers
	// that have not read them (gnet's outbound buffers, replyheld.go):
	// while they reach it, ReplyRoom is not positive and the broker reads
	// no message bodies for POP and PULL (broker.Settings.ReplyRoom).
	// Each Server counts its own. Zero means DefaultMaxReplyBytes; a
	// negative value disables the bound.
	MaxReplyBytes int64
	// Metrics receives per-request latency and connection counters. Nil
	// disables metrics. One Metrics may be shared by several servers.
	Metrics *Metrics
	// LoopBudget is how long a single HandlerFunc call may run on the event
	// loop before it is logged as slow (warn level, with its duration).
	// Zero means 10 ms; negative disables the warning.
	LoopBudget time.Duration
	// MalformedGrace bounds how long a connection whose input ended at a
	// malformed frame stays open for the replies still owed to the
	// requests decoded before that frame (they may come from another
	// goroutine, after a group-commit fsync). It closes as soon as those
	// replies were written, or after this long at the latest. Zero means
	// the default 5 s; a negative value closes at once, dropping them.
	MalformedGrace time.Duration
	// slowGrace replaces slowFrameGrace when non-zero (in-package tests:
	// a short one to see a slow frame closed, a long one where a test
	// trickles frames on purpose).
	slowGrace time.Duration
	// wrapListener, when set, wraps the bound listener before the accept
	// loop uses it (in-package tests inject accept errors with it).
	wrapListener func(net.Listener) net.Listener
	// acceptPause, when positive, replaces every accept back-off pause
	// (in-package tests hold the loop inside one pause for as long as
	// they need).
	acceptPause time.Duration
	// OnClose, when set, is told the Conn.ID of every connection that
	// closed (peer left, idle timeout, malformed frame, Stop), after later
	// Replies on it started failing with net.ErrClosed. It runs on the
	// connection's event loop and must not block: use it to drop client
	// registrations or parked polls of that connection.
	OnClose func(connID uint64)
	// TLS, when set, lets clients speak TLS on this port (tls.go): the
	// certificate, the CA pool and ClientAuth live in it. Nil means
	// TLSMode must be TLSDisabled: every connection is plaintext, exactly
	// as without TLS support.
	TLS *tls.Config
	// TLSMode is Java's tls.server.mode: TLSDisabled, TLSPermissive (a
	// connection whose first byte is 0x16 speaks TLS, any other plaintext,
	// both on one port) or TLSEnforcing (a plaintext connection is closed
	// after its first byte). The zero value is TLSDisabled.
	TLSMode TLSMode
	// TLSHandshakeTimeout bounds a TLS handshake, from the first byte
	// received to the handshake's end; a slower client is closed. Zero
	// means DefaultTLSHandshakeTimeout (Netty's SslHandler default, 10 s).
	TLSHandshakeTimeout time.Duration
	// Guard, when set, runs on the event loop before every request's
	// handler, after the unknown-code and GO_AWAY answers (where RocketMQ's
	// request pipeline runs: authentication, authorization). A non-nil
	// return is sent as the answer and the handler is not called. It must
	// not block. Nil lets every request through.
	Guard func(c Conn, req *codec.Command) *codec.Command
	// ScribbleBorrowedBodies, for tests, overwrites every borrowed Body
	// (Router.HandleBorrowing) with 0xEE bytes as soon as its handler has
	// returned, so a handler that keeps a borrowed body past its return
	// stores or answers garbage that tests see. Off in production.
	ScribbleBorrowedBodies bool
}

// Defaults applied by WithDefaults.
const (
	DefaultAddr        = ":10911"
	DefaultIdleTimeout = 120 * time.Second
	DefaultLoopBudget  = 10 * time.Millisecond
	// DefaultMalformedGrace is the default ServerOptions.MalformedGrace.
	DefaultMalformedGrace = 5 * time.Second
	// DefaultMaxConns is the default ServerOptions.MaxConns: far above
	// what clients of one broker open (a Java or Go client instance holds
	// one connection per broker address), far below what exhausts file
	// descriptors and per-connection buffers.
	DefaultMaxConns = 10000
	// DefaultMaxReadBytes is the default ServerOptions.MaxReadBytes: half
	// the default of popshim's --queue-max-bytes (256 MiB), as popshim's
	// --read-max-bytes defaults.
	DefaultMaxReadBytes = 128 << 20
	// DefaultMaxReplyBytes is the default ServerOptions.MaxReplyBytes, as
	// popshim's --reply-max-bytes defaults: half of --queue-max-bytes'
	// default.
	DefaultMaxReplyBytes = 128 << 20
	// DefaultTLSHandshakeTimeout is the default
	// ServerOptions.TLSHandshakeTimeout (Netty SslHandler's 10 s).
	DefaultTLSHandshakeTimeout = 10 * time.Second
)

// WithDefaults returns o with every zero field set to its default.
func (o ServerOptions) WithDefaults() ServerOptions {
	if o.Name == "" {
		o.Name = "broker"
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxFrameBytes == 0 {
		o.MaxFrameBytes = codec.DefaultMaxFrame
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.LoopBudget == 0 {
		o.LoopBudget = DefaultLoopBudget
	}
	if o.MalformedGrace == 0 {
		o.MalformedGrace = DefaultMalformedGrace
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxReadBytes == 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.MaxReplyBytes == 0 {
		o.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if o.TLSHandshakeTimeout == 0 {
		o.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	return o
}

// validate reports options that cannot work, after defaults were applied.
func (o ServerOptions) validate() error {
	if o.MaxFrameBytes < 8 {
		return fmt.Errorf("remoting: max frame %d bytes is below the 8-byte minimum frame", o.MaxFrameBytes)
	}
	if o.EventLoops < 0 {
		return fmt.Errorf("remoting: event loops %d < 0", o.EventLoops)
	}
	if o.TLSMode != TLSDisabled && o.TLS == nil {
		return fmt.Errorf("remoting: TLS mode %s needs a TLS config (certificate and key)", o.TLSMode)
	}
	if o.TLSMode == TLSDisabled && o.TLS != nil {
		return errors.New("remoting: a TLS config was given but the TLS mode is disabled")
	}
	if o.TLSMode > TLSEnforcing {
		return fmt.Errorf("remoting: unknown TLS mode %d", o.TLSMode)
	}
	return nil
}
