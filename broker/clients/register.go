package clients

// The mutating side of ClientTable: registration from HEART_BEAT, removal by
// UNREGISTER_CLIENT, connection close and expiry, and the per-connection
// channel count that bounds what one connection may register.

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrConnChannelLimit is the sentinel of ConnChannelLimitError:
// errors.Is(err, ErrConnChannelLimit) holds for it.
var ErrConnChannelLimit = errors.New("handler: too many client channels on one connection")

// ConnChannelLimitError reports a heartbeat refused by
// ClientTable.RegisterHeartbeat because connection ConnID, which holds Held
// channels, would hold Held+Adding, above Limit (--max-conn-client-channels).
// Nothing was registered or refreshed.
type ConnChannelLimitError struct {
	ConnID uint64
	Held   int
	Adding int
	Limit  int
}

// Error gives the memberships the connection holds and the heartbeat adds,
// and the --max-conn-client-channels limit.
func (e *ConnChannelLimitError) Error() string {
	return fmt.Sprintf("connection holds %d client channels and the heartbeat adds %d, above --max-conn-client-channels %d",
		e.Held, e.Adding, e.Limit)
}

// Is makes errors.Is(err, ErrConnChannelLimit) true.
func (e *ConnChannelLimitError) Is(target error) bool { return target == ErrConnChannelLimit }

// Heartbeat is what one HEART_BEAT registers once validated: the client
// channel it came on, the consumer groups and the producer groups. A group
// named twice counts once; for consumers the later entry wins.
type Heartbeat struct {
	Channel   ClientChannel
	Consumers []ConsumerRegistration
	Producers []string
}

// RegisterHeartbeat registers every group of hb for hb.Channel, or nothing:
// when maxConnChannels > 0 and the channels held by hb.Channel.ConnID plus
// the memberships hb adds (groups the clientID is not yet registered in over
// this connection) would exceed maxConnChannels, it returns a
// *ConnChannelLimitError and changes nothing (existing registrations are
// neither dropped nor refreshed). Otherwise each consumer group takes hb's
// settings and subscriptions (last heartbeat wins, as RegisterConsumer) and
// every channel's LastUpdateMillis is set to now. Channels idle past
// ClientChannelExpiry may still count until the next sweep (at most
// SweepInterval later). changed lists, sorted and once each, the consumer
// groups whose membership or subscribed topics the heartbeat changed (see
// RegisterConsumer): the groups whose members a broker tells with
// NOTIFY_CONSUMER_IDS_CHANGED (40). Safe on the event loop.
func (t *ClientTable) RegisterHeartbeat(hb Heartbeat, maxConnChannels int) (changed []string, err error) {
	nowT := t.now()
	ch := hb.Channel
	ch.LastUpdateMillis = nowT.UnixMilli()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(nowT)
	if maxConnChannels > 0 {
		adding := 0
		seen := make(map[string]struct{}, len(hb.Consumers))
		for _, reg := range hb.Consumers {
			if _, dup := seen[reg.Group]; dup {
				continue
			}
			seen[reg.Group] = struct{}{}
			if g := t.consumers[reg.Group]; g == nil || !heldOn(g.channels, &ch) {
				adding++
			}
		}
		clear(seen)
		for _, group := range hb.Producers {
			if _, dup := seen[group]; dup {
				continue
			}
			seen[group] = struct{}{}
			if !heldOn(t.producers[group], &ch) {
				adding++
			}
		}
		if held := t.connChannels[ch.ConnID]; adding > 0 && held+adding > maxConnChannels {
			return nil, &ConnChannelLimitError{ConnID: ch.ConnID, Held: held, Adding: adding, Limit: maxConnChannels}
		}
	}
	for _, reg := range hb.Consumers {
		if t.putConsumerLocked(reg, ch) {
			changed = append(changed, reg.Group)
		}
	}
	for _, group := range hb.Producers {
		t.putProducerLocked(group, ch)
	}
	slices.Sort(changed)
	return slices.Compact(changed), nil
}

