package clients

import (
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// ClientChannelExpiry is how long a client may stay silent (no HEART_BEAT)
// before its registration is dropped: 120 s, RocketMQ's channelExpiredTimeout
// in broker/.../client/ConsumerManager.java and ProducerManager.java.
const ClientChannelExpiry = 120 * time.Second

// SweepInterval bounds how often a mutating call scans the whole table for
// expired channels (RocketMQ scans every 10 s from a scheduled thread;
// popshim does it lazily inside the next registration, so no goroutine runs).
const SweepInterval = 10 * time.Second

// ClientChannel is one client instance as seen on one connection: the
// clientID from HEART_BEAT (`ip@instanceName`), the connection it used,
// its language and version ordinal from the remoting header, and the wall
// clock of its last heartbeat in milliseconds since the Unix epoch.
type ClientChannel struct {
	ClientID         string
	ConnID           uint64
	RemoteAddr       string
	Language         string
	Version          int32
	LastUpdateMillis int64
	// Protocol is "grpc" for a client of the gRPC endpoint, "" for a
	// remoting client (the protocol_type label of the connection gauges).
	Protocol string
}

// Subscription is one SubscriptionData of a consumer heartbeat
// (common/.../protocol/heartbeat/SubscriptionData.java): topic, the
// expression string ("*" = all), its type ("TAG" or "SQL92"), the tags it
// names and the client's subVersion (milliseconds).
type Subscription struct {
	Topic          string
	SubString      string
	ExpressionType string
	Tags           []string
	SubVersion     int64
}

// ConsumerRegistration is what one HEART_BEAT says about one consumer group
// (ConsumerData.java): consumeType CONSUME_ACTIVELY / CONSUME_PASSIVELY /
// CONSUME_POP, messageModel CLUSTERING / BROADCASTING, consumeFromWhere, and
// the subscriptions (which include %RETRY%<group> for push consumers).
type ConsumerRegistration struct {
	Group            string
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
	Subscriptions    []Subscription
}

// ConsumerGroupInfo is a snapshot of one registered consumer group, safe to
// keep and read after the call that returned it.
type ConsumerGroupInfo struct {
	Group            string
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
	// Subscriptions by topic, from the most recent heartbeat.
	Subscriptions map[string]Subscription
	// Channels of live clients, sorted by ClientID.
	Channels []ClientChannel
}

type consumerGroup struct {
	consumeType, messageModel, consumeFromWhere string
	subscriptions                               map[string]Subscription
	channels                                    map[string]*ClientChannel // by clientID
}

// ClientTable holds the producers and consumers that announced themselves
// with HEART_BEAT (34), per group, like RocketMQ's ProducerManager and
// ConsumerManager. Entries leave on UNREGISTER_CLIENT (35), when their
// connection closes (RemoveConn), or when no heartbeat arrived for
// ClientChannelExpiry; expiry is applied lazily (reads ignore stale channels,
// the next registration removes them), so the table owns no goroutine.
//
// All methods are safe for concurrent use and cheap (a map operation under a
// mutex, no I/O), so they may run on the gnet event loop.
type ClientTable struct {
	log zerolog.Logger
	now func() time.Time

	mu        sync.RWMutex
	consumers map[string]*consumerGroup            // by consumerGroup
	producers map[string]map[string]*ClientChannel // producerGroup → clientID → channel
	// connChannels counts, per connection ID, the channels (consumer and
	// producer memberships) in consumers and producers whose ConnID it is;
	// connections holding none are absent. RegisterHeartbeat bounds it.
	connChannels map[uint64]int
	// connGroups holds, per connection ID, the channels it registered
	// since it last held none (a channel dropped by UNREGISTER_CLIENT,
	// expiry or a move to another connection stays listed until then):
	// RemoveConn visits only these, not every channel of every group (400
	// connections each in the same 1,000 groups took 3.4–5.1 s of one
	// core to close, 2026-12-07).
	connGroups map[uint64]map[channelKey]struct{}
	lastSweep  time.Time // REQUIRES: mu held
}

// channelKey names one channel: its group, its client and whether the
// group is a consumer group (else a producer group).
type channelKey struct {
	group    string
	clientID string
	consumer bool
}

// NewClientTable returns an empty table that logs membership changes to log
// at debug level.
func NewClientTable(log zerolog.Logger) *ClientTable {
	return &ClientTable{
		log:          log,
		now:          time.Now,
		consumers:    make(map[string]*consumerGroup),
		producers:    make(map[string]map[string]*ClientChannel),
		connChannels: make(map[uint64]int),
		connGroups:   make(map[uint64]map[channelKey]struct{}),
	}
}

// SetClock replaces the wall clock used for heartbeat times and expiry
// (tests only; call before the table is shared).
func (t *ClientTable) SetClock(now func() time.Time) { t.now = now }

func (t *ClientTable) alive(ch *ClientChannel, nowMillis int64) bool {
	return nowMillis-ch.LastUpdateMillis <= ClientChannelExpiry.Milliseconds()
}

// ConsumerIDs returns the clientIDs of the live members of consumer group
// group, sorted (the order RocketMQ's allocation strategies expect), or nil
// when the group has none.
func (t *ClientTable) ConsumerIDs(group string) []string {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	g := t.consumers[group]
	if g == nil {
		return nil
	}
	ids := make([]string, 0, len(g.channels))
	for id, ch := range g.channels {
		if t.alive(ch, nowMillis) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return ids
}

// Consumer returns a snapshot of consumer group group with its live
// channels, and false when the group has no live member.
func (t *ClientTable) Consumer(group string) (ConsumerGroupInfo, bool) {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	g := t.consumers[group]
	if g == nil {
		return ConsumerGroupInfo{}, false
	}
	info := ConsumerGroupInfo{
		Group: group, ConsumeType: g.consumeType, MessageModel: g.messageModel,
		ConsumeFromWhere: g.consumeFromWhere, Subscriptions: make(map[string]Subscription, len(g.subscriptions)),
	}
	for k, v := range g.subscriptions {
		info.Subscriptions[k] = v
	}
	for _, ch := range g.channels {
		if t.alive(ch, nowMillis) {
			info.Channels = append(info.Channels, *ch)
		}
	}
	if len(info.Channels) == 0 {
		return ConsumerGroupInfo{}, false
	}
	slices.SortFunc(info.Channels, func(a, b ClientChannel) int {
		switch {
		case a.ClientID < b.ClientID:
			return -1
		case a.ClientID > b.ClientID:
			return 1
		}
		return 0
	})
	return info, true
}

// ConsumerGroups returns the names of groups with at least one live member,
// sorted.
func (t *ClientTable) ConsumerGroups() []string {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]string, 0, len(t.consumers))
	for name, g := range t.consumers {
		for _, ch := range g.channels {
			if t.alive(ch, nowMillis) {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// Counts returns the number of live producer and consumer channels (one per
// group membership), for GET_BROKER_RUNTIME_INFO and metrics.
func (t *ClientTable) Counts() (producers, consumers int) {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, m := range t.producers {
		for _, ch := range m {
			if t.alive(ch, nowMillis) {
				producers++
			}
		}
	}
	for _, g := range t.consumers {
		for _, ch := range g.channels {
			if t.alive(ch, nowMillis) {
				consumers++
			}
		}
	}
	return producers, consumers
}

// ProducerChannels returns a copy of every live producer registration (one
// per producer group and client).
func (t *ClientTable) ProducerChannels() []ClientChannel {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []ClientChannel
	for _, m := range t.producers {
		for _, ch := range m {
			if t.alive(ch, nowMillis) {
				out = append(out, *ch)
			}
		}
	}
	return out
}
