package broker

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/broker/clients"
	"github.com/popshim/popshim/broker/locks"
	"github.com/popshim/popshim/broker/longpoll"
	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/broker/revive"
	"github.com/popshim/popshim/broker/timer"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
)

// Broker is the core of popshim: the broker's operations and the state they
// share, below every protocol. It wires the subsystems together:
// configuration, the store, the group-commit writer, the topic and
// subscription-group tables (broker/meta), the client registry
// (broker/clients), the long-poll registry (broker/longpoll), the POP read
// path (Service: reader pool, queue try-locks, POP jobs), the revive
// loop (broker/revive), the timer loop (broker/timer) and the transaction
// check-back loop (broker/transaction).
//
// Goroutines: operations are called from protocol adapters on any
// goroutine (gnet event loops, gRPC stream goroutines) and never wait on
// storage: validation reads in-memory state, store reads run on the reader
// pool, mutations run on the writer, and results come back through the
// caller's completion callback after the fsync. Build with New, then
// Start; Close stops the background work. The exported fields are set by
// New and never replaced.
type Broker struct {
	Cfg     *conf.Config
	Log     zerolog.Logger
	Store   *popstore.Store
	Writer  *batch.Writer
	Topics  *meta.TopicTable
	Groups  *meta.GroupTable
	Clients *clients.ClientTable

	// Settings holds the POP settings derived from the configuration; shared
	// with Svc and the reviver. Tests change knobs before traffic.
	Settings *Settings
	// HBLimits are the HEART_BEAT bounds (--max-heartbeat-groups,
	// --max-heartbeat-subscriptions, --max-conn-client-channels).
	HBLimits clients.Limits
	// Polls parks long polls (POP, PULL, NOTIFICATION) until data, a lease
	// end or their deadline.
	Polls *longpoll.Registry
	// Metrics are the message-flow and POP Prometheus series.
	Metrics *Metrics
	// Svc is the POP read path: reader pool, queue locks, POP jobs.
	Svc *Service
	// Revive moves expired checkpoints into retry topics and the DLQ.
	Revive *revive.Reviver
	// Timers delivers delay-level and timer messages when due; Delay holds
	// --message-delay-level and --timer-max-delay-sec.
	Timers *timer.Loop
	Delay  timer.Settings
	// Transactions checks undecided half messages back with their
	// producers (broker/transaction; transaction.go, transaction_end.go).
	Transactions *transaction.Loop
	// Locks is the rebalance lock table of orderly PULL consumers
	// (broker/locks; LockBatch and UnlockBatch in rebalance_lock.go).
	Locks *locks.Table
	// perm is the broker's own permission (permission.go).
	perm atomic.Int32
	// resets are the queues an admin reset moved whose PULL consumer has
	// not pulled since (reset_pending.go).
	resets pendingResets
	// Uniq mints UNIQ_KEY message ids for messages that carry none.
	Uniq *codec.UniqIDGenerator

	// skewMillis is added to the wall clock to form the broker clock; 0 in
	// production, moved by tests (AdvanceClock) to jump over invisible
	// times without sleeping.
	skewMillis atomic.Int64
	hostCache  atomic.Pointer[cachedHost] // StoreHost's parse of the advertised address
	hooks      hooks                      // installed by protocol adapters (hooks.go)
	ids        idsQueue                   // groups waiting for NOTIFY_CONSUMER_IDS_CHANGED (consumer_ids_queue.go)
	callers    clientCallers              // adapters' routes to their clients (client_caller.go)

	startOnce sync.Once
	closeOnce sync.Once
}

