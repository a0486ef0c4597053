package clients

import "slices"

// Producers returns copies of the live channels of producer group group,
// sorted by ClientID, and false when the group has no live channel (Java
// drops a producer group with its last channel) (GET_PRODUCER_CONNECTION_LIST answers "not exist"
// then). Safe on the event loop.
func (t *ClientTable) Producers(group string) ([]ClientChannel, bool) {
	nowMillis := t.now().UnixMilli()
	t.mu.RLock()
	defer t.mu.RUnlock()
	m, ok := t.producers[group]
	if !ok {
		return nil, false
	}
	out := make([]ClientChannel, 0, len(m))
	for _, ch := range m {
		if t.alive(ch, nowMillis) {
			out = append(out, *ch)
		}
	}
	slices.SortFunc(out, func(a, b ClientChannel) int {
		switch {
		case a.ClientID < b.ClientID:
			return -1
		case a.ClientID > b.ClientID:
			return 1
		}
		return 0
	})
	return out, len(out) > 0
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
