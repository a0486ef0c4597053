package clients

import (
	"slices"
	"strings"
)

// Producers returns copies of the live channels of producer group group,
// sorted by ClientID, and false when the group has no live channel (Java
// drops a producer group with its last channel) (GET_PRODUCER_CONNECTION_LIST answers "not exist"
// then). Safe on the event loop.
func (t *ClientTable) Producers(group string) ([]ClientChannel, bool) {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := t.liveSorted(t.producers[group], nowMillis)
	return out, len(out) > 0
}

// ProducerGroups returns every producer group with a live channel and
// copies of its live channels sorted by ClientID (GET_ALL_PRODUCER_INFO,
// ProducerManager.getProducerTable). Safe on the event loop.
func (t *ClientTable) ProducerGroups() map[string][]ClientChannel {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make(map[string][]ClientChannel, len(t.producers))
	for group, m := range t.producers {
		if chs := t.liveSorted(m, nowMillis); len(chs) > 0 {
			out[group] = chs
		}
	}
	return out
}

// liveSorted copies the live channels of m sorted by ClientID; nil when
// none is. REQUIRES: t.mu held.
func (t *ClientTable) liveSorted(m map[string]*ClientChannel, nowMillis int64) []ClientChannel {
	var out []ClientChannel
	for _, ch := range m {
		if t.alive(ch, nowMillis) {
			out = append(out, *ch)
		}
	}
	slices.SortFunc(out, func(a, b ClientChannel) int { return strings.Compare(a.ClientID, b.ClientID) })
	return out
}

// GroupsSubscribing returns the consumer groups, sorted, with a live member
// whose latest heartbeat subscribes topic (RocketMQ's
// ConsumerManager.queryTopicConsumeByWho). Safe on the event loop.
func (t *ClientTable) GroupsSubscribing(topic string) []string {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	for name, g := range t.consumers {
		if _, ok := g.subscriptions[topic]; !ok {
			continue
		}
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