// New builds the core over an open store and a running writer. It creates
// the topic, group and client tables and the subsystems, installs the
// store's append listener (wakes parked long polls) and registers the POP
// metrics with reg (nil: not registered). No goroutine runs until Start.
// cfg must already carry the UPDATE_BROKER_CONFIG overrides. Errors:
// invalid configuration values, metric registration conflicts.
func New(cfg *conf.Config, log zerolog.Logger, store *popstore.Store, w *batch.Writer, reg prometheus.Registerer) (*Broker, error) {
	set, err := SettingsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	hbLimits, err := clients.LimitsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := &Broker{
		Cfg:      cfg,
		Log:      log,
		Store:    store,
		Writer:   w,
		Settings: &set,
		HBLimits: hbLimits,
		Metrics:  NewMetrics(),
		Uniq:     codec.NewUniqIDGenerator(set.StoreHost.Addr(), int32(os.Getpid()), rand.Int32()),
	}
	b.perm.Store(int32(cfg.BrokerPermission))
	topics, err := meta.NewTopicTable(cfg, store, w, log)
	if err != nil {
		return nil, err
	}
	b.Topics = topics
	b.Groups = meta.NewGroupTable(meta.GroupSettings{AutoCreate: cfg.AutoCreateSubscriptionGroup,
		RetryMaxTimes: set.MaxReconsumeTimes}, store, w, log)
	b.Clients = clients.NewClientTable(log)
	b.Locks = locks.New(cfg.RebalanceLockMaxLiveTime, b.Now)
	if reg != nil {
		if err := b.Metrics.Register(reg); err != nil {
			return nil, fmt.Errorf("broker: register metrics: %w", err)
		}
	}
	b.Polls = longpoll.NewRegistry(int64(set.MaxParkedPolls), b.Now, func(n int64) { b.Metrics.ParkedPolls.Set(float64(n)) })
	b.Revive = revive.New(&b.Settings.Revive, revive.Deps{
		Log: log, Store: store, Writer: w, Topics: topics,
		Now: b.Now, StoreHost: b.StoreHost, RetryMax: b.GroupRetryMax,
		Metrics: revive.Metrics{
			Passes: b.Metrics.RevivePasses, LagMillis: b.Metrics.ReviveLagMillis, Dropped: b.Metrics.ReviveDropped,
			Retry: b.Metrics.ReviveRetry, SendToDLQ: b.Metrics.SendToDLQ,
		},
	})
	levels, err := cfg.DelayLevelMillis()
	if err != nil {
		return nil, fmt.Errorf("broker: --message-delay-level: %w", err)
	}
	b.Delay = timer.Settings{LevelMillis: levels, MaxDelayMillis: cfg.TimerMaxDelaySec * 1000}
	b.Timers = timer.New(timer.Deps{
		Log: log, Store: store, Writer: w, Now: b.Now,
		TopicExists: func(topic string) bool { _, ok := topics.Get(topic); return ok },
		Metrics: timer.Metrics{Pending: b.Metrics.TimingMessages, Delivered: b.Metrics.TimerDequeued,
			Lateness: b.Metrics.TimerLateness, Dropped: b.Metrics.TimerDropped},
		DrainShare: cfg.TimerDrainShare,
	})
	if err := b.newTransactions(reg); err != nil {
		return nil, err
	}
	b.Svc = &Service{Log: log, Store: store, Writer: w, Topics: topics, Settings: b.Settings,
		Polls: b.Polls, Metrics: b.Metrics, Revive: b.Revive, Now: b.Now}
	store.SetAppendListener(b.onAppend)
	return b, nil
}

// Now is the broker clock, Unix ms: popTime of pops, the new popTime of
// CHANGE, store timestamps and the revive scan bound all come from it. Any
// goroutine.
func (b *Broker) Now() int64 { return time.Now().UnixMilli() + b.skewMillis.Load() }

// AdvanceClock moves the broker clock by ms (negative: back). For tests
// that jump over invisible times instead of sleeping; any goroutine.
func (b *Broker) AdvanceClock(ms int64) { b.skewMillis.Add(ms) }

// onAppend is the store's AppendListener: new messages in (topic, queueId)
// wake the long polls waiting for them. Runs on the writer goroutine.
func (b *Broker) onAppend(topic string, queueID int32, maxOffset int64) {
	b.Polls.Appended(topic, queueID, maxOffset)
}

