package clients

// ClientTable's side of the HEART_BEAT fast path (handler/heart_beat.go): refresh
// the registrations a connection's unchanged heartbeat made, provided they
// are all still there.

import "slices"

// RefreshHeartbeat is RegisterHeartbeat for a heartbeat the table accepted
// before over hb.Channel.ConnID: when hb.Channel.ClientID is still
// registered over that connection in every consumer group and every
// producer group of hb, it changes the table exactly as
// RegisterHeartbeat(hb, limit) would (expired channels swept, each consumer
// group taking hb's settings and subscriptions, every channel of hb set to
// hb.Channel with LastUpdateMillis = now) and returns true; no
// --max-conn-client-channels limit can refuse it, since it adds no
// membership. When one of those channels is gone (UNREGISTER_CLIENT,
// connection close, expiry, or the clientID moved to another connection)
// it returns false having only swept expired channels, and the caller must
// take the full path. It does not allocate when the consumer groups'
// settings are already hb's.
//
// REQUIRES: the subscriptions of each ConsumerRegistration in hb have
// distinct topics (normalizeSubscriptions). Safe on the event loop.
func (t *ClientTable) RefreshHeartbeat(hb *Heartbeat) bool {
	nowT := t.now()
	ch := hb.Channel
	ch.LastUpdateMillis = nowT.UnixMilli()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(nowT)
	for i := range hb.Consumers {
		if g := t.consumers[hb.Consumers[i].Group]; g == nil || !heldOn(g.channels, &ch) {
			return false
		}
	}
	for _, group := range hb.Producers {
		if !heldOn(t.producers[group], &ch) {
			return false
		}
	}
	for i := range hb.Consumers {
		reg := &hb.Consumers[i]
		g := t.consumers[reg.Group]
		if !g.hasSettings(reg) {
			g.takeSettings(reg)
		}
		*g.channels[ch.ClientID] = ch
	}
	for _, group := range hb.Producers {
		*t.producers[group][ch.ClientID] = ch
	}
	return true
}

// takeSettings replaces g's consumeType, messageModel, consumeFromWhere and
// subscriptions with reg's (a later subscription of a topic wins). It
// reports whether the set of subscribed topics changed (a topic added or
// removed). REQUIRES: the table's mu held for writing.
func (g *consumerGroup) takeSettings(reg *ConsumerRegistration) bool {
	subs := make(map[string]Subscription, len(reg.Subscriptions))
	for _, s := range reg.Subscriptions {
		subs[s.Topic] = s
	}
	changed := len(subs) != len(g.subscriptions)
	if !changed {
		for topic := range subs {
			if _, ok := g.subscriptions[topic]; !ok {
				changed = true
				break
			}
		}
	}
	g.consumeType, g.messageModel, g.consumeFromWhere = reg.ConsumeType, reg.MessageModel, reg.ConsumeFromWhere
	g.subscriptions = subs
	return changed
}

// hasSettings reports whether takeSettings(reg) would leave g as it is.
// REQUIRES: reg's subscription topics are distinct; the table's mu held.
func (g *consumerGroup) hasSettings(reg *ConsumerRegistration) bool {
	if g.consumeType != reg.ConsumeType || g.messageModel != reg.MessageModel ||
		g.consumeFromWhere != reg.ConsumeFromWhere || len(g.subscriptions) != len(reg.Subscriptions) {
		return false
	}
	for i := range reg.Subscriptions {
		s := &reg.Subscriptions[i]
		old, ok := g.subscriptions[s.Topic]
		if !ok || old.SubString != s.SubString || old.ExpressionType != s.ExpressionType ||
			old.SubVersion != s.SubVersion || (old.Tags == nil) != (s.Tags == nil) || !slices.Equal(old.Tags, s.Tags) {
			return false
		}
	}
	return true
}
