package popstore

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/popshim/popshim/codec"
)

// GroupMeta is a consumer group's configuration: every field of RocketMQ's
// SubscriptionGroupConfig (remoting/src/main/java/org/apache/rocketmq/remoting/protocol/subscription/SubscriptionGroupConfig.java;
// the wire form is codec.SubscriptionGroupConfig, converted with Config and
// GroupMetaFromConfig). It is stored under "g/"+GroupName in the meta column
// family as the JSON a Java 5.5 broker writes for it
// (codec.AppendSubscriptionGroupConfig), and read back with the tolerant
// codec.DecodeSubscriptionGroupConfig, so values written by older popshim
// versions (a json.Marshal of the first GroupMeta, without groupRetryPolicy
// and subscriptionDataSet) load with Java's defaults for what is missing.
//
// The zero value is not RocketMQ's default: start from NewGroupMeta. An
// empty Attributes map is kept as nil in memory (written as {}).
type GroupMeta struct {
	GroupName                      string
	ConsumeEnable                  bool // false: POP/PULL answer NO_PERMISSION
	ConsumeFromMinEnable           bool
	ConsumeBroadcastEnable         bool
	ConsumeMessageOrderly          bool  // read by the proxy to choose FIFO
	RetryQueueNums                 int32 // queues of %RETRY%<group>
	RetryMaxTimes                  int32 // redeliveries before the DLQ
	BrokerId                       int64
	WhichBrokerWhenConsumeSlowly   int64
	NotifyConsumerIdsChangedEnable bool
	GroupSysFlag                   int32
	ConsumeTimeoutMinute           int32
	Attributes                     map[string]string
	GroupRetryPolicy               codec.GroupRetryPolicy         // Type "" reads as CUSTOMIZED
	SubscriptionDataSet            []codec.SimpleSubscriptionData // nil: Java null
}

// NewGroupMeta returns RocketMQ's defaults (codec.NewSubscriptionGroupConfig)
// for group: consumeEnable true, retryQueueNums 1, retryMaxTimes 16, and so on.
func NewGroupMeta(group string) GroupMeta {
	c := codec.NewSubscriptionGroupConfig(group)
	return GroupMetaFromConfig(&c)
}

// GroupMetaFromConfig converts the wire form to a GroupMeta (deep copy; an
// empty Attributes map becomes nil).
func GroupMetaFromConfig(c *codec.SubscriptionGroupConfig) GroupMeta {
	g := GroupMeta{
		GroupName:                      c.GroupName,
		ConsumeEnable:                  c.ConsumeEnable,
		ConsumeFromMinEnable:           c.ConsumeFromMinEnable,
		ConsumeBroadcastEnable:         c.ConsumeBroadcastEnable,
		ConsumeMessageOrderly:          c.ConsumeMessageOrderly,
		RetryQueueNums:                 c.RetryQueueNums,
		RetryMaxTimes:                  c.RetryMaxTimes,
		BrokerId:                       c.BrokerID,
		WhichBrokerWhenConsumeSlowly:   c.WhichBrokerWhenConsumeSlowly,
		NotifyConsumerIdsChangedEnable: c.NotifyConsumerIDsChangedEnable,
		GroupSysFlag:                   c.GroupSysFlag,
		ConsumeTimeoutMinute:           c.ConsumeTimeoutMinute,
		GroupRetryPolicy:               c.GroupRetryPolicy.Clone(),
		SubscriptionDataSet:            slices.Clone(c.SubscriptionDataSet),
	}
	if len(c.Attributes) > 0 {
		g.Attributes = maps.Clone(c.Attributes)
	}
	return g
}

// Config converts g to the wire form (deep copy; nil Attributes become an
// empty map, as Java's default). Encode it with
// codec.AppendSubscriptionGroupConfig for a 352 reply or a 201 table.
func (g *GroupMeta) Config() codec.SubscriptionGroupConfig {
	c := codec.SubscriptionGroupConfig{
		GroupName:                      g.GroupName,
		ConsumeEnable:                  g.ConsumeEnable,
		ConsumeFromMinEnable:           g.ConsumeFromMinEnable,
		ConsumeBroadcastEnable:         g.ConsumeBroadcastEnable,
		ConsumeMessageOrderly:          g.ConsumeMessageOrderly,
		RetryQueueNums:                 g.RetryQueueNums,
		RetryMaxTimes:                  g.RetryMaxTimes,
		BrokerID:                       g.BrokerId,
		WhichBrokerWhenConsumeSlowly:   g.WhichBrokerWhenConsumeSlowly,
		NotifyConsumerIDsChangedEnable: g.NotifyConsumerIdsChangedEnable,
		GroupSysFlag:                   g.GroupSysFlag,
		ConsumeTimeoutMinute:           g.ConsumeTimeoutMinute,
		GroupRetryPolicy:               g.GroupRetryPolicy.Clone(),
		SubscriptionDataSet:            slices.Clone(g.SubscriptionDataSet),
		Attributes:                     maps.Clone(g.Attributes),
	}
	if c.Attributes == nil {
		c.Attributes = map[string]string{}
	}
	if c.GroupRetryPolicy.Type == "" {
		c.GroupRetryPolicy.Type = codec.GroupRetryPolicyCustomized
	}
	return c
}

