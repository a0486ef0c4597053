package meta

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// ErrGroupNotExist means the subscription group is unknown and may not be
// auto-created (--auto-create-subscription-group off and no CID_RMQ_SYS_
// prefix, or an illegal name). Handlers answer
// SUBSCRIPTION_GROUP_NOT_EXIST (26) with their request's remark.
var ErrGroupNotExist = errors.New("handler: subscription group not exist")

// SysGroupPrefix is the prefix of system consumer groups a broker creates
// even with autoCreateSubscriptionGroup off (MixAll.CID_SYS_RMQ_TRANS's
// prefix; BrokerConfig.enableCreateSysGroup, default true).
const SysGroupPrefix = "CID_RMQ_SYS_"

// SystemGroups are the groups a Java broker's SubscriptionGroupManager
// creates at start (MixAll.TOOLS_CONSUMER_GROUP, FILTERSRV_CONSUMER_GROUP,
// SELF_TEST_CONSUMER_GROUP, ONS_HTTP_PROXY_GROUP, CID_ONSAPI_PULL_GROUP,
// CID_ONSAPI_PERMISSION_GROUP, CID_ONSAPI_OWNER_GROUP, CID_SYS_RMQ_TRANS),
// all with SubscriptionGroupConfig's defaults.
var SystemGroups = []string{
	"TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY",
	"CID_ONSAPI_PULL", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER", "CID_RMQ_SYS_TRANS",
}

// GroupSettings are the knobs of a GroupTable (from conf).
type GroupSettings struct {
	// AutoCreate creates an unknown valid group on HEART_BEAT, POP, PULL,
	// NOTIFICATION, CONSUMER_SEND_MSG_BACK and GET_SUBSCRIPTIONGROUP_CONFIG
	// (autoCreateSubscriptionGroup, --auto-create-subscription-group,
	// default true). Names starting with SysGroupPrefix are created either
	// way.
	AutoCreate bool
	// RetryMaxTimes is the retryMaxTimes stored for an auto-created group
	// (--max-reconsume-times, default 16; a Java broker always stores 16).
	RetryMaxTimes int32
}

// GroupTable is the broker's subscription-group (consumer group) metadata:
// RocketMQ's SubscriptionGroupManager. The durable table is popstore's
// (Store.Group, Store.GroupTable); this type adds auto-creation, admin
// create/replace/delete through the batch writer, and the groups being
// auto-created whose write is not durable yet (visible at once, so a burst
// of POPs of a new group queues one write).
//
// Every method is safe on the gnet event loop: lookups read memory under a
// mutex, writes queue an op on the writer's background lane and report
// through a callback that runs on the writer's completer goroutine (or at
// once on the caller's goroutine when nothing was queued).
type GroupTable struct {
	set GroupSettings
	// autoCreate is set.AutoCreate, changeable at run time (SetAutoCreate,
	// UPDATE_BROKER_CONFIG autoCreateSubscriptionGroup).
	autoCreate atomic.Bool
	store      *popstore.Store
	w          *batch.Writer
	log        zerolog.Logger

	mu      sync.Mutex
	pending map[string]*pendingGroup // REQUIRES: mu held
}

// pendingGroup is an auto-created group whose write is queued.
type pendingGroup struct {
	meta    popstore.GroupMeta
	waiters []func(popstore.GroupMeta, error)
}

// NewGroupTable returns the group table over store and w. It does not
// read RocksDB (the store loaded the groups at Open) and starts nothing;
// call CreateSystemGroups once the writer runs.
func NewGroupTable(set GroupSettings, store *popstore.Store, w *batch.Writer, log zerolog.Logger) *GroupTable {
	if set.RetryMaxTimes <= 0 {
		set.RetryMaxTimes = codec.NewSubscriptionGroupConfig("").RetryMaxTimes
	}
	t := &GroupTable{set: set, store: store, w: w, log: log.With().Str("component", "groups").Logger(),
		pending: make(map[string]*pendingGroup)}
	t.autoCreate.Store(set.AutoCreate)
	return t
}

// Settings returns the table's settings.
func (t *GroupTable) Settings() GroupSettings {
	set := t.set
	set.AutoCreate = t.autoCreate.Load()
	return set
}

// SetAutoCreate turns auto-creation of unknown groups on or off from now on
// (autoCreateSubscriptionGroup). Any goroutine.
func (t *GroupTable) SetAutoCreate(on bool) { t.autoCreate.Store(on) }

