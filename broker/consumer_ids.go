package broker

// Consumer-membership notices: NOTIFY_CONSUMER_IDS_CHANGED (40), which a
// Java broker sends oneway to every member of a consumer group when the
// group's membership changes (broker/.../client/ConsumerManager.java
// registerConsumer, unregisterConsumer, doChannelCloseEvent;
// DefaultConsumerIdsChangeListener with realTimeNotifyConsumerChange, its
// default; Broker2Client.notifyConsumerIdsChanged). Clients with
// client-side rebalance (Java DefaultMQPushConsumer in PULL mode, the Go
// v2 push consumer) rebalance on it at once instead of on their 20 s
// timer.
//
// A group is announced after:
//   - a HEART_BEAT that adds a member, moves one to another connection, or
//     adds or removes a subscribed topic (clients.ClientTable
//     .RegisterHeartbeat's changed groups);
//   - UNREGISTER_CLIENT that removes a member;
//   - the close of a connection that carried members (ConnClosed).
//
// It is not announced when the group's subscription-group config has
// notifyConsumerIdsChangedEnable=false (the HEART_BEAT and
// UNREGISTER_CLIENT cases, as Java reads it there; a closing connection
// notifies regardless, as doChannelCloseEvent does), when the group's
// latest heartbeat says BROADCASTING, or when no live member is left.
// Channels dropped by expiry (120 s without heartbeat) are not announced,
// as ConsumerManager.scanNotActiveChannel does not. The HEART_BEAT fast
// path of an unchanged repeat never changes membership.

import (
	"github.com/popshim/popshim/broker/clients"
)

// ConsumerIDsNotifier tells a consumer group's members that the group's
// membership changed: the protocol adapter that owns the members'
// connections installs one with SetConsumerIDsNotifier
// (handler/notify_consumer_ids_changed.go for remoting).
type ConsumerIDsNotifier interface {
	// NotifyConsumerIDsChanged sends the notice for group to each of
	// members (the group's live channels, sorted by ClientID, the newest
	// member included). A channel the adapter does not own (another
	// protocol's ConnID) or whose connection is gone is skipped.
	// Called on the broker's announcement goroutine
	// (consumer_ids_queue.go), one group at a time; it must not block or
	// wait for an answer.
	NotifyConsumerIDsChanged(group string, members []clients.ClientChannel)
}

// consumerIDsNotifierRef boxes a ConsumerIDsNotifier for atomic.Pointer.
type consumerIDsNotifierRef struct{ n ConsumerIDsNotifier }

// SetConsumerIDsNotifier installs n as the way membership changes reach
// consumers; nil: none (nothing is sent). Call before traffic; any
// goroutine.
func (b *Broker) SetConsumerIDsNotifier(n ConsumerIDsNotifier) {
	if n == nil {
		b.hooks.idsNotifier.Store(nil)
		return
	}
	b.hooks.idsNotifier.Store(&consumerIDsNotifierRef{n: n})
}

// consumerIDsChanged queues each of groups for its announcement to the
// live members it has then (consumer_ids_queue.go), as described at the
// top of this file. checkGroupConfig applies the group's
// notifyConsumerIdsChangedEnable. Any goroutine; memory only.
func (b *Broker) consumerIDsChanged(groups []string, checkGroupConfig bool) {
	if len(groups) == 0 || b.hooks.idsNotifier.Load() == nil {
		return
	}
	b.markIDsChanged(groups, !checkGroupConfig)
}