// clone returns a deep copy, so callers never share memory with the
// store's in-memory table. Allocation-free for a group without attributes,
// subscriptions or nested retry policies.
func (g GroupMeta) clone() GroupMeta {
	g.Attributes = cloneMap(g.Attributes)
	g.GroupRetryPolicy = g.GroupRetryPolicy.Clone()
	g.SubscriptionDataSet = slices.Clone(g.SubscriptionDataSet)
	return g
}

// encodeGroupMeta returns the stored value of g.
func encodeGroupMeta(g *GroupMeta) []byte {
	c := g.Config()
	return codec.AppendSubscriptionGroupConfig(nil, &c)
}

// decodeGroupMeta parses a stored value of the group whose key names
// group; the key wins over the value's groupName.
func decodeGroupMeta(group string, v []byte) (GroupMeta, error) {
	c, err := codec.DecodeSubscriptionGroupConfig(v)
	if err != nil {
		return GroupMeta{}, fmt.Errorf("popstore: corrupt group %q: %w", group, err)
	}
	c.GroupName = group
	return GroupMetaFromConfig(&c), nil
}

// groupsVersion is the version stamp of the group table, RocketMQ's
// DataVersion of SubscriptionGroupManager: counter counts committed
// PutGroup/DeleteGroup calls since the database was created, timestamp is
// the time of the last one (ms). Stored under metaGroupsVersionKey as
// counter(i64 BE) timestamp(i64 BE), in the same WriteBatch as the change.
type groupsVersion struct {
	counter, timestampMillis int64
}

func (v groupsVersion) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(v.counter))
	return binary.BigEndian.AppendUint64(b, uint64(v.timestampMillis))
}

func decodeGroupsVersion(b []byte) (groupsVersion, bool) {
	if len(b) != 16 {
		return groupsVersion{}, false
	}
	return groupsVersion{int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))}, true
}

// GroupsDataVersion returns the version stamp of the consumer-group table
// for the GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) body: Counter is the number
// of committed group changes (PutGroup, or DeleteGroup of an existing group)
// over the database's life, Timestamp the millisecond time of the last one
// (the time of Open while there has been none), StateVersion 0. In-memory:
// safe on the event loop.
func (s *Store) GroupsDataVersion() codec.DataVersion {
	s.mu.RLock()
	v := s.groupsVer
	s.mu.RUnlock()
	return codec.DataVersion{Counter: v.counter, Timestamp: v.timestampMillis}
}

// GroupTable returns the whole group table as the GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// (201) body wrapper: every group's Config keyed by name, an empty forbidden
// table and GroupsDataVersion, taken under one read lock so the version
// matches the table. Allocates one copy of the table; in-memory, safe on
// the event loop.
func (s *Store) GroupTable() codec.SubscriptionGroupWrapper {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w := codec.SubscriptionGroupWrapper{
		SubscriptionGroupTable: make(map[string]codec.SubscriptionGroupConfig, len(s.groups)),
		ForbiddenTable:         map[string]map[string]int32{},
		DataVersion:            codec.DataVersion{Counter: s.groupsVer.counter, Timestamp: s.groupsVer.timestampMillis},
	}
	for name, g := range s.groups {
		w.SubscriptionGroupTable[name] = g.Config()
	}
	return w
}

// GroupNames returns the names of every stored consumer group, sorted.
// In-memory: safe on the event loop.
func (s *Store) GroupNames() []string {
	s.mu.RLock()
	out := make([]string, 0, len(s.groups))
	for name := range s.groups {
		out = append(out, name)
	}
	s.mu.RUnlock()
	sort.Strings(out)
	return out
}
