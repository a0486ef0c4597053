package meta

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
)

// Errors of TopicTable. Handlers map them to response codes.
var (
	// ErrTopicNotExist: the topic is unknown and may not be auto-created
	// (--auto-create-topic off, or a reserved name). TOPIC_NOT_EXIST (17).
	ErrTopicNotExist = errors.New("handler: topic not exist")
	// ErrSystemTopic: the operation would change or delete a system topic
	// (TBW102, the cluster-name or broker-name topic). INVALID_PARAMETER (29).
	ErrSystemTopic = errors.New("handler: topic is a system topic")
)

// Queue counts and permissions of the topics a broker makes by itself
// (broker/.../topic/TopicConfigManager.java, MixAll.java).
const (
	// RetryQueueNums is the queue count of %RETRY%<group> topics
	// (SubscriptionGroupConfig.retryQueueNums default); HEART_BEAT reports
	// it to clients.
	RetryQueueNums   int32 = 1
	dlqQueueNums     int32 = 1  // %DLQ%<group>, MixAll.DLQ_NUMS_PER_GROUP
	clusterQueueNums int32 = 16 // the cluster-name topic: TopicConfig's default queue count
	permReadWrite          = codec.PermRead | codec.PermWrite
	permSystem             = codec.PermRead | codec.PermWrite | codec.PermInherit
)

// TopicSettings are the knobs of a TopicTable (from conf: --broker-name,
// --cluster-name, --auto-create-topic, --default-topic-queue-nums).
type TopicSettings struct {
	BrokerName       string
	ClusterName      string
	AutoCreate       bool
	DefaultQueueNums int32
}

type topicEntry struct {
	meta    popstore.TopicMeta
	system  bool   // made at start, never persisted, cannot be deleted
	gen     uint64 // identifies this insertion, for undoing a failed auto-create
	durable bool   // persisted (or system)
}

// TopicTable is the in-memory table of topic configurations served to
// clients: routes, TOPIC_NOT_EXIST decisions, admin reads. It is loaded from
// the popstore meta column family at start and written back through the
// batch writer (background lane).
//
// Reads (Get, All, Exists) take a read lock over a map and are safe on the
// gnet event loop. Writes never block: they queue an op on the writer and
// report through a callback. The TopicMeta values handed out share their
// Attributes map with the table; callers must not modify it.
//
// System topics (TBW102 when auto-create is on, the cluster-name topic and
// the broker-name topic, perm 7, as a Java broker registers them) live only
// in memory and are re-made at every start.
type TopicTable struct {
	set TopicSettings
	// autoCreate is set.AutoCreate, changeable at run time (SetAutoCreate,
	// UPDATE_BROKER_CONFIG autoCreateTopicEnable).
	autoCreate atomic.Bool
	store      *popstore.Store
	w          *batch.Writer
	log        zerolog.Logger

	mu     sync.RWMutex
	topics map[string]*topicEntry
	gen    uint64            // REQUIRES: mu held
	dv     codec.DataVersion // REQUIRES: mu held

	brokerAddr atomic.Pointer[string]

	modes requestModes
}

// NewTopicTable builds the table from cfg (--broker-name, --cluster-name,
// --auto-create-topic, --default-topic-queue-nums); see NewTopicTableWith.
// Startup only: it reads RocksDB.
func NewTopicTable(cfg *conf.Config, store *popstore.Store, w *batch.Writer, log zerolog.Logger) (*TopicTable, error) {
	return NewTopicTableWith(TopicSettings{
		BrokerName:       cfg.BrokerName,
		ClusterName:      cfg.ClusterName,
		AutoCreate:       cfg.AutoCreateTopic,
		DefaultQueueNums: int32(cfg.DefaultTopicQueueNums),
	}, store, w, log)
}

