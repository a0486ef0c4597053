package codec

import (
	"maps"
	"slices"
	"strconv"
)

// Group retry policy types (remoting/.../protocol/subscription/GroupRetryPolicyType.java).
const (
	GroupRetryPolicyCustomized  = "CUSTOMIZED"  // Java's default
	GroupRetryPolicyExponential = "EXPONENTIAL" // initial * multiplier^reconsumeTimes, capped at max
)

// Java defaults of ExponentialRetryPolicy.java, in milliseconds (multiplier
// is a plain factor). A consumer of GroupRetryPolicy uses them when the
// policy of the selected type is absent.
const (
	DefaultExponentialInitialMillis int64 = 5000
	DefaultExponentialMaxMillis     int64 = 2 * 3600 * 1000
	DefaultExponentialMultiplier    int64 = 2
)

// DefaultCustomizedRetryNextMillis returns a fresh copy of the default
// delay table of CustomizedRetryPolicy.java: 1s 5s 10s 30s 1m 2m 3m 4m 5m
// 6m 7m 8m 9m 10m 20m 30m 1h 2h, in milliseconds. Delay for a message
// reconsumed n times is next[min(n+2, len-1)].
func DefaultCustomizedRetryNextMillis() []int64 {
	return []int64{1000, 5000, 10000, 30000, 60000, 120000, 180000, 240000, 300000,
		360000, 420000, 480000, 540000, 600000, 1200000, 1800000, 3600000, 7200000}
}

// ExponentialRetryPolicy is subscription/ExponentialRetryPolicy.java. JSON
// members: initial, max, multiplier (all Java long).
type ExponentialRetryPolicy struct {
	InitialMillis int64 // "initial"
	MaxMillis     int64 // "max"
	Multiplier    int64 // "multiplier"
}

// CustomizedRetryPolicy is subscription/CustomizedRetryPolicy.java. JSON
// member: next (Java long[], milliseconds).
type CustomizedRetryPolicy struct {
	NextMillis []int64 // "next"; nil is written as []
}

// GroupRetryPolicy is subscription/GroupRetryPolicy.java: the retry backoff
// the proxy hands to gRPC consumers. Java's default is {"type":"CUSTOMIZED"}
// with both nested policies null (omitted); a nil pointer here means null.
// An empty Type is written as CUSTOMIZED, Java's default.
type GroupRetryPolicy struct {
	Type        string                  // "type": GroupRetryPolicyCustomized or GroupRetryPolicyExponential
	Exponential *ExponentialRetryPolicy // "exponentialRetryPolicy"; nil: omitted
	Customized  *CustomizedRetryPolicy  // "customizedRetryPolicy"; nil: omitted
}

// SimpleSubscriptionData is subscription/SimpleSubscriptionData.java, one
// element of SubscriptionGroupConfig.subscriptionDataSet.
type SimpleSubscriptionData struct {
	Topic          string // "topic"
	ExpressionType string // "expressionType": "TAG" or "SQL92"
	Expression     string // "expression"
	Version        int64  // "version" (Java long, a millisecond timestamp in practice)
}

// SubscriptionGroupConfig is a consumer group's broker-side configuration
// (remoting/src/main/java/org/apache/rocketmq/remoting/protocol/subscription/SubscriptionGroupConfig.java):
// the body of UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) and of a
// GET_SUBSCRIPTIONGROUP_CONFIG (352) reply, and a value of the
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) table. The zero value is NOT
// Java's default; start from NewSubscriptionGroupConfig. Each field's
// comment names its JSON member and Java default.
type SubscriptionGroupConfig struct {
	GroupName                      string                   // "groupName"; null in Java (omitted when "")
	ConsumeEnable                  bool                     // "consumeEnable"; true. false: POP/PULL refused with NO_PERMISSION
	ConsumeFromMinEnable           bool                     // "consumeFromMinEnable"; true
	ConsumeBroadcastEnable         bool                     // "consumeBroadcastEnable"; true
	ConsumeMessageOrderly          bool                     // "consumeMessageOrderly"; false. The proxy's FIFO switch
	RetryQueueNums                 int32                    // "retryQueueNums"; 1. Queues of %RETRY%<group>
	RetryMaxTimes                  int32                    // "retryMaxTimes"; 16. Redeliveries before the DLQ
	GroupRetryPolicy               GroupRetryPolicy         // "groupRetryPolicy"; {"type":"CUSTOMIZED"}
	BrokerID                       int64                    // "brokerId"; 0 (MixAll.MASTER_ID)
	WhichBrokerWhenConsumeSlowly   int64                    // "whichBrokerWhenConsumeSlowly"; 1
	NotifyConsumerIDsChangedEnable bool                     // "notifyConsumerIdsChangedEnable"; true
	GroupSysFlag                   int32                    // "groupSysFlag"; 0
	ConsumeTimeoutMinute           int32                    // "consumeTimeoutMinute"; 15 (push consumers only)
	SubscriptionDataSet            []SimpleSubscriptionData // "subscriptionDataSet"; null: nil is omitted, empty non-nil is []
	Attributes                     map[string]string        // "attributes"; {} (never written as null)
}

