package clients

// HEART_BEAT bounds and name checks (see broker/heartbeat.go for the
// behaviour): what one heartbeat's groups may contain, and the Heartbeat
// the ClientTable registers from them.

import (
	"fmt"
	"unicode/utf8"

	"github.com/popshim/popshim/broker/meta"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// Limits are the HEART_BEAT bounds from conf. All are ≥ 1.
type Limits struct {
	groups        int // --max-heartbeat-groups: consumerDataSet and producerDataSet entries, each
	subscriptions int // --max-heartbeat-subscriptions: subscriptionDataSet entries per consumer group
	// ConnChannels is --max-conn-client-channels: group memberships per
	// connection, the bound passed to ClientTable.RegisterHeartbeat.
	ConnChannels int
}

// LimitsFromConfig reads the bounds from cfg. It errors, naming the
// flag, when one is below 1 (conf.Validate refuses that too; this guards
// configurations built without it).
func LimitsFromConfig(cfg *conf.Config) (Limits, error) {
	l := Limits{
		groups:        cfg.MaxHeartbeatGroups,
		subscriptions: cfg.MaxHeartbeatSubscriptions,
		ConnChannels:  cfg.MaxConnClientChannels,
	}
	for _, f := range []struct {
		flag string
		n    int
	}{{"max-heartbeat-groups", l.groups}, {"max-heartbeat-subscriptions", l.subscriptions}, {"max-conn-client-channels", l.ConnChannels}} {
		if f.n < 1 {
			return Limits{}, fmt.Errorf("handler: --%s must be ≥ 1, got %d", f.flag, f.n)
		}
	}
	return l, nil
}

// Exceeded returns the remark of the first per-heartbeat bound a
// heartbeat listing consumers and producers breaks (counted as sent,
// before PlanHeartbeat skips invalid entries), or "" when it breaks none.
// The remark names the flag, the count and the bound.
func (l Limits) Exceeded(consumers []ConsumerRegistration, producers []string) string {
	if n := len(consumers); n > l.groups {
		return fmt.Sprintf("heartbeat lists %d consumer groups, above --max-heartbeat-groups %d", n, l.groups)
	}
	if n := len(producers); n > l.groups {
		return fmt.Sprintf("heartbeat lists %d producer groups, above --max-heartbeat-groups %d", n, l.groups)
	}
	for i := range consumers {
		cr := &consumers[i]
		if n := len(cr.Subscriptions); n > l.subscriptions {
			return fmt.Sprintf("heartbeat consumer group %s lists %d subscriptions, above --max-heartbeat-subscriptions %d",
				clipName(cr.Group), n, l.subscriptions)
		}
	}
	return ""
}

// SkippedEntries counts the heartbeat entries PlanHeartbeat dropped and
// describes the first, for one log line per heartbeat.
type SkippedEntries struct {
	Count int    // entries dropped
	First string // what the first dropped entry was and why, at most 200 runes of cause
}

func (s *SkippedEntries) add(what string, err error) {
	if s.Count == 0 {
		s.First = fmt.Sprintf("%s: %.200s", what, err.Error()) // runes, not bytes
	}
	s.Count++
}

// PlanHeartbeat turns the groups of one heartbeat, as sent, into what
// the ClientTable registers for ch: consumer groups and producer groups
// whose names pass codec.ValidateGroup, and per consumer group the
// subscriptions whose topic passes RocketMQ's topic rules
// (validateTopicName: %RETRY% names may carry the V2 '+'). Everything
// dropped is counted in skipped. A consumer group listed twice is
// registered once, with its later entry (as successive registrations
// would leave it), so it costs one retry-topic and group-config check.
//
// It filters in place: the result's Consumers and Producers, and each
// consumer's Subscriptions, share the arrays of consumers, producers and
// their subscriptions, which the caller gives up (it must not use them
// afterwards).
func PlanHeartbeat(ch ClientChannel, consumers []ConsumerRegistration, producers []string) (reg Heartbeat, skipped SkippedEntries) {
	reg.Channel = ch
	reg.Consumers = consumers[:0]
	at := make(map[string]int, len(consumers)) // group → index in reg.Consumers
	for _, cr := range consumers {
		if err := codec.ValidateGroup(cr.Group); err != nil {
			skipped.add("consumer group", err)
			continue
		}
		subs := cr.Subscriptions[:0]
		for _, s := range cr.Subscriptions {
			if err := meta.ValidateTopicName(s.Topic); err != nil {
				skipped.add("subscription of consumer group "+cr.Group, err)
				continue
			}
			subs = append(subs, s)
		}
		cr.Subscriptions = subs
		if i, dup := at[cr.Group]; dup {
			reg.Consumers[i] = cr
			continue
		}
		at[cr.Group] = len(reg.Consumers)
		reg.Consumers = append(reg.Consumers, cr)
	}
	reg.Producers = producers[:0]
	for _, group := range producers {
		if err := codec.ValidateGroup(group); err != nil {
			skipped.add("producer group", err)
			continue
		}
		reg.Producers = append(reg.Producers, group)
	}
	return reg, skipped
}

// ClipLog cuts a client-supplied name to 64 bytes (on a rune boundary,
// "…" appended) for a log field, which zerolog quotes itself.
func ClipLog(s string) string {
	if len(s) <= 64 {
		return s
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clipName quotes a client-supplied name for a remark, cut to 64
// characters (an invalid name may be as long as the body).
func clipName(s string) string {
	if len(s) <= 64 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%.64q…", s)
}
