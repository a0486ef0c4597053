package grpcserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/popshim/popshim/broker"
)

// Config is everything the endpoint needs at construction. Build it from
// DefaultConfig and conf.Config (TLS from --tls-*, Settings.MaxBodyBytes
// from --max-message-size).
type Config struct {
	// TLSMode and TLSConfig: the port's TLS policy and the server
	// certificate (conf's TLS.ServerConfig); TLSConfig may be nil only with
	// TLSDisabled. "h2" is added to its ALPN protocols.
	TLSMode   TLSMode
	TLSConfig *tls.Config
	// HandshakeTimeout bounds the wait for a connection's first byte and
	// its TLS handshake (--tls-handshake-timeout). 0: unbounded.
	HandshakeTimeout time.Duration
	// MaxRecvMsgBytes is the largest request message accepted, bytes
	// (popshim: --grpc-max-recv-bytes, by default --max-message-size plus
	// RecvMsgMargin; the proxy's grpcMaxInboundMessageSize is 130 MiB,
	// which let a few connections hold gigabytes). A larger request is
	// refused by grpc-go before any handler runs: the client's call fails
	// with the gRPC status RESOURCE_EXHAUSTED ("grpc: received message
	// larger than max"), not a v2 Status. The v5 SDKs never send one: they
	// refuse a body over the Settings' max_body_size themselves.
	MaxRecvMsgBytes int
	// MaxSendInflightBytes bounds the bytes of decoded SendMessage
	// requests held at once, counted by proto.Size (popshim: the gRPC
	// port's share of --read-max-bytes, a budget of its own); a request
	// beyond it is answered TOO_MANY_REQUESTS at once. <= 0: no bound.
	MaxSendInflightBytes int64
	// IdleTimeout closes a connection with no RPC for this long (the proxy's
	// grpcClientIdleTimeMills, 120 s; an open Telemetry stream counts as an
	// RPC). 0: never.
	IdleTimeout time.Duration
	// KeepaliveTime and KeepaliveTimeout: the server pings a connection
	// silent for KeepaliveTime and closes it when the ping is not answered
	// within KeepaliveTimeout, so a vanished client's stream ends.
	KeepaliveTime, KeepaliveTimeout time.Duration
	// MaxConcurrentStreams bounds the calls one connection may have open at
	// once (Telemetry and ReceiveMessage streams included); a client
	// beyond it waits for a stream to end (grpc-go queues, nothing fails).
	// With MaxRecvMsgBytes it bounds what one connection can make the
	// endpoint buffer (popshim: --grpc-max-concurrent-streams,
	// DefaultMaxConcurrentStreams). 0: grpc-go's default (unbounded).
	MaxConcurrentStreams uint32
	// StreamWorkers is how many goroutines grpc-go keeps to run calls
	// (grpc.NumStreamWorkers): a call starts on an idle one, or on a new
	// goroutine when all are busy. A kept goroutine's stack has already
	// grown to what a call needs, where a new one grows it again on every
	// call (runtime.morestack was 7 % of the endpoint's CPU under
	// SendMessage load). 0: a new goroutine per call.
	StreamWorkers uint32
	// MinClientPingInterval is the shortest ping interval a client may use
	// (pings are allowed without active RPCs; the Java client pings every
	// 300 s even when idle). Faster pingers are closed, as grpc-go does.
	MinClientPingInterval time.Duration
	// Settings is the server's side of the Telemetry Settings reply.
	Settings SettingsPolicy
	// Logger receives connection-level and client-level events; nil: none.
	Logger *zerolog.Logger

	// Core is the broker core every data RPC calls (required): the
	// endpoint implements no operation itself.
	Core *broker.Broker
	// Send bounds what SendMessage accepts (DefaultSendLimits; MaxBodyBytes
	// from --max-message-size).
	Send SendLimits
	// Receive holds the ReceiveMessage rules (DefaultReceivePolicy).
	Receive ReceivePolicy
	// Leases holds the auto-renew rules for push consumers
	// (DefaultLeasePolicy).
	Leases LeasePolicy
	// Routes holds the rule that gives every broker of a route its gRPC
	// endpoint (see RouteEndpoints).
	Routes RouteEndpoints
	// Auth checks the caller of each RPC; nil: every call is allowed.
	Auth Authenticator
	// Metrics records per-RPC latency and the endpoint's own series; nil:
	// nothing is recorded.
	Metrics *Metrics
}

