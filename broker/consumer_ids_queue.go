package broker

import (
	"maps"
	"slices"
	"sync"

	"github.com/popshim/popshim/codec"
)

// Announcements leave the operation that changed a group: it marks the
// group, and one goroutine announces each marked group to the members it
// has when the goroutine gets to it. A group changed many times meanwhile
// is announced once. Announcing inline multiplied work by the changes:
// 400 connections that each joined the same 1,000 groups by one HEART_BEAT
// took 585–800 ms of event loop per HEART_BEAT, and their closing
// (1,000 groups × up to 400 members per close) kept a healthy SEND on the
// same loop waiting 28.6 s (2026-12-07). Java announces from its
// heartbeat executor, one notice per member per change; a member that
// gets one notice instead of several rebalances the same.

// idsQueue holds the groups waiting for their announcement.
type idsQueue struct {
	mu      sync.Mutex
	dirty   map[string]bool // group → announce regardless of notifyConsumerIdsChangedEnable; REQUIRES: mu
	wake    chan struct{}   // cap 1: marks since the loop last looked
	stop    chan struct{}   // closed by stopIDs
	done    chan struct{}   // closed when the loop returned
	started bool            // REQUIRES: mu
	stopped bool            // REQUIRES: mu
}

// markIDsChanged queues groups for announcement; forced: a connection
// closed (announced even when the group's notifyConsumerIdsChangedEnable
// is false, as doChannelCloseEvent). Starts the loop on first use. Any
// goroutine; never blocks.
func (b *Broker) markIDsChanged(groups []string, forced bool) {
	q := &b.ids
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	if q.dirty == nil {
		q.dirty = make(map[string]bool, len(groups))
	}
	for _, g := range groups {
		q.dirty[g] = q.dirty[g] || forced
	}
	if !q.started {
		q.started = true
		q.wake, q.stop, q.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go b.announceLoop(q.wake, q.stop, q.done)
	}
	wake := q.wake
	q.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default:
	}
}

// announceLoop announces the marked groups until stopIDs. Its own
// goroutine.
func (b *Broker) announceLoop(wake, stop, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case <-wake:
		}
		q := &b.ids
		q.mu.Lock()
		groups := q.dirty
		q.dirty = nil
		q.mu.Unlock()
		for _, group := range slices.Sorted(maps.Keys(groups)) { // in name order, as one change's groups were
			select {
			case <-stop:
				return
			default:
			}
			b.announce(group, groups[group])
		}
	}
}

// announce sends group's notice to its live members now, unless the group
// config turns it off (and the change is not forced) or no member is left.
func (b *Broker) announce(group string, forced bool) {
	ref := b.hooks.idsNotifier.Load()
	if ref == nil {
		return
	}
	if !forced {
		if g, ok := b.Groups.Get(group); ok && !g.NotifyConsumerIdsChangedEnable {
			return
		}
	}
	info, ok := b.Clients.Consumer(group)
	if !ok || info.MessageModel == codec.MessageModelBroadcst {
		return
	}
	ref.n.NotifyConsumerIDsChanged(group, info.Channels)
}

// stopIDs stops the announcement loop and waits for it; later marks are
// dropped. Idempotent.
func (b *Broker) stopIDs() {
	q := &b.ids
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	q.stopped = true
	started := q.started
	q.mu.Unlock()
	if started {
		close(q.stop)
		<-q.done
	}
}
