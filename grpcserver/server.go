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
	// MaxRecvMsgBytes is the largest request message accepted (the proxy's
	// grpcMaxInboundMessageSize, 130 MiB; grpc-go's own default of 4 MiB is
	// below a 4 MiB body plus its envelope).
	MaxRecvMsgBytes int
	// IdleTimeout closes a connection with no RPC for this long (the proxy's
	// grpcClientIdleTimeMills, 120 s; an open Telemetry stream counts as an
	// RPC). 0: never.
	IdleTimeout time.Duration
	// KeepaliveTime and KeepaliveTimeout: the server pings a connection
	// silent for KeepaliveTime and closes it when the ping is not answered
	// within KeepaliveTimeout, so a vanished client's stream ends.
	KeepaliveTime, KeepaliveTimeout time.Duration
	// MinClientPingInterval is the shortest ping interval a client may use
	// (pings are allowed without active RPCs; the Java client pings every
	// 300 s even when idle). Faster pingers are closed, as grpc-go does.
	MinClientPingInterval time.Duration
	// Settings is the server's side of the Telemetry Settings reply.
	Settings SettingsPolicy
	// Logger receives connection-level and client-level events; nil: none.
	Logger *zerolog.Logger
}

// DefaultConfig returns plaintext with the proxy's limits and the
// proxy's Settings defaults.
func DefaultConfig() Config {
	return Config{
		HandshakeTimeout:      10 * time.Second,
		MaxRecvMsgBytes:       130 << 20,
		IdleTimeout:           120 * time.Second,
		KeepaliveTime:         2 * time.Minute,
		KeepaliveTimeout:      20 * time.Second,
		MinClientPingInterval: 10 * time.Second,
		Settings:              DefaultSettingsPolicy(),
	}
}

// Server is the RocketMQ 5 gRPC endpoint: a grpc-go server carrying
// apache.rocketmq.v2.MessagingService. New builds it, Serve runs it on a
// listener, GracefulStop or Stop ends it.
type Server struct {
	grpc     *grpc.Server
	svc      *service
	stopOnce sync.Once
	stopping chan struct{}
}

// New builds the endpoint from cfg. Errors: a TLS mode other than disabled
// without a TLS config. Call from the goroutine that assembles the process.
func New(cfg Config) (*Server, error) {
	creds, err := newSniffCreds(cfg.TLSMode, cfg.TLSConfig, cfg.HandshakeTimeout)
	if err != nil {
		return nil, err
	}
	log := zerolog.Nop()
	if cfg.Logger != nil {
		log = cfg.Logger.With().Str("component", "grpc").Logger()
	}
	s := &Server{stopping: make(chan struct{})}
	s.svc = &service{policy: cfg.Settings, clients: newClients(), stopping: s.stopping, log: log}
	opts := []grpc.ServerOption{
		grpc.Creds(creds),
		grpc.MaxRecvMsgSize(cfg.MaxRecvMsgBytes),
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
	s.grpc = grpc.NewServer(opts...)
	v2.RegisterMessagingServiceServer(s.grpc, s.svc)
	return s, nil
}

// Serve accepts connections on lis until GracefulStop or Stop, then
// returns nil; any other return is the listener's fatal error. lis is
// closed when Serve returns. Blocks; call it on its own goroutine.
func (s *Server) Serve(lis net.Listener) error {
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
// Telemetry streams (they never end by themselves) and waits for the
// running RPCs to finish. When ctx ends first, the remaining connections
// are closed at once (Stop) and ctx's error is returned. Any goroutine;
// later calls return at once.
func (s *Server) GracefulStop(ctx context.Context) error {
	s.markStopping()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
		return ctx.Err()
	}
}

// Stop closes every connection and listener at once; running RPCs see
// their streams fail. Any goroutine.
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
