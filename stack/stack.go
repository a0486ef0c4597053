package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler"
	"github.com/popshim/popshim/handler/guard"
	"github.com/popshim/popshim/handler/namesrv"
	"github.com/popshim/popshim/metrics"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/remoting"
)

// Stack is one running popshim process: store, writer, broker state, the
// broker and name-server listeners, the /metrics endpoint and the optional
// name-server registration. Build it with StartStack, stop it with Close.
// Serve is StartStack + wait + Close; tests use StartStack directly to learn
// the bound addresses.
type Stack struct {
	cfg *conf.Config
	log zerolog.Logger

	Registry *prometheus.Registry
	Store    *popstore.Store
	Writer   *batch.Writer
	Broker   *handler.Broker

	broker    *remoting.Server
	namesrv   *remoting.Server // nil when the embedded name server is off or shares the broker port
	metrics   *http.Server     // nil when --metrics-listen is empty
	metricsLn net.Listener
	// connLimit is the per-listener connection bound after fitting it to
	// the descriptor limit (brokerConnLimit); ≤ 0: none.
	connLimit int
	metricsWG chan struct{} // closed when the metrics server's Serve returned
	// metricsStop cancels the context of every in-flight metrics-listener
	// request at close: a /debug/pprof/ CPU profile or trace otherwise runs
	// for its ?seconds= and holds Shutdown until the shutdown timeout.
	metricsStop context.CancelFunc
	grpc        *grpcEndpoint       // nil when --grpc-listen is empty
	registrar   *namesrv.Registrar  // nil without --namesrv-addr
	routes      *namesrv.RouteCache // nil without --namesrv-addr

	closeOnce sync.Once
	closeErr  error
	closing   atomic.Bool // set when Close starts
}

// Serve runs popshim until ctx is done, then shuts down in order and
// returns. main.go calls exactly this. Start-up errors (store, writer,
// listeners) are returned at once with everything already started undone;
// shutdown errors are joined into the result, except a writer failure
// awaiting recovery, which is only logged (requestedStopResult). It first applies
// --gc-percent, --memory-limit and GOMAXPROCS (process-wide, so only here
// and not in StartStack; planMemoryLimit says how --memory-limit and
// GOMEMLIMIT combine, serveProcs how many Ps).
func Serve(ctx context.Context, cfg *conf.Config, log zerolog.Logger) error {
	if cfg.GCPercent > 0 {
		prev := debug.SetGCPercent(cfg.GCPercent)
		log.Debug().Int("gc_percent", cfg.GCPercent).Int("previous", prev).Msg("go gc target set")
	}
	plan := applyMemoryLimit(cfg, log)
	applyProcs(cfg, log)
	st, err := StartStack(cfg, log)
	if err != nil {
		return err
	}
	if plan.auto {
		lctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go newMemoryLimiter(plan.set, cfg.MemoryLimitCeiling(), gcPercent(), st.heldFrameBytes).run(lctx, done)
		defer func() { stop(); <-done }()
	}
	<-ctx.Done()
	log.Info().Msg("shutdown requested")
	timeout := cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return requestedStopResult(st.Close(sctx), log)
}