// heldOn reports whether m has ch.ClientID registered over ch.ConnID.
func heldOn(m map[string]*ClientChannel, ch *ClientChannel) bool {
	old, ok := m[ch.ClientID]
	return ok && old.ConnID == ch.ConnID
}

// RegisterConsumer records that ch (a client on one connection) is a member
// of reg.Group, replacing the group's subscriptions and settings with reg's
// (the last heartbeat wins, as in ConsumerGroupInfo.updateSubscription).
// ch.LastUpdateMillis is set to now. It reports whether the group changed
// as RocketMQ's ConsumerManager.registerConsumer counts a change (its
// updateChannel or updateSubscription result): ch's clientID is new to the
// group or now comes over another connection, or the set of subscribed
// topics gained or lost a topic (a new expression for a topic already
// subscribed is not a change, as in Java). No per-connection bound applies
// (RegisterHeartbeat has one).
func (t *ClientTable) RegisterConsumer(reg ConsumerRegistration, ch ClientChannel) bool {
	nowT := t.now()
	ch.LastUpdateMillis = nowT.UnixMilli()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(nowT)
	return t.putConsumerLocked(reg, ch)
}

// RegisterProducer records ch as a member of producer group group and sets
// its LastUpdateMillis to now. No per-connection bound applies.
func (t *ClientTable) RegisterProducer(group string, ch ClientChannel) {
	nowT := t.now()
	ch.LastUpdateMillis = nowT.UnixMilli()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(nowT)
	t.putProducerLocked(group, ch)
}

// putConsumerLocked is RegisterConsumer without clock and sweep.
// REQUIRES: t.mu held for writing.
func (t *ClientTable) putConsumerLocked(reg ConsumerRegistration, ch ClientChannel) bool {
	g := t.consumers[reg.Group]
	if g == nil {
		g = &consumerGroup{channels: make(map[string]*ClientChannel)}
		t.consumers[reg.Group] = g
	}
	topicsChanged := g.takeSettings(&reg)
	old, had := g.channels[ch.ClientID]
	moved := had && old.ConnID != ch.ConnID
	t.putChannelLocked(g.channels, ch)
	t.indexLocked(ch, reg.Group, true)
	if !had || moved {
		t.log.Debug().Str("consumerGroup", reg.Group).Str("clientId", ch.ClientID).Str("remote", ch.RemoteAddr).Msg("consumer registered")
	}
	return !had || moved || topicsChanged
}

// putProducerLocked is RegisterProducer without clock and sweep.
// REQUIRES: t.mu held for writing.
func (t *ClientTable) putProducerLocked(group string, ch ClientChannel) {
	m := t.producers[group]
	if m == nil {
		m = make(map[string]*ClientChannel)
		t.producers[group] = m
	}
	t.putChannelLocked(m, ch)
	t.indexLocked(ch, group, false)
}

// putChannelLocked stores ch in m under its clientID, moving the
// per-connection count when it replaces a channel of another connection.
// It reports whether the clientID was new to m. REQUIRES: t.mu held for
// writing.
func (t *ClientTable) putChannelLocked(m map[string]*ClientChannel, ch ClientChannel) bool {
	old, ok := m[ch.ClientID]
	if ok {
		t.connReleaseLocked(old.ConnID)
	}
	m[ch.ClientID] = &ch
	t.connChannels[ch.ConnID]++
	return !ok
}

// dropChannelLocked removes clientID from m and reports whether it was
// there. REQUIRES: t.mu held for writing.
func (t *ClientTable) dropChannelLocked(m map[string]*ClientChannel, clientID string) bool {
	old, ok := m[clientID]
	if !ok {
		return false
	}
	delete(m, clientID)
	t.connReleaseLocked(old.ConnID)
	return true
}

// connReleaseLocked takes one channel off connID's count.
// REQUIRES: t.mu held for writing.
func (t *ClientTable) connReleaseLocked(connID uint64) {
	if n := t.connChannels[connID] - 1; n > 0 {
		t.connChannels[connID] = n
	} else {
		delete(t.connChannels, connID)
		delete(t.connGroups, connID)
	}
}

