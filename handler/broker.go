package handler

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/handler/auth"
	"github.com/popshim/popshim/handler/clients"
	"github.com/popshim/popshim/handler/longpoll"
	"github.com/popshim/popshim/handler/meta"
	"github.com/popshim/popshim/handler/namesrv"
	"github.com/popshim/popshim/handler/popsvc"
	"github.com/popshim/popshim/handler/revive"
	"github.com/popshim/popshim/handler/timer"
	"github.com/popshim/popshim/popstore"
)

// Broker is the state every request handler shares and the place the
// subsystems are wired together: configuration, the store, the
// group-commit writer, the topic and subscription-group tables
// (handler/meta), the client registry
// (handler/clients), the long-poll registry (handler/longpoll), the POP
// read path (handler/popsvc: reader pool, queue try-locks, POP jobs), the
// revive loop (handler/revive), the timer loop (handler/timer) and this broker's name-server identity
// (handler/namesrv).
//
// Goroutines: handlers run on gnet event loops and only decode, validate
// against in-memory state and enqueue; store reads run on the reader pool;
// mutations run on the writer; revive has its own goroutine. Build with
// NewBroker, register with RegisterBroker, then Start; Close stops the
// background work. The exported fields are set by NewBroker and never
// replaced.
type Broker struct {
	Cfg     *conf.Config
	Log     zerolog.Logger
	Store   *popstore.Store
	Writer  *batch.Writer
	Topics  *meta.TopicTable
	Groups  *meta.GroupTable
	Clients *clients.ClientTable
	// Auth authenticates and authorizes every request before its handler
	// (guard.go) and serves the AUTH_* admin codes. Never nil; it refuses
	// nothing unless --auth-enabled or --acl-file is set.
	Auth *auth.Verifier

	pop *popsvc.Settings // shared with svc and the reviver (pop.revive); tests change knobs before traffic
	// hbLimits are the HEART_BEAT bounds (--max-heartbeat-groups,
	// --max-heartbeat-subscriptions, --max-conn-client-channels).
	hbLimits clients.Limits
	// hbCache remembers each connection's last accepted HEART_BEAT for the
	// fast path of an unchanged repeat (heart_beat.go).
	hbCache *clients.HeartbeatCache
	// skewMillis is added to the wall clock to form the broker clock; 0 in
	// production, moved by tests to jump over invisible times (or step the
	// clock back) without sleeping.
	skewMillis atomic.Int64
	polls      *longpoll.Registry
	metrics    *popsvc.Metrics
	// rstats turns metrics' put/get counters into GET_BROKER_RUNTIME_INFO's
	// TPS and per-day figures.
	rstats runtimeStats
	// bstats samples the items VIEW_BROKER_STATS_DATA answers.
	bstats brokerStats
	uniq   *codec.UniqIDGenerator
	// svc is the POP read path: reader pool, queue locks, POP jobs.
	svc *popsvc.Service

	revive *revive.Reviver
	// timers delivers delay-level and timer messages when due; delay holds
	// --message-delay-level and --timer-max-delay-sec.
	timers    *timer.Loop
	delay     timer.Settings
	hostCache atomic.Pointer[cachedHost] // storeHost's parse of the advertised address
	// runtimeCfg holds the UPDATE_BROKER_CONFIG overrides and version.
	runtimeCfg runtimeConfig
	// self is this broker in routes, cluster info and name-server
	// registrations (its address is advertisedAddr).
	self namesrv.Self
	// registrar keeps this broker registered with --namesrv-addr and
	// registers a created topic before UPDATE_AND_CREATE_TOPIC answers;
	// routes caches the topic routes those name servers hold, for
	// QUERY_ASSIGNMENT. Both nil without --namesrv-addr; StartStack starts
	// them, Stack.close closes them.
	registrar *namesrv.Registrar
	routes    *namesrv.RouteCache

	startOnce sync.Once
	closeOnce sync.Once
}