// Start queues the creation of the system consumer groups
// (meta.SystemGroups), launches the reader pool, arms the wake-ups of the
// orderly leases still held, and starts the revive, timer and transaction
// check-back loops. Call once, before the protocol servers accept traffic;
// later calls do nothing.
func (b *Broker) Start() {
	b.startOnce.Do(func() {
		b.Groups.CreateSystemGroups()
		b.Svc.Start()
		b.Svc.ScheduleOrderWakes() // leases still held after a restart
		b.Revive.Start()
		b.Timers.Start()
		b.Transactions.Start()
		b.Log.Info().Str("brokerName", b.Settings.BrokerName).Int("readers", b.Settings.Readers).
			Int("maxParkedPolls", b.Settings.MaxParkedPolls).Bool("retryTopicV2", b.Settings.Revive.RetryTopicV2).
			Msg("pop service started")
	})
}

// Close stops the revive, timer and transaction loops (waiting for their
// current pass, whose writes still go through the writer), answers every
// parked long poll with its timeout, and stops the reader pool. Call before closing
// the writer. Idempotent; safe if Start was never called.
func (b *Broker) Close() {
	b.closeOnce.Do(func() {
		b.stopIDs()
		b.Revive.Stop()
		b.Timers.Stop()
		b.Transactions.Stop()
		b.Polls.Close()
		b.Svc.Close()
		b.Store.SetAppendListener(nil)
	})
}

// ConnClosed forgets what a client connection held: its producer and
// consumer registrations leave at once (as a Java broker's
// ClientHousekeepingService does on channel close) instead of after the
// 120 s expiry, the remaining members of the consumer groups it left get
// NOTIFY_CONSUMER_IDS_CHANGED (consumer_ids.go), and its parked long polls
// and its POPs and PULLs waiting for reply room (reply_room.go) are
// released without an answer.
// connID is the protocol adapter's connection id (unique across
// protocols). Called once per connection, after its last request.
func (b *Broker) ConnClosed(connID uint64) {
	if groups := b.Clients.RemoveConn(connID); len(groups) > 0 {
		b.Log.Debug().Uint64("conn", connID).Strs("consumerGroups", groups).Msg("connection closed, consumers removed")
		b.consumerIDsChanged(groups, false)
	}
	if n := b.Polls.DropConn(connID); n > 0 {
		b.Log.Debug().Uint64("conn", connID).Int("polls", n).Msg("connection closed, parked polls released")
	}
}

// GroupRetryMax is the retry limit of consumerGroup: its retryMaxTimes
// (auto-created groups store --max-reconsume-times;
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP sets it), else --max-reconsume-times
// (default 16) for a group that does not exist or stores a negative value.
// Any goroutine.
func (b *Broker) GroupRetryMax(group string) int32 {
	if g, ok := b.Groups.Get(group); ok && g.RetryMaxTimes >= 0 {
		return g.RetryMaxTimes
	}
	return b.Settings.MaxReconsumeTimes
}

// AdvertisedAddr is the broker address put into routes: the bound address
// once the server set it (TopicTable.SetBrokerAddr), else --broker-ip with
// the port of --listen. Any goroutine.
func (b *Broker) AdvertisedAddr() string {
	if a := b.Topics.BrokerAddr(); a != "" {
		return a
	}
	return b.Cfg.BrokerAddr()
}

// SubmitRead queues a fresh job on the POP service's reader pool; false
// when the pool is full or not started (answer SYSTEM_BUSY).
func (b *Broker) SubmitRead(job func()) bool { return b.Svc.SubmitRead(job) }

// ResubmitRead queues a re-run of a parked or contended request.
func (b *Broker) ResubmitRead(job func()) bool { return b.Svc.ResubmitRead(job) }

// StoreHost returns the address written as storeHost into stored records:
// the advertised broker address once the server bound the port
// (TopicTable.SetBrokerAddr), else the configured one. The parsed value is
// cached per advertised string. Any goroutine.
func (b *Broker) StoreHost() netip.AddrPort {
	a := b.Topics.BrokerAddr()
	if a == "" {
		return b.Settings.StoreHost
	}
	if c := b.hostCache.Load(); c != nil && c.addr == a {
		return c.host
	}
	hp, err := ParseHostPort(a)
	if err != nil {
		return b.Settings.StoreHost
	}
	b.hostCache.Store(&cachedHost{addr: a, host: hp})
	return hp
}

// cachedHost is one parsed advertised address.
type cachedHost struct {
	addr string
	host netip.AddrPort
}