// indexLocked notes that ch's connection holds ch's channel in group (a
// consumer group when consumer, else a producer group). REQUIRES: t.mu
// held for writing.
func (t *ClientTable) indexLocked(ch ClientChannel, group string, consumer bool) {
	keys := t.connGroups[ch.ConnID]
	if keys == nil {
		keys = make(map[channelKey]struct{})
		t.connGroups[ch.ConnID] = keys
	}
	keys[channelKey{group: group, clientID: ch.ClientID, consumer: consumer}] = struct{}{}
}

// ConnChannels returns how many channels (consumer and producer group
// memberships, expired ones not yet swept included) are registered over
// connection connID.
func (t *ClientTable) ConnChannels(connID uint64) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.connChannels[connID]
}

// Unregister removes clientID from producerGroup and from consumerGroup
// (either may be empty, meaning "not that kind"), as UNREGISTER_CLIENT does.
// Unknown names are ignored. It reports whether the client was removed
// from the producer group and from the consumer group.
func (t *ClientTable) Unregister(clientID, producerGroup, consumerGroup string) (producerRemoved, consumerRemoved bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if producerGroup != "" {
		if m := t.producers[producerGroup]; m != nil {
			producerRemoved = t.dropChannelLocked(m, clientID)
			if len(m) == 0 {
				delete(t.producers, producerGroup)
			}
		}
	}
	if consumerGroup != "" {
		if g := t.consumers[consumerGroup]; g != nil {
			consumerRemoved = t.dropChannelLocked(g.channels, clientID)
			if len(g.channels) == 0 {
				delete(t.consumers, consumerGroup)
			}
		}
	}
	if producerRemoved || consumerRemoved {
		t.log.Debug().Str("clientId", clientID).Str("producerGroup", producerGroup).Str("consumerGroup", consumerGroup).Msg("client unregistered")
	}
	return producerRemoved, consumerRemoved
}

// RemoveConn drops every registration made over connection connID (the
// remoting connection-close hook calls it). It returns the consumer groups
// whose client list changed, sorted. It visits only the channels the
// connection registered (connGroups), not every group.
func (t *ClientTable) RemoveConn(connID uint64) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var changed []string
	for k := range t.connGroups[connID] {
		if k.consumer {
			g := t.consumers[k.group]
			if g == nil {
				continue
			}
			if ch := g.channels[k.clientID]; ch != nil && ch.ConnID == connID {
				delete(g.channels, k.clientID)
				changed = append(changed, k.group)
			}
			if len(g.channels) == 0 {
				delete(t.consumers, k.group)
			}
			continue
		}
		m := t.producers[k.group]
		if ch := m[k.clientID]; ch != nil && ch.ConnID == connID {
			delete(m, k.clientID)
		}
		if m != nil && len(m) == 0 {
			delete(t.producers, k.group)
		}
	}
	delete(t.connChannels, connID)
	delete(t.connGroups, connID)
	slices.Sort(changed)
	return slices.Compact(changed)
}

// sweepLocked removes channels idle for longer than ClientChannelExpiry, at
// most once per sweepInterval. REQUIRES: t.mu held for writing.
func (t *ClientTable) sweepLocked(nowT time.Time) {
	if nowT.Sub(t.lastSweep) < SweepInterval {
		return
	}
	t.lastSweep = nowT
	nowMillis := nowT.UnixMilli()
	for name, g := range t.consumers {
		for id, ch := range g.channels {
			if !t.alive(ch, nowMillis) {
				t.dropChannelLocked(g.channels, id)
				t.log.Info().Str("consumerGroup", name).Str("clientId", id).Msg("consumer channel expired, no heartbeat for 120s")
			}
		}
		if len(g.channels) == 0 {
			delete(t.consumers, name)
		}
	}
	for name, m := range t.producers {
		for id, ch := range m {
			if !t.alive(ch, nowMillis) {
				t.dropChannelLocked(m, id)
			}
		}
		if len(m) == 0 {
			delete(t.producers, name)
		}
	}
}