// DefaultConfig returns plaintext with the proxy's limits and the
// proxy's Settings defaults.
func DefaultConfig() Config {
	return Config{
		HandshakeTimeout:      10 * time.Second,
		MaxRecvMsgBytes:       4<<20 + RecvMsgMargin,
		MaxSendInflightBytes:  128 << 20,
		IdleTimeout:           120 * time.Second,
		KeepaliveTime:         2 * time.Minute,
		KeepaliveTimeout:      20 * time.Second,
		MinClientPingInterval: 10 * time.Second,
		MaxConcurrentStreams:  DefaultMaxConcurrentStreams,
		StreamWorkers:         DefaultStreamWorkers,
		Settings:              DefaultSettingsPolicy(),
		Send:                  DefaultSendLimits(),
		Receive:               DefaultReceivePolicy(),
		Leases:                DefaultLeasePolicy(),
	}
}

// RecvMsgMargin is what Config.MaxRecvMsgBytes allows beyond the largest
// body by default: a message's properties (at most 16 KiB of user
// properties, SendLimits.MaxUserPropertyBytes), system properties and the
// request's envelope, with room to spare.
const RecvMsgMargin = 1 << 20

// DefaultMaxConcurrentStreams is Config.MaxConcurrentStreams' default:
// above the bench's 32 sends per connection and a push consumer's
// ReceiveMessage long polls (one per assigned queue), while one
// connection can hold at most 256 × MaxRecvMsgBytes of requests being
// read.
const DefaultMaxConcurrentStreams = 256

// DefaultStreamWorkers is Config.StreamWorkers' default: more than the
// calls a loaded endpoint has in flight (the bench's 4 connections × 32
// sends), so a call rarely needs a new goroutine.
const DefaultStreamWorkers = 256

// Server is the RocketMQ 5 gRPC endpoint: a grpc-go server carrying
// apache.rocketmq.v2.MessagingService. New builds it, Serve runs it on a
// listener, GracefulStop or Stop ends it.
type Server struct {
	grpc     *grpc.Server
	svc      *service
	stopOnce sync.Once
	stopping chan struct{}
}

// New builds the endpoint from cfg. Errors: no Core, a TLS mode other than
// disabled without a TLS config. Call from the goroutine that assembles
// the process. No goroutine runs until Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Core == nil {
		return nil, errors.New("grpcserver: Config.Core is required")
	}
	creds, err := newSniffCreds(cfg.TLSMode, cfg.TLSConfig, cfg.HandshakeTimeout)
	if err != nil {
		return nil, err
	}
	log := zerolog.Nop()
	if cfg.Logger != nil {
		log = cfg.Logger.With().Str("component", "grpc").Logger()
	}
	s := &Server{stopping: make(chan struct{})}
	s.svc = newService(cfg, s.stopping, log)
	now := cfg.Core.Now()
	for _, id := range s.svc.leases.restore() {
		s.svc.clients.heartbeat(id, now)
	}
	creds.onOpen, creds.onClose = s.svc.connOpened, s.svc.connClosed
	creds.mismatch = &mismatchLog{log: log}
	opts := []grpc.ServerOption{
		grpc.Creds(creds),
		grpc.ForceServerCodecV2(newWireCodec()),
		grpc.ChainUnaryInterceptor(s.svc.unaryInterceptor),
		grpc.ChainStreamInterceptor(s.svc.streamInterceptor),
		grpc.MaxRecvMsgSize(cfg.MaxRecvMsgBytes),
		// Fixed stream windows (no BDP estimation): a request is let in
		// whole only once its handler reads it, through the read gate
		// (readgate.go). The connection's window only paces bytes in
		// transit (grpc-go returns it as bytes arrive, read or not).
		grpc.InitialWindowSize(grpcWindowBytes),
		grpc.InitialConnWindowSize(grpcConnWindowBytes),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: cfg.IdleTimeout,
			Time:              cfg.KeepaliveTime,
			Timeout:           cfg.KeepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             cfg.MinClientPingInterval,
			PermitWithoutStream: true,
		}),
	}
	if cfg.HandshakeTimeout > 0 {
		opts = append(opts, grpc.ConnectionTimeout(cfg.HandshakeTimeout))
	}
	if cfg.StreamWorkers > 0 {
		opts = append(opts, grpc.NumStreamWorkers(cfg.StreamWorkers))
	}
	if cfg.MaxConcurrentStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(cfg.MaxConcurrentStreams))
	}
	s.grpc = grpc.NewServer(opts...)
	s.grpc.RegisterService(gatedServiceDesc(s.svc.reads), s.svc)
	return s, nil
}