// NewBroker builds the broker state over an open store and a running
// writer. It creates the topic and client tables (meta.NewTopicTable,
// clients.NewClientTable) and the subsystems (with --namesrv-addr also the
// name-server Registrar and RouteCache, not yet started), installs the store's append listener (wakes parked long
// polls) and registers the POP metrics with reg (nil: not registered). No
// goroutine runs until Start. Errors: invalid configuration values, metric
// registration conflicts.
func NewBroker(cfg *conf.Config, log zerolog.Logger, store *popstore.Store, w *batch.Writer, reg prometheus.Registerer) (*Broker, error) {
	set, err := popsvc.SettingsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	hbLimits, err := clients.LimitsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := &Broker{
		Cfg:     cfg,
		Log:     log,
		Store:   store,
		Writer:  w,
		pop:     &set,
		metrics: popsvc.NewMetrics(),
		uniq:    codec.NewUniqIDGenerator(set.StoreHost.Addr(), int32(os.Getpid()), rand.Int32()),
	}
	b.hbLimits = hbLimits
	b.hbCache = clients.NewHeartbeatCache()
	overrides, err := loadBrokerConfigOverrides(cfg, store)
	if err != nil {
		return nil, err
	}
	if len(overrides) > 0 {
		log.Warn().Interface("overrides", overrides).Msg("settings changed by UPDATE_BROKER_CONFIG win over the flags")
	}
	b.runtimeCfg.overrides, b.runtimeCfg.staged = overrides, maps.Clone(overrides)
	topics, err := meta.NewTopicTable(cfg, store, w, log)
	if err != nil {
		return nil, err
	}
	b.Topics = topics
	b.Groups = meta.NewGroupTable(meta.GroupSettings{AutoCreate: cfg.AutoCreateSubscriptionGroup,
		RetryMaxTimes: set.MaxReconsumeTimes}, store, w, log)
	b.Clients = clients.NewClientTable(log)
	b.self = namesrv.Self{BrokerName: cfg.BrokerName, ClusterName: cfg.ClusterName, Addr: b.advertisedAddr, Writable: w.Writable}
	if addrs := cfg.NamesrvAddrs(); len(addrs) > 0 {
		b.registrar = namesrv.NewRegistrar(b.self, topics, addrs, cfg.RegisterInterval, log)
		b.routes = namesrv.NewRouteCache(addrs, namesrv.DefaultRouteRefresh, namesrv.FetchTimeout, log)
	}
	if reg != nil {
		if err := b.metrics.Register(reg); err != nil {
			return nil, fmt.Errorf("handler: register metrics: %w", err)
		}
	}
	b.polls = longpoll.NewRegistry(int64(set.MaxParkedPolls), b.nowMillis, func(n int64) { b.metrics.ParkedPolls.Set(float64(n)) })
	b.revive = revive.New(&b.pop.Revive, revive.Deps{
		Log: log, Store: store, Writer: w, Topics: topics,
		Now: b.nowMillis, StoreHost: b.storeHost, RetryMax: b.groupRetryMax,
		Metrics: revive.Metrics{
			Passes: b.metrics.RevivePasses, LagMillis: b.metrics.ReviveLagMillis, Dropped: b.metrics.ReviveDropped,
			Retry: b.metrics.ReviveRetry, SendToDLQ: b.metrics.SendToDLQ,
		},
	})
	levels, err := timer.ParseDelayLevels(cfg.MessageDelayLevel)
	if err != nil {
		return nil, fmt.Errorf("handler: --message-delay-level: %w", err)
	}
	b.delay = timer.Settings{LevelMillis: levels, MaxDelayMillis: cfg.TimerMaxDelaySec * 1000}
	b.timers = timer.New(timer.Deps{
		Log: log, Store: store, Writer: w, Now: b.nowMillis,
		TopicExists: func(topic string) bool { _, ok := topics.Get(topic); return ok },
		Metrics: timer.Metrics{Pending: b.metrics.TimingMessages, Delivered: b.metrics.TimerDequeued,
			Lateness: b.metrics.TimerLateness, Dropped: b.metrics.TimerDropped},
		DrainShare: cfg.TimerDrainShare,
	})
	b.svc = &popsvc.Service{Log: log, Store: store, Writer: w, Topics: topics, Settings: b.pop,
		Polls: b.polls, Metrics: b.metrics, Revive: b.revive, Now: b.nowMillis}
	// Last: it may start the ACL 1.0 file watcher, which Close stops.
	if b.Auth, err = newVerifier(cfg, store, w, log); err != nil {
		return nil, err
	}
	store.SetAppendListener(b.onAppend)
	return b, nil
}

// nowMillis is the broker clock, Unix ms: popTime of pops, the new popTime
// of CHANGE, store timestamps and the revive scan bound all come from it.
func (b *Broker) nowMillis() int64 { return time.Now().UnixMilli() + b.skewMillis.Load() }