// StartStack opens the store in cfg.DataDir (with opts' WriteHook around
// every synced write, for tests that inject slowness or faults), starts the group-commit
// writer, builds the broker state, starts it, and starts the listeners:
//
//   - broker port (--listen): every broker code plus the name-server codes,
//     so a client whose namesrvAddr points at the broker port works too;
//   - name-server port (--namesrv-listen): the name-server codes only;
//     empty disables it, and a value equal to --listen shares the broker
//     port;
//   - /metrics (--metrics-listen, promhttp); empty disables it; with
//     --pprof also /debug/pprof/ (net/http/pprof) there;
//   - REGISTER_BROKER every --register-interval to each --namesrv-addr.
//
// The remoting listeners' --max-conns is first fitted to RLIMIT_NOFILE
// (fdlimit.go; a warning says when it was lowered). On error everything started so far is stopped again.
func StartStack(cfg *conf.Config, log zerolog.Logger, opts ...Option) (_ *Stack, err error) {
	var o stackOptions
	for _, opt := range opts {
		opt(&o)
	}
	st := &Stack{cfg: cfg, log: log, Registry: prometheus.NewRegistry()}
	defer func() {
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = st.Close(ctx)
		}
	}()
	st.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	sopts := StoreOptions(cfg, &log)
	sopts.WriteHook = o.writeHook
	if st.Store, err = popstore.Open(sopts); err != nil {
		return nil, err
	}
	mode, err := batch.ParseMode(cfg.PopWriteMode)
	if err != nil {
		return nil, err
	}
	retInterval := cfg.RetentionInterval
	if retInterval <= 0 {
		retInterval = -1
	}
	// Every broker series carries cluster, node_type and node_id, as the
	// Java broker's exporter adds them (BrokerMetricsManager.java).
	labels := prometheus.Labels{"cluster": cfg.ClusterName, "node_type": "broker", "node_id": cfg.BrokerName}
	reg := prometheus.WrapRegistererWith(labels, st.Registry)
	st.Writer, err = batch.New(st.Store, batch.Options{
		Mode: mode, SyncWorkers: cfg.SyncWorkers, MaxBatchOps: cfg.BatchMaxOps,
		MaxBatchBytes: cfg.BatchMaxBytes, LaneCapacity: cfg.QueueCapacity,
		BackgroundShare: cfg.BackgroundShare, MaxBulkOps: cfg.BatchMaxBulkOps,
		RetentionInterval: retInterval, Logger: &log,
		MaxQueuedBytes: cfg.QueueMaxBytes, MaxProduceWait: time.Duration(cfg.WaitTimeMillsInSendQueue) * time.Millisecond,
		ProbeInterval: cfg.WriterProbeInterval, DiskWarningRatio: cfg.DiskSpaceWarningLevelRatio,
		DiskCleanForciblyRatio: cfg.DiskSpaceCleanForciblyRatio,
	}, reg)
	if err != nil {
		return nil, err
	}
	if st.Broker, err = handler.NewBroker(cfg, log, st.Store, st.Writer, reg); err != nil {
		return nil, err
	}
	if err = reg.Register(clients.NewCollector(st.Broker.Clients, func() int { return len(st.Broker.Topics.All()) },
		func() int { return len(st.Store.GroupNames()) })); err != nil {
		return nil, fmt.Errorf("stack: table metrics: %w", err)
	}
	if err = reg.Register(metrics.NewConsumerLagCollector(st.Store)); err != nil {
		return nil, fmt.Errorf("stack: consumer lag metrics: %w", err)
	}
	rm, err := remoting.NewMetrics(st.Registry, labels)
	if err != nil {
		return nil, fmt.Errorf("stack: remoting metrics: %w", err)
	}
	brokerRouter := remoting.NewRouter()
	handler.RegisterBroker(brokerRouter, st.Broker)
	handler.RegisterNameServer(brokerRouter, st.Broker)
	if _, port, perr := net.SplitHostPort(cfg.Listen); perr == nil && port != "0" {
		st.Broker.Topics.SetBrokerAddr(cfg.BrokerAddr())
	}
	st.Broker.Start()
	if o.beforeListen != nil {
		o.beforeListen(st.Broker)
	}

	tlsCfg, err := cfg.TLS.ServerConfig()
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	bopts := BrokerServerOptions(cfg, rm)
	bopts.MaxConns = brokerConnLimit(cfg, bopts.MaxConns, st.namesrvOwnPort(), cfg.GRPCListen != "", log)
	st.connLimit = bopts.MaxConns
	bopts.OnClose = st.Broker.OnConnClose
	bopts.TLS = tlsCfg
	bopts.Guard = guard.New(st.Broker.Auth, log)
	bopts.ScribbleBorrowedBodies = o.scribble
	st.broker = remoting.NewServer(bopts, brokerRouter, log)
	st.Broker.Settings.ReplyRoom = st.broker.ReplyRoom
	st.Writer.SetCompletionScope(st.broker.ReplyScope())
	if err = st.broker.Start(); err != nil {
		return nil, err
	}
	st.Broker.ServeTransactionChecks(st.broker)
	st.Broker.ServeReplies(st.broker)
	st.Broker.ServeConsumerIDsChanges(st.broker)
	if tcp, ok := st.broker.Addr().(*net.TCPAddr); ok {
		st.Broker.Topics.SetBrokerAddr(cfg.BrokerAddrWithPort(tcp.Port))
	}
	if err = st.startGRPC(cfg, log, reg, labels, rm); err != nil {
		return nil, err
	}
	if st.namesrvOwnPort() {
		nsRouter := remoting.NewRouter()
		handler.RegisterNameServer(nsRouter, st.Broker)
		nopts := NamesrvServerOptions(cfg, rm)
		nopts.MaxConns = bopts.MaxConns // the same fitted share
		nopts.TLS = tlsCfg
		nopts.Guard = guard.New(st.Broker.Auth, log)
		st.namesrv = remoting.NewServer(nopts, nsRouter, log)
		if err = st.namesrv.Start(); err != nil {
			return nil, err
		}
	}
	if err = st.startHTTP(cfg, log); err != nil {
		return nil, err
	}
	if st.Broker.Registrar() != nil {
		st.registrar, st.routes = st.Broker.Registrar(), st.Broker.Routes()
		st.registrar.Start()
		st.routes.Start()
	}
	st.logServing(cfg, mode)
	return st, nil
}

// BrokerServer is the broker port's remoting server (nil before it is
// built): tests watch its drain state during shutdown.
func (st *Stack) BrokerServer() *remoting.Server { return st.broker }

