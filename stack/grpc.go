package stack

import (
	"context"
	"fmt"
	"golang.org/x/net/netutil"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/grpcserver"
	"github.com/popshim/popshim/remoting"
)

// grpcEndpoint is the RocketMQ 5 gRPC endpoint of the process
// (--grpc-listen): the server, its listener and its Serve goroutine.
type grpcEndpoint struct {
	srv    *grpcserver.Server
	ln     net.Listener
	served chan error // Serve's result
	// removeChecks takes the endpoint out of the transaction check loop's
	// Checkers (grpcserver.Server.ServeTransactionChecks).
	removeChecks func()
	// removeCalls takes it out of the core's client callers
	// (grpcserver.Server.ServeClientCalls).
	removeCalls func()
}

// startGRPC starts the gRPC endpoint on --grpc-listen over the core of
// st.Broker, with the TLS policy and certificate of the remoting ports
// (--tls-mode, --tls-cert/--tls-key), --tls-handshake-timeout,
// --max-message-size as the largest body, --grpc-max-recv-bytes as the
// largest request, --timer-max-delay-sec as the farthest delivery
// timestamp, --grpc-max-concurrent-streams per connection, a
// SendMessage budget of --read-max-bytes of its own, the ACL verifier of the
// remoting ports, and its metrics in st.Registry (rpc latency in
// remoting's rocketmq_rpc_latency with protocol_type="grpc"). Once it
// serves, the core's transaction checks also reach v5 producers through
// it (RecoverOrphanedTransactionCommand), next to the remoting listener's,
// and mqadmin's 307 and 309 reach its v5 consumers (ServeClientCalls).
// An empty --grpc-listen leaves it off. Call after the broker listener is
// bound (routes name the advertised address).
func (st *Stack) startGRPC(cfg *conf.Config, log zerolog.Logger, reg prometheus.Registerer, labels prometheus.Labels, rm *remoting.Metrics) error {
	if cfg.GRPCListen == "" {
		return nil
	}
	tlsCfg, err := cfg.TLS.ServerConfig()
	if err != nil {
		return fmt.Errorf("stack: grpc: %w", err)
	}
	m, err := grpcserver.NewMetrics(reg, nil, rm.RPCLatency())
	if err != nil {
		return fmt.Errorf("stack: grpc metrics: %w", err)
	}
	gc := grpcserver.DefaultConfig()
	gc.TLSMode, gc.TLSConfig = cfg.TLS.TLSMode(), tlsCfg
	if cfg.TLS.HandshakeTimeout > 0 {
		gc.HandshakeTimeout = cfg.TLS.HandshakeTimeout
	}
	gc.Logger = &log
	gc.Core = st.Broker.Broker
	gc.Metrics = m
	gc.Send.MaxBodyBytes = cfg.MaxMessageSize
	gc.Settings.MaxBodyBytes = int32(min(cfg.MaxMessageSize, 1<<30))
	gc.MaxRecvMsgBytes = cfg.EffectiveGRPCMaxRecvBytes()
	// The broker's timer bound, as remoting's SEND follows it (the proxy's
	// own maxDelayTimeMills, 1 day, sits in front of a broker's 3 days).
	gc.Send.MaxDelay = time.Duration(cfg.TimerMaxDelaySec) * time.Second
	gc.MaxConcurrentStreams = uint32(cfg.GRPCMaxConcurrentStreams)
	gc.MaxSendInflightBytes = cfg.EffectiveReadMaxBytes()
	if st.Broker.Auth.Enabled() {
		gc.Auth = grpcserver.NewVerifierAuth(st.Broker.Auth)
	}
	srv, err := grpcserver.New(gc)
	if err != nil {
		return fmt.Errorf("stack: grpc: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.GRPCListen)
	if err != nil {
		return fmt.Errorf("stack: grpc listen %s: %w", cfg.GRPCListen, err)
	}
	if st.connLimit > 0 {
		ln = netutil.LimitListener(ln, st.connLimit) // fdlimit.go
	}
	st.grpc = &grpcEndpoint{srv: srv, ln: ln, served: make(chan error, 1)}
	go func(g *grpcEndpoint) { g.served <- g.srv.Serve(g.ln) }(st.grpc)
	st.grpc.removeChecks = srv.ServeTransactionChecks()
	st.grpc.removeCalls = srv.ServeClientCalls()
	return nil
}

// GRPCAddr is the bound gRPC listen address, "" when the endpoint is off.
func (st *Stack) GRPCAddr() string {
	if st.grpc == nil {
		return ""
	}
	return st.grpc.ln.Addr().String()
}

// GRPCServer is the gRPC endpoint (nil when off), for tests.
func (st *Stack) GRPCServer() *grpcserver.Server {
	if st.grpc == nil {
		return nil
	}
	return st.grpc.srv
}

// stopGRPC stops the gRPC endpoint gracefully within ctx (at least
// minReplyFlush): no new calls, parked receives answered, running calls
// finished, push-consumer leases released through the still open writer;
// then Serve's result. The endpoint leaves the transaction check loop
// first. Before the core and the writer close.
func (st *Stack) stopGRPC(ctx context.Context) error {
	if st.grpc == nil {
		return nil
	}
	if st.grpc.removeChecks != nil {
		st.grpc.removeChecks()
	}
	if st.grpc.removeCalls != nil {
		st.grpc.removeCalls()
	}
	gctx, cancel := atLeast(ctx, minReplyFlush)
	defer cancel()
	err := st.grpc.srv.GracefulStop(gctx)
	select {
	case serr := <-st.grpc.served:
		if err == nil {
			err = serr
		}
	case <-time.After(minReplyFlush):
	}
	if err != nil {
		return fmt.Errorf("grpc server: %w", err)
	}
	return nil
}