// Get returns group's configuration, durable or being auto-created, and
// whether it exists. It never creates. The returned value is a copy.
func (t *GroupTable) Get(group string) (popstore.GroupMeta, bool) {
	if g, ok := t.store.Group(group); ok {
		return g, true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.pending[group]; ok {
		return p.meta, true
	}
	return popstore.GroupMeta{}, false
}

// MayAutoCreate reports whether an unknown group of this name would be
// created by Find or Ensure: a legal name (codec.ValidateGroup) and
// --auto-create-subscription-group on or the CID_RMQ_SYS_ prefix, as
// SubscriptionGroupManager.findSubscriptionGroupConfig decides.
func (t *GroupTable) MayAutoCreate(group string) bool {
	if codec.ValidateGroup(group) != nil {
		return false
	}
	return t.autoCreate.Load() || strings.HasPrefix(group, SysGroupPrefix)
}

// NewAutoGroup returns the configuration an auto-created group gets:
// SubscriptionGroupConfig's defaults with retryMaxTimes from the settings.
func (t *GroupTable) NewAutoGroup(group string) popstore.GroupMeta {
	g := popstore.NewGroupMeta(group)
	g.RetryMaxTimes = t.set.RetryMaxTimes
	return g
}

// Find is findSubscriptionGroupConfig: the group's configuration, creating
// it when it is missing and MayAutoCreate allows. A created group is
// returned at once (its write is queued, not waited for; a refused or
// failed write is logged and the next request tries again). ok=false: the
// group does not exist and may not be created (the caller answers
// SUBSCRIPTION_GROUP_NOT_EXIST).
func (t *GroupTable) Find(group string) (g popstore.GroupMeta, ok bool) {
	if g, ok := t.Get(group); ok {
		return g, true
	}
	if !t.MayAutoCreate(group) {
		return popstore.GroupMeta{}, false
	}
	return t.create(group, nil), true
}

// Ensure is Find for a caller that answers only once the group is
// durable (GET_SUBSCRIPTIONGROUP_CONFIG). done is called exactly once:
// at once (on the caller's goroutine) with the configuration of an
// existing durable group, or with ErrGroupNotExist when the group is
// missing and may not be created, or with a batch.Writer Submit error
// (batch.ErrBusy, ErrClosed, ErrFailed); otherwise on the writer's
// completer goroutine once the created group is durable (or its write
// failed). done must not block.
func (t *GroupTable) Ensure(group string, done func(popstore.GroupMeta, error)) {
	if g, ok := t.store.Group(group); ok {
		done(g, nil)
		return
	}
	if !t.MayAutoCreate(group) {
		if _, ok := t.Get(group); !ok {
			done(popstore.GroupMeta{}, ErrGroupNotExist)
			return
		}
	}
	t.create(group, done)
}

// create joins or starts the auto-creation of group with NewAutoGroup's
// configuration; done (may be nil) gets the outcome. Returns the
// configuration being created.
func (t *GroupTable) create(group string, done func(popstore.GroupMeta, error)) popstore.GroupMeta {
	return t.createWith(t.NewAutoGroup(group), done)
}

// createWith joins or starts the creation of g.GroupName unless the group
// exists when the writer applies it.
func (t *GroupTable) createWith(g popstore.GroupMeta, done func(popstore.GroupMeta, error)) popstore.GroupMeta {
	group := g.GroupName
	t.mu.Lock()
	if p, ok := t.pending[group]; ok {
		if done != nil {
			p.waiters = append(p.waiters, done)
		}
		t.mu.Unlock()
		return p.meta
	}
	p := &pendingGroup{meta: g}
	if done != nil {
		p.waiters = append(p.waiters, done)
	}
	t.pending[group] = p
	t.mu.Unlock()

	op := &batch.Op{Lane: batch.LaneBackground, Bytes: 512,
		Apply: func(tx *popstore.Txn) error {
			if _, ok := tx.Group(group); ok {
				return nil // created or replaced meanwhile: keep it
			}
			return tx.PutGroup(g)
		},
		Done: func(err error) { t.settle(group, err) },
	}
	if err := t.w.Submit(op); err != nil {
		t.settle(group, err)
		return g
	}
	t.log.Info().Str("consumerGroup", group).Msg("subscription group created")
	return g
}

// settle ends an auto-creation: the pending entry goes, its waiters get
// the durable configuration (whatever the store holds now) or err.
func (t *GroupTable) settle(group string, err error) {
	t.mu.Lock()
	p := t.pending[group]
	delete(t.pending, group)
	t.mu.Unlock()
	if p == nil {
		return
	}
	g := p.meta
	if err == nil {
		if stored, ok := t.store.Group(group); ok {
			g = stored
		}
	} else {
		t.log.Warn().Err(err).Str("consumerGroup", group).Msg("auto-created subscription group not stored")
	}
	for _, w := range p.waiters {
		w(g, err)
	}
}

// CreateSystemGroups queues the creation of every SystemGroups entry the
// store does not hold yet (SubscriptionGroupConfig's defaults; one
// background op each, not waited for; a refused write is logged). Call
// once at start, with the writer running.
func (t *GroupTable) CreateSystemGroups() {
	for _, name := range SystemGroups {
		if _, ok := t.Get(name); !ok {
			t.createWith(popstore.NewGroupMeta(name), nil)
		}
	}
}

// ValidateGroupName checks an admin-supplied group name as
// TopicValidator.validateGroup does; the error text is the Java broker's
// remark (INVALID_PARAMETER, 29) and the error wraps codec.ErrBadName.
func ValidateGroupName(group string) error {
	err := codec.ValidateGroup(group)
	if err == nil {
		return nil
	}
	var remark string
	switch {
	case strings.TrimSpace(group) == "":
		remark = "The specified group is blank."
	case len(group) > codec.MaxGroupLength:
		remark = fmt.Sprintf("The specified group: %s, is longer than group max length: %d", group, codec.MaxGroupLength)
	default:
		remark = fmt.Sprintf("The specified group: %s, contains illegal characters, allowing only ^[%%|a-zA-Z0-9_-]+$", group)
	}
	return &GroupNameError{Remark: remark, Err: err}
}

// GroupNameError is a group name refused by ValidateGroupName. Error()
// is the Java broker's remark; Unwrap gives the codec.ErrBadName cause.
type GroupNameError struct {
	Remark string
	Err    error
}

// Error returns the Java broker's remark.
func (e *GroupNameError) Error() string { return e.Remark }

// Unwrap returns the codec.ValidateGroup error (wraps codec.ErrBadName).
func (e *GroupNameError) Unwrap() error { return e.Err }