// BrokerAddr is the bound broker listen address ("" before it is bound).
func (st *Stack) BrokerAddr() string { return addrString(st.broker) }

// NamesrvAddr is the bound name-server address: its own port when it has
// one, the broker port when they are shared, "" when disabled.
func (st *Stack) NamesrvAddr() string {
	switch {
	case st.namesrv != nil:
		return addrString(st.namesrv)
	case st.cfg.NamesrvListen != "":
		return st.BrokerAddr()
	}
	return ""
}

// namesrvOwnPort reports whether the name server gets its own listener:
// --namesrv-listen is set and is not literally the broker's --listen (two
// ":0" listens are two different ports).
func (st *Stack) namesrvOwnPort() bool {
	l, n := st.cfg.Listen, st.cfg.NamesrvListen
	if n == "" {
		return false
	}
	if _, port, err := net.SplitHostPort(n); err == nil && port == "0" {
		return true
	}
	return n != l
}

// MetricsAddr is the bound /metrics address, "" when disabled.
func (st *Stack) MetricsAddr() string {
	if st.metricsLn == nil {
		return ""
	}
	return st.metricsLn.Addr().String()
}

func addrString(s *remoting.Server) string {
	if s == nil || s.Addr() == nil {
		return ""
	}
	return s.Addr().String()
}

// Close shuts the stack down in this order and returns the joined errors:
//
//  0. both listeners drain (remoting.Server.Drain), as a Java broker's
//     graceful shutdown: from now on new requests from clients above
//     V5_3_1 are answered GO_AWAY (1500) and not executed; older clients'
//     requests still run, and a mutation the closed writer refuses is
//     answered SYSTEM_BUSY (2) with a "shutting down" remark;
//  1. the gRPC endpoint stops gracefully (GracefulStop: parked receives
//     answered, running calls finished, push-consumer leases released
//     through the writer), bounded by ctx;
//  2. name-server registration: UNREGISTER_BROKER to each name server;
//  3. Broker.Close: revive stops, parked long polls are answered, the
//     reader pool stops;
//  4. writer Close: everything accepted is written, fsynced and answered
//     with its real result while the connections are still open, so no
//     durable mutation loses its reply;
//  5. the name-server and broker listeners stop (bytes already handed to
//     gnet are flushed, then every connection closes);
//  6. the /metrics server;
//  7. the store (WAL synced, RocksDB closed).
//
// ctx bounds the listener and metrics shutdowns, except that the listeners
// always get at least minReplyFlush (1 s) to write replies already queued. Safe on a partly started
// stack; later calls return the first call's result.
func (st *Stack) Close(ctx context.Context) error {
	st.closeOnce.Do(func() {
		st.closing.Store(true)
		st.closeErr = st.close(ctx)
	})
	return st.closeErr
}

// Closed reports whether Close was called (it may still be running). Any
// goroutine.
func (st *Stack) Closed() bool { return st.closing.Load() }

// minReplyFlush is the least time the listeners get to flush queued
// replies at shutdown, whatever is left of --shutdown-timeout.
const minReplyFlush = time.Second

// atLeast returns a context that ends at ctx's deadline or d from now,
// whichever is later (values and cancellation of ctx are not inherited).
func atLeast(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.After(deadline) {
		deadline = dl
	}
	return context.WithDeadline(context.Background(), deadline)
}

func (st *Stack) close(ctx context.Context) error {
	var errs []error
	for _, srv := range []*remoting.Server{st.broker, st.namesrv} {
		if srv != nil {
			srv.Drain()
		}
	}
	if err := st.stopGRPC(ctx); err != nil {
		errs = append(errs, err)
	}
	if st.registrar != nil {
		st.registrar.Close(ctx)
	}
	if st.routes != nil {
		st.routes.Close()
	}
	if st.Broker != nil {
		st.Broker.Close()
	}
	if st.Writer != nil {
		if err := st.Writer.Close(); err != nil {
			errs = append(errs, fmt.Errorf("writer: %w", err))
		}
	}
	// Replies of mutations the writer just made durable are queued on the
	// connections now; the listeners get at least minReplyFlush to write
	// them even when ctx (--shutdown-timeout) ran out during the drain.
	lctx, cancel := atLeast(ctx, minReplyFlush)
	defer cancel()
	if st.namesrv != nil {
		if err := st.namesrv.Stop(lctx); err != nil {
			errs = append(errs, fmt.Errorf("namesrv server: %w", err))
		}
	}
	if st.broker != nil {
		if err := st.broker.Stop(lctx); err != nil {
			errs = append(errs, fmt.Errorf("broker server: %w", err))
		}
	}
	if err := st.stopHTTP(ctx); err != nil {
		errs = append(errs, err)
	}
	if st.Store != nil {
		if err := st.Store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: %w", err))
		}
	}
	st.log.Info().Msg("popshim stopped")
	return errors.Join(errs...)
}
