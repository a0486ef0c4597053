package clients

// HEART_BEAT bounds and name checks (see handler/heart_beat.go for the behaviour):
// what a decoded HeartbeatData may contain, and the Heartbeat the
// ClientTable registers from it.

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

// Exceeded returns the remark of the first per-heartbeat bound hb breaks
// (counted as sent, before invalid entries are skipped), or "" when it
// breaks none. The remark names the flag, the count and the bound.
func (l Limits) Exceeded(hb *codec.HeartbeatData) string {
	if n := len(hb.ConsumerDataSet); n > l.groups {
		return fmt.Sprintf("heartbeat lists %d consumer groups, above --max-heartbeat-groups %d", n, l.groups)
	}
	if n := len(hb.ProducerDataSet); n > l.groups {
		return fmt.Sprintf("heartbeat lists %d producer groups, above --max-heartbeat-groups %d", n, l.groups)
	}
	for i := range hb.ConsumerDataSet {
		cd := &hb.ConsumerDataSet[i]
		if n := len(cd.SubscriptionDataSet); n > l.subscriptions {
			return fmt.Sprintf("heartbeat consumer group %s lists %d subscriptions, above --max-heartbeat-subscriptions %d",
				clipName(cd.GroupName), n, l.subscriptions)
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

// PlanHeartbeat turns a decoded heartbeat into what the ClientTable
// registers for ch: consumer groups and producer groups whose names pass
// codec.ValidateGroup, and per consumer group the subscriptions whose topic
// passes RocketMQ's topic rules (validateTopicName: %RETRY% names may carry
// the V2 '+'). Everything dropped is counted in skipped. It aliases hb's
// strings and slices of tags (hb is owned by the handler). A consumer group
// listed twice is registered once, with its later entry (as successive
// registrations would leave it), so it costs one retry-topic and
// group-config check.
func PlanHeartbeat(hb *codec.HeartbeatData, ch ClientChannel) (reg Heartbeat, skipped SkippedEntries) {
	reg.Channel = ch
	reg.Consumers = make([]ConsumerRegistration, 0, len(hb.ConsumerDataSet))
	at := make(map[string]int, len(hb.ConsumerDataSet)) // group → index in reg.Consumers
	for i := range hb.ConsumerDataSet {
		cd := &hb.ConsumerDataSet[i]
		if err := codec.ValidateGroup(cd.GroupName); err != nil {
			skipped.add("consumer group", err)
			continue
		}
		cr := ConsumerRegistration{
			Group: cd.GroupName, ConsumeType: cd.ConsumeType, MessageModel: cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere, Subscriptions: make([]Subscription, 0, len(cd.SubscriptionDataSet)),
		}
		for _, s := range cd.SubscriptionDataSet {
			if err := meta.ValidateTopicName(s.Topic); err != nil {
				skipped.add("subscription of consumer group "+cd.GroupName, err)
				continue
			}
			cr.Subscriptions = append(cr.Subscriptions, Subscription{
				Topic: s.Topic, SubString: s.SubString, ExpressionType: s.ExpressionType,
				Tags: s.TagsSet, SubVersion: s.SubVersion,
			})
		}
		if i, dup := at[cr.Group]; dup {
			reg.Consumers[i] = cr
			continue
		}
		at[cr.Group] = len(reg.Consumers)
		reg.Consumers = append(reg.Consumers, cr)
	}
	for _, pd := range hb.ProducerDataSet {
		if err := codec.ValidateGroup(pd.GroupName); err != nil {
			skipped.add("producer group", err)
			continue
		}
		reg.Producers = append(reg.Producers, pd.GroupName)
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