// onAppend is the store's AppendListener: new messages in (topic, queueId)
// wake the long polls waiting for them. Runs on the writer goroutine.
func (b *Broker) onAppend(topic string, queueID int32, maxOffset int64) {
	b.polls.Appended(topic, queueID, maxOffset)
}

// Start queues the creation of the system consumer groups
// (meta.SystemGroups), launches the reader pool, arms the wake-ups of the
// orderly leases still held, and starts the revive loop and the timer loop.
// Call once, after
// registration and before the servers accept traffic; later calls do
// nothing.
func (b *Broker) Start() {
	b.startOnce.Do(func() {
		b.Groups.CreateSystemGroups()
		b.svc.Start()
		b.svc.ScheduleOrderWakes() // leases still held after a restart
		b.revive.Start()
		b.timers.Start()
		b.Log.Info().Str("brokerName", b.pop.BrokerName).Int("readers", b.pop.Readers).
			Int("maxParkedPolls", b.pop.MaxParkedPolls).Bool("retryTopicV2", b.pop.Revive.RetryTopicV2).
			Msg("pop service started")
	})
}

// Close stops the revive and timer loops (waiting for its current pass, whose writes
// still go through the writer), answers every parked long poll with its
// timeout code, and stops the reader pool. Call before closing the writer.
// Idempotent; safe if Start was never called.
func (b *Broker) Close() {
	b.closeOnce.Do(func() {
		b.revive.Stop()
		b.timers.Stop()
		b.polls.Close()
		b.svc.Close()
		b.Store.SetAppendListener(nil)
		b.Auth.Close()
	})
}

// onConnClose is the broker server's remoting close hook: a client whose
// connection closed leaves its producer and consumer groups at once (as a
// Java broker's ClientHousekeepingService does on channel close), instead
// of after the 120 s expiry, its parked long polls (POP, PULL,
// NOTIFICATION) are released without an answer, and the heartbeat it last
// sent is forgotten (heartbeatCache). Runs on the connection's event loop,
// after the last handler call for that connection.
func (b *Broker) onConnClose(connID uint64) {
	b.hbCache.Forget(connID)
	if groups := b.Clients.RemoveConn(connID); len(groups) > 0 {
		b.Log.Debug().Uint64("conn", connID).Strs("consumerGroups", groups).Msg("connection closed, consumers removed")
	}
	if n := b.polls.DropConn(connID); n > 0 {
		b.Log.Debug().Uint64("conn", connID).Int("polls", n).Msg("connection closed, parked polls released")
	}
}

// groupRetryMax is the retry limit of consumerGroup: its retryMaxTimes
// (auto-created groups store --max-reconsume-times; UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// sets it), else --max-reconsume-times (default 16) for a group that does
// not exist or stores a negative value. Any goroutine.
func (b *Broker) groupRetryMax(group string) int32 {
	if g, ok := b.Groups.Get(group); ok && g.RetryMaxTimes >= 0 {
		return g.RetryMaxTimes
	}
	return b.pop.MaxReconsumeTimes
}

// advertisedAddr is the broker address put into routes: the bound address
// once Serve set it, else --broker-ip with the port of --listen.
func (b *Broker) advertisedAddr() string {
	if a := b.Topics.BrokerAddr(); a != "" {
		return a
	}
	return b.Cfg.BrokerAddr()
}

// submitRead queues a fresh job on the POP service's reader pool; false
// when the pool is full or not started.
func (b *Broker) submitRead(job func()) bool { return b.svc.SubmitRead(job) }

// resubmitRead queues a re-run of a parked or contended request.
func (b *Broker) resubmitRead(job func()) bool { return b.svc.ResubmitRead(job) }

// storeHost returns the address written as storeHost into stored records:
// the advertised broker address once Serve bound the port
// (TopicTable.SetBrokerAddr), else the configured one. The parsed value is
// cached per advertised string. Any goroutine.
func (b *Broker) storeHost() netip.AddrPort {
	a := b.Topics.BrokerAddr()
	if a == "" {
		return b.pop.StoreHost
	}
	if c := b.hostCache.Load(); c != nil && c.addr == a {
		return c.host
	}
	hp, err := popsvc.ParseHostPort(a)
	if err != nil {
		return b.pop.StoreHost
	}
	b.hostCache.Store(&cachedHost{addr: a, host: hp})
	return hp
}

// cachedHost is one parsed advertised address.
type cachedHost struct {
	addr string
	host netip.AddrPort
}