// NewTopicTableWith builds a table with explicit settings, loading the
// persisted topics and message request modes from store (startup only: it
// reads RocksDB). It errors when DefaultQueueNums is not positive or the
// persisted request-mode table cannot be decoded.
func NewTopicTableWith(set TopicSettings, store *popstore.Store, w *batch.Writer, log zerolog.Logger) (*TopicTable, error) {
	if set.DefaultQueueNums <= 0 {
		return nil, fmt.Errorf("handler: default topic queue nums must be positive, got %d", set.DefaultQueueNums)
	}
	t := &TopicTable{
		set: set, store: store, w: w,
		log:    log.With().Str("component", "topics").Logger(),
		topics: make(map[string]*topicEntry),
	}
	t.autoCreate.Store(set.AutoCreate)
	for _, m := range store.Topics() {
		t.topics[m.TopicName] = &topicEntry{meta: m, durable: true}
	}
	sys := []popstore.TopicMeta{
		{TopicName: set.ClusterName, ReadQueueNums: clusterQueueNums, WriteQueueNums: clusterQueueNums, Perm: permSystem},
		{TopicName: set.BrokerName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: permSystem},
	}
	if set.ClusterName != "" {
		sys = append(sys, popstore.TopicMeta{TopicName: ReplyTopic(set.ClusterName), ReadQueueNums: 1, WriteQueueNums: 1, Perm: permReadWrite})
	}
	if set.AutoCreate {
		sys = append(sys, popstore.TopicMeta{TopicName: codec.AutoCreateTopicKey,
			ReadQueueNums: set.DefaultQueueNums, WriteQueueNums: set.DefaultQueueNums, Perm: permSystem})
	}
	for _, m := range sys {
		if m.TopicName == "" {
			continue
		}
		m.TopicFilterType = codec.TopicFilterSingleTag
		t.topics[m.TopicName] = &topicEntry{meta: m, system: true, durable: true}
	}
	t.dv = codec.DataVersion{Timestamp: time.Now().UnixMilli()}
	if err := t.modes.load(store); err != nil {
		return nil, err
	}
	return t, nil
}

// SetBrokerAddr sets the address ("ip:port") advertised for this broker in
// routes, cluster info and name-server registrations. Serve calls it once
// the broker port is bound; any goroutine.
func (t *TopicTable) SetBrokerAddr(addr string) { t.brokerAddr.Store(&addr) }

// BrokerAddr returns the advertised broker address, "" before SetBrokerAddr.
func (t *TopicTable) BrokerAddr() string {
	if p := t.brokerAddr.Load(); p != nil {
		return *p
	}
	return ""
}

// Settings returns the table's settings.
func (t *TopicTable) Settings() TopicSettings {
	set := t.set
	set.AutoCreate = t.autoCreate.Load()
	return set
}

// SetAutoCreate turns auto-creation of unknown topics by SEND on or off
// from now on (autoCreateTopicEnable). TBW102 stays as it was at start:
// with auto-create off at start, Java producers find no TBW102 route.
// Any goroutine.
func (t *TopicTable) SetAutoCreate(on bool) { t.autoCreate.Store(on) }

// Get returns the configuration of topic and whether it exists. Any
// goroutine, including the event loop.
func (t *TopicTable) Get(topic string) (popstore.TopicMeta, bool) {
	t.mu.RLock()
	e, ok := t.topics[topic]
	t.mu.RUnlock()
	if !ok {
		return popstore.TopicMeta{}, false
	}
	return e.meta, true
}