// NewSubscriptionGroupConfig returns Java's `new SubscriptionGroupConfig()`
// with groupName set: what a Java broker auto-creates for an unknown group.
func NewSubscriptionGroupConfig(group string) SubscriptionGroupConfig {
	return SubscriptionGroupConfig{
		GroupName:                      group,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		RetryQueueNums:                 1,
		RetryMaxTimes:                  16,
		GroupRetryPolicy:               GroupRetryPolicy{Type: GroupRetryPolicyCustomized},
		WhichBrokerWhenConsumeSlowly:   1,
		NotifyConsumerIDsChangedEnable: true,
		ConsumeTimeoutMinute:           15,
		Attributes:                     map[string]string{},
	}
}

// Clone returns a deep copy: no slice, map or pointer is shared with c.
func (c *SubscriptionGroupConfig) Clone() SubscriptionGroupConfig {
	out := *c
	out.GroupRetryPolicy = c.GroupRetryPolicy.Clone()
	out.SubscriptionDataSet = slices.Clone(c.SubscriptionDataSet)
	out.Attributes = maps.Clone(c.Attributes)
	return out
}

// Clone returns a deep copy of p.
func (p GroupRetryPolicy) Clone() GroupRetryPolicy {
	if p.Exponential != nil {
		e := *p.Exponential
		p.Exponential = &e
	}
	if p.Customized != nil {
		p.Customized = &CustomizedRetryPolicy{NextMillis: slices.Clone(p.Customized.NextMillis)}
	}
	return p
}

// AppendSubscriptionGroupConfig appends c as compact JSON exactly as Java
// 5.5 writes it (fastjson2: members sorted by name, null members omitted,
// non-ASCII raw; see testdata/codec/s01_subgroup_default.txt), so the Java
// client, the proxy and mqadmin parse it. attributes is always written ({}
// when nil): the 5.5 proxy dereferences it. Map keys are written sorted.
// Any goroutine; c is only read.
func AppendSubscriptionGroupConfig(dst []byte, c *SubscriptionGroupConfig) []byte {
	dst = append(dst, `{"attributes":`...)
	dst = appendStringMap(dst, c.Attributes)
	dst = append(dst, `,"brokerId":`...)
	dst = strconv.AppendInt(dst, c.BrokerID, 10)
	dst = append(dst, `,"consumeBroadcastEnable":`...)
	dst = strconv.AppendBool(dst, c.ConsumeBroadcastEnable)
	dst = append(dst, `,"consumeEnable":`...)
	dst = strconv.AppendBool(dst, c.ConsumeEnable)
	dst = append(dst, `,"consumeFromMinEnable":`...)
	dst = strconv.AppendBool(dst, c.ConsumeFromMinEnable)
	dst = append(dst, `,"consumeMessageOrderly":`...)
	dst = strconv.AppendBool(dst, c.ConsumeMessageOrderly)
	dst = append(dst, `,"consumeTimeoutMinute":`...)
	dst = strconv.AppendInt(dst, int64(c.ConsumeTimeoutMinute), 10)
	if c.GroupName != "" {
		dst = append(dst, `,"groupName":`...)
		dst = appendJSONString(dst, c.GroupName)
	}
	dst = append(dst, `,"groupRetryPolicy":`...)
	dst = appendGroupRetryPolicy(dst, &c.GroupRetryPolicy)
	dst = append(dst, `,"groupSysFlag":`...)
	dst = strconv.AppendInt(dst, int64(c.GroupSysFlag), 10)
	dst = append(dst, `,"notifyConsumerIdsChangedEnable":`...)
	dst = strconv.AppendBool(dst, c.NotifyConsumerIDsChangedEnable)
	dst = append(dst, `,"retryMaxTimes":`...)
	dst = strconv.AppendInt(dst, int64(c.RetryMaxTimes), 10)
	dst = append(dst, `,"retryQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(c.RetryQueueNums), 10)
	if c.SubscriptionDataSet != nil {
		dst = append(dst, `,"subscriptionDataSet":[`...)
		for i := range c.SubscriptionDataSet {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendSimpleSubscriptionData(dst, &c.SubscriptionDataSet[i])
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"whichBrokerWhenConsumeSlowly":`...)
	dst = strconv.AppendInt(dst, c.WhichBrokerWhenConsumeSlowly, 10)
	return append(dst, '}')
}

func appendGroupRetryPolicy(dst []byte, p *GroupRetryPolicy) []byte {
	dst = append(dst, '{')
	if p.Customized != nil {
		dst = append(dst, `"customizedRetryPolicy":{"next":[`...)
		for i, v := range p.Customized.NextMillis {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, v, 10)
		}
		dst = append(dst, "]},"...)
	}
	if e := p.Exponential; e != nil {
		dst = append(dst, `"exponentialRetryPolicy":{"initial":`...)
		dst = strconv.AppendInt(dst, e.InitialMillis, 10)
		dst = append(dst, `,"max":`...)
		dst = strconv.AppendInt(dst, e.MaxMillis, 10)
		dst = append(dst, `,"multiplier":`...)
		dst = strconv.AppendInt(dst, e.Multiplier, 10)
		dst = append(dst, "},"...)
	}
	typ := p.Type
	if typ == "" {
		typ = GroupRetryPolicyCustomized
	}
	dst = append(dst, `"type":`...)
	dst = appendJSONString(dst, typ)
	return append(dst, '}')
}

