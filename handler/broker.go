package handler

import (
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/auth"
	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler/guard"
	"github.com/popshim/popshim/handler/namesrv"
	"github.com/popshim/popshim/popstore"
)

// Broker is the remoting adapter of the core (broker.Broker, embedded): the
// request handlers (one file per request code) decode a frame, call the
// core and encode the reply. Besides the core it holds what only the
// remoting protocol has: the auth verifier of signed frames, the HEART_BEAT
// fast-path cache, the sampled figures of the admin statistics codes, the
// UPDATE_BROKER_CONFIG state, and this broker's name-server identity and
// registration.
//
// Goroutines: handlers run on gnet event loops and only decode, validate
// against in-memory state and call the core. Build with NewBroker, register
// with RegisterBroker, then Start; Close stops the background work.
type Broker struct {
	*broker.Broker

	// Auth authenticates and authorizes every request before its handler
	// (handler/guard) and serves the AUTH_* admin codes. Never nil; it refuses
	// nothing unless --auth-enabled or --acl-file is set.
	Auth *auth.Verifier

	// hbCache remembers each connection's last accepted HEART_BEAT for the
	// fast path of an unchanged repeat (heart_beat.go).
	hbCache *clients.HeartbeatCache
	// rstats turns metrics' put/get counters into GET_BROKER_RUNTIME_INFO's
	// TPS and per-day figures.
	rstats runtimeStats
	// bstats samples the items VIEW_BROKER_STATS_DATA answers.
	bstats brokerStats
	// runtimeCfg holds the UPDATE_BROKER_CONFIG overrides and version.
	runtimeCfg runtimeConfig
	// self is this broker in routes, cluster info and name-server
	// registrations (its address is AdvertisedAddr).
	self namesrv.Self
	// registrar keeps this broker registered with --namesrv-addr and
	// registers a created topic before UPDATE_AND_CREATE_TOPIC answers;
	// routes caches the topic routes those name servers hold, for
	// QUERY_ASSIGNMENT. Both nil without --namesrv-addr; StartStack starts
	// them, Stack.close closes them.
	registrar *namesrv.Registrar
	routes    *namesrv.RouteCache

	closeOnce sync.Once
	// sampleStop ends the runtime-stats sampler Start runs; sampleDone is
	// closed when it returned. Both nil before Start.
	sampleStop, sampleDone chan struct{}
}

// NewBroker applies the persisted UPDATE_BROKER_CONFIG overrides to cfg,
// builds the core (broker.New) and the remoting-side state (with
// --namesrv-addr also the name-server Registrar and RouteCache, not yet
// started). No goroutine runs until Start. Errors: invalid configuration
// values, metric registration conflicts, unreadable stored overrides.
func NewBroker(cfg *conf.Config, log zerolog.Logger, store *popstore.Store, w *batch.Writer, reg prometheus.Registerer) (*Broker, error) {
	overrides, err := loadBrokerConfigOverrides(cfg, store)
	if err != nil {
		return nil, err
	}
	if len(overrides) > 0 {
		log.Warn().Interface("overrides", overrides).Msg("settings changed by UPDATE_BROKER_CONFIG win over the flags")
	}
	core, err := broker.New(cfg, log, store, w, reg)
	if err != nil {
		return nil, err
	}
	b := &Broker{Broker: core, hbCache: clients.NewHeartbeatCache()}
	b.runtimeCfg.overrides, b.runtimeCfg.staged = overrides, maps.Clone(overrides)
	b.self = namesrv.Self{BrokerName: cfg.BrokerName, ClusterName: cfg.ClusterName, Addr: b.AdvertisedAddr, Writable: w.Writable,
		MaskPerm: core.MaskTopicPerm}
	if addrs := cfg.NamesrvAddrs(); len(addrs) > 0 {
		b.registrar = namesrv.NewRegistrar(b.self, b.Topics, addrs, cfg.RegisterInterval, log)
		b.routes = namesrv.NewRouteCache(addrs, namesrv.DefaultRouteRefresh, namesrv.FetchTimeout, log)
		core.SetRouteSource(b.routes)
		core.SetTopicRegistrar(func(done func()) { b.registrar.RegisterNow(createRegisterTimeout, done) })
	}
	// Last: it may start the ACL 1.0 file watcher, which Close stops.
	if b.Auth, err = guard.NewVerifier(cfg, store, w, log); err != nil {
		core.Close()
		return nil, err
	}
	return b, nil
}

// Start starts the core (broker.Broker.Start) and the goroutine that
// samples the put/get counters every second for GET_BROKER_RUNTIME_INFO's
// TPS figures (runtime_stats.go). Call once, before traffic.
func (b *Broker) Start() {
	b.Broker.Start()
	b.sampleStop, b.sampleDone = make(chan struct{}), make(chan struct{})
	go b.sampleRuntime(b.sampleStop, b.sampleDone)
}

// Close closes the core (broker.Broker.Close), the runtime-stats sampler
// and the auth verifier's file watcher. Idempotent.
func (b *Broker) Close() {
	b.closeOnce.Do(func() {
		if b.sampleStop != nil {
			close(b.sampleStop)
			<-b.sampleDone
		}
		b.Broker.Close()
		b.Auth.Close()
	})
}

// Registrar is the name-server registration (--namesrv-addr), nil without
// it; the process starts and closes it.
func (b *Broker) Registrar() *namesrv.Registrar { return b.registrar }

// Routes is the cache of topic routes held by the --namesrv-addr name
// servers, nil without them; the process starts and closes it.
func (b *Broker) Routes() *namesrv.RouteCache { return b.routes }

// OnConnClose is the broker server's remoting close hook: the core forgets
// the connection's clients and parked polls (broker.Broker.ConnClosed) and
// the heartbeat it last sent is forgotten (hbCache). Runs on the
// connection's event loop, after the last handler call for that
// connection.
func (b *Broker) OnConnClose(connID uint64) {
	b.hbCache.Forget(connID)
	b.ConnClosed(connID)
}