// IsSystem reports whether topic is a system topic that admin requests may
// not create, change or delete: the built-in ones (the cluster-name and
// broker-name topics, TBW102) and, as TopicValidator.isSystemTopic, every
// name IsReservedSystemTopic lists (TBW102 even when auto-create is off,
// SCHEDULE_TOPIC_XXXX, RMQ_SYS_TRACE_TOPIC, ..., every rmq_sys_ name).
func (t *TopicTable) IsSystem(topic string) bool {
	if IsReservedSystemTopic(topic) {
		return true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.topics[topic]
	return ok && e.system
}

// All returns every topic configuration, sorted by name.
func (t *TopicTable) All() []popstore.TopicMeta {
	t.mu.RLock()
	out := make([]popstore.TopicMeta, 0, len(t.topics))
	for _, e := range t.topics {
		out = append(out, e.meta)
	}
	t.mu.RUnlock()
	slices.SortFunc(out, func(a, b popstore.TopicMeta) int { return strings.Compare(a.TopicName, b.TopicName) })
	return out
}

// DataVersion returns the current data version of the table
// (common/.../DataVersion.java): it changes whenever the table changes, so a
// name server applies changed queue counts or perms on the next
// REGISTER_BROKER.
func (t *TopicTable) DataVersion() codec.DataVersion {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.dv
}

// bumpLocked records a change. REQUIRES: t.mu held for writing.
func (t *TopicTable) bumpLocked() {
	t.dv.Counter++
	t.dv.Timestamp = time.Now().UnixMilli()
}

// EnsureRetryTopic makes %RETRY%<group> exist with queues queues (the
// group's retryQueueNums; < 1 reads as RetryQueueNums), perm 6, as
// HEART_BEAT and CONSUMER_SEND_MSG_BACK do for a consumer group, whatever
// --auto-create-topic says. An existing retry topic is returned unchanged.
// Errors as GetOrCreate.
func (t *TopicTable) EnsureRetryTopic(group string, queues int32) (popstore.TopicMeta, error) {
	name := codec.RetryGroupTopic(group)
	if queues < 1 || queues == RetryQueueNums {
		return t.GetOrCreate(name)
	}
	if m, ok := t.Get(name); ok {
		return m, nil
	}
	if err := ValidateTopicName(name); err != nil {
		return popstore.TopicMeta{}, err
	}
	return t.ensure(popstore.TopicMeta{TopicName: name, ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: permReadWrite, TopicFilterType: codec.TopicFilterSingleTag})
}

// EnsureDLQTopic makes %DLQ%<group> exist (1 queue, perm 6), whatever
// --auto-create-topic says. Errors as GetOrCreate.
func (t *TopicTable) EnsureDLQTopic(group string) (popstore.TopicMeta, error) {
	name := codec.DLQTopic(group)
	if m, ok := t.Get(name); ok {
		return m, nil
	}
	if err := ValidateTopicName(name); err != nil {
		return popstore.TopicMeta{}, err
	}
	return t.ensure(popstore.TopicMeta{TopicName: name, ReadQueueNums: dlqQueueNums, WriteQueueNums: dlqQueueNums,
		Perm: permReadWrite, TopicFilterType: codec.TopicFilterSingleTag})
}

// ensure inserts m unless a topic of that name appeared meanwhile, and
// queues its persistence.
func (t *TopicTable) ensure(m popstore.TopicMeta) (popstore.TopicMeta, error) {
	t.mu.Lock()
	if e, ok := t.topics[m.TopicName]; ok {
		t.mu.Unlock()
		return e.meta, nil
	}
	t.gen++
	gen := t.gen
	t.topics[m.TopicName] = &topicEntry{meta: m, gen: gen}
	t.bumpLocked()
	t.mu.Unlock()

	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 128,
		Apply: func(tx *popstore.Txn) error { return tx.PutTopic(m) },
		Done:  func(err error) { t.settleCreate(m.TopicName, gen, err) },
	}
	if err := t.w.Submit(op); err != nil {
		t.settleCreate(m.TopicName, gen, err)
		return popstore.TopicMeta{}, err
	}
	t.log.Info().Str("topic", m.TopicName).Int32("queueNums", m.WriteQueueNums).Msg("topic auto-created")
	return m, nil
}

// settleCreate marks an auto-created topic durable, or removes it when its
// write failed and nothing replaced it meanwhile.
func (t *TopicTable) settleCreate(topic string, gen uint64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.topics[topic]
	if !ok || e.gen != gen || e.durable {
		return
	}
	if err == nil {
		e.durable = true
		return
	}
	delete(t.topics, topic)
	t.bumpLocked()
	t.log.Warn().Err(err).Str("topic", topic).Msg("auto-created topic not persisted; removed again")
}

// Create creates or replaces a topic (UPDATE_AND_CREATE_TOPIC). The write
// goes through the writer's background lane; the table changes, then done
// runs (on the writer's completer goroutine, must not block), only after it is durable.
// It returns the Submit error at once (then done is never called):
// ErrSystemTopic, batch.ErrBusy, batch.ErrClosed, batch.ErrFailed.
func (t *TopicTable) Create(m popstore.TopicMeta, done func(error)) error {
	if t.IsSystem(m.TopicName) {
		return ErrSystemTopic
	}
	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 128,
		Apply: func(tx *popstore.Txn) error { return tx.PutTopic(m) },
		Done: func(err error) {
			if err == nil {
				t.mu.Lock()
				t.gen++
				t.topics[m.TopicName] = &topicEntry{meta: m, gen: t.gen, durable: true}
				t.bumpLocked()
				t.mu.Unlock()
				t.log.Info().Str("topic", m.TopicName).Int32("readQueueNums", m.ReadQueueNums).
					Int32("writeQueueNums", m.WriteQueueNums).Int32("perm", m.Perm).Msg("topic created or updated")
			}
			done(err)
		},
	}
	return t.w.Submit(op)
}

// TopicConfigOf converts stored metadata into the wire TopicConfig
// (common/.../TopicConfig.java). Pure; it shares m.Attributes.
func TopicConfigOf(m popstore.TopicMeta) codec.TopicConfig {
	return codec.TopicConfig{
		Attributes: m.Attributes, Order: m.Order, Perm: m.Perm, ReadQueueNums: m.ReadQueueNums,
		TopicFilterType: m.TopicFilterType, TopicName: m.TopicName, TopicSysFlag: m.TopicSysFlag,
		WriteQueueNums: m.WriteQueueNums,
	}
}