func appendSimpleSubscriptionData(dst []byte, s *SimpleSubscriptionData) []byte {
	// Java fields are null unless set; an empty string here stands for null.
	dst = append(dst, '{')
	sep := false
	for _, kv := range [...]struct{ k, v string }{{"expression", s.Expression}, {"expressionType", s.ExpressionType}, {"topic", s.Topic}} {
		if kv.v == "" {
			continue
		}
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, kv.k...)
		dst = append(dst, `":`...)
		dst = appendJSONString(dst, kv.v)
		sep = true
	}
	if sep {
		dst = append(dst, ',')
	}
	dst = append(dst, `"version":`...)
	dst = strconv.AppendInt(dst, s.Version, 10)
	return append(dst, '}')
}

// appendStringMap appends a JSON object of m with keys sorted ({} for nil).
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendJSONString(dst, m[k])
	}
	return append(dst, '}')
}

// SubscriptionGroupWrapper is the GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201)
// SUCCESS body (remoting/.../protocol/body/SubscriptionGroupWrapper.java).
type SubscriptionGroupWrapper struct {
	// SubscriptionGroupTable maps group name → config ("subscriptionGroupTable").
	SubscriptionGroupTable map[string]SubscriptionGroupConfig
	// ForbiddenTable maps group → topic → forbidden bit mask
	// ("forbiddenTable", Java Integer values); nil is written as {}.
	ForbiddenTable map[string]map[string]int32
	// DataVersion stamps the table ("dataVersion": counter, stateVersion, timestamp ms).
	DataVersion DataVersion
}

// AppendSubscriptionGroupWrapper appends w as compact JSON in the member
// order Java 5.5 writes (dataVersion, forbiddenTable,
// subscriptionGroupTable), map keys sorted; forbiddenTable is always
// present ({} when nil), since the 5.5 client copies it without a null
// check. Any goroutine; w is only read.
func AppendSubscriptionGroupWrapper(dst []byte, w *SubscriptionGroupWrapper) []byte {
	dst = append(dst, `{"dataVersion":`...)
	dst = AppendDataVersion(dst, &w.DataVersion)
	dst = append(dst, `,"forbiddenTable":{`...)
	for i, g := range slices.Sorted(maps.Keys(w.ForbiddenTable)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, g)
		dst = append(dst, ":{"...)
		topics := w.ForbiddenTable[g]
		for j, t := range slices.Sorted(maps.Keys(topics)) {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, t)
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, int64(topics[t]), 10)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `},"subscriptionGroupTable":{`...)
	for i, g := range slices.Sorted(maps.Keys(w.SubscriptionGroupTable)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		c := w.SubscriptionGroupTable[g]
		dst = appendJSONString(dst, g)
		dst = append(dst, ':')
		dst = AppendSubscriptionGroupConfig(dst, &c)
	}
	return append(dst, "}}"...)
}

// AppendDataVersion appends {"counter":…,"stateVersion":…,"timestamp":…}
// (remoting/.../protocol/DataVersion.java; timestamp in milliseconds).
func AppendDataVersion(dst []byte, v *DataVersion) []byte {
	dst = append(dst, `{"counter":`...)
	dst = strconv.AppendInt(dst, v.Counter, 10)
	dst = append(dst, `,"stateVersion":`...)
	dst = strconv.AppendInt(dst, v.StateVersion, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, v.Timestamp, 10)
	return append(dst, '}')
}