// Serve accepts connections on lis until GracefulStop or Stop, then
// returns nil; any other return is the listener's fatal error. lis is
// closed when Serve returns. Blocks; call it on its own goroutine.
func (s *Server) Serve(lis net.Listener) error {
	if tcp, ok := lis.Addr().(*net.TCPAddr); ok {
		s.svc.routes.setBoundPort(tcp.Port)
	}
	s.svc.startBackground()
	defer s.svc.stopBackground()
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	select {
	case <-s.stopping:
		return nil
	default:
	}
	if err != nil {
		return fmt.Errorf("grpcserver: serve %s: %w", lis.Addr(), err)
	}
	return nil
}

// GracefulStop stops accepting connections, sends GOAWAY, ends the open
// Telemetry streams (they never end by themselves) and the parked
// ReceiveMessage polls (answered MESSAGE_NOT_FOUND), and waits for the
// running RPCs to finish; then it saves the push consumers' leases in the
// store for the next start (leases_keep.go; if that write fails it makes
// their messages visible again, LeasePolicy.ReleaseInvisible) and waits
// for the write. Call it before the core and its writer close. When
// ctx ends first, the remaining connections are closed at once (Stop) and
// ctx's error is returned. Any goroutine; later calls return at once.
func (s *Server) GracefulStop(ctx context.Context) error {
	s.markStopping()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
		err = ctx.Err()
	}
	if kerr := s.svc.leases.keep(ctx); err == nil {
		err = kerr
	}
	return err
}

// Stop closes every connection and listener at once; running RPCs see
// their streams fail. Leases are not released (their messages come back
// after their invisible time). Any goroutine.
func (s *Server) Stop() {
	s.markStopping()
	s.grpc.Stop()
}

func (s *Server) markStopping() { s.stopOnce.Do(func() { close(s.stopping) }) }

// ClientSettings returns the last Settings item the client with this
// x-mq-client-id sent on a Telemetry stream, false when none is known.
// The result must not be modified. Any goroutine.
func (s *Server) ClientSettings(clientID string) (*v2.Settings, bool) {
	return s.svc.clients.Settings(clientID)
}

// TelemetryStreams returns the number of open Telemetry streams. Any goroutine.
func (s *Server) TelemetryStreams() int { return s.svc.clients.streams() }

// ErrNoTelemetry is PushCommand's error for a client without an open
// Telemetry stream.
var ErrNoTelemetry = errors.New("grpcserver: the client has no open Telemetry stream")

// PushCommand writes cmd on the open Telemetry stream of client id: the
// commands a server initiates (PrintThreadStackTraceCommand,
// VerifyMessageCommand, ReconnectEndpointsCommand; the transaction checks
// queue their RecoverOrphanedTransactionCommand without waiting, see
// ServeTransactionChecks; the admin calls of ServeClientCalls queue
// theirs with a nonce). Answers to a command pushed here match no pending
// call and are dropped. Errors: ErrNoTelemetry, or the stream's write error.
// Any goroutine; it waits while the stream's flow control holds the write.
func (s *Server) PushCommand(id string, cmd *v2.TelemetryCommand) error {
	ts := s.svc.clients.stream(id)
	if ts == nil {
		return ErrNoTelemetry
	}
	return ts.send(cmd)
}
