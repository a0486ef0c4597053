package locks

import (
	"sync"
	"time"

	"github.com/popshim/popshim/codec"
)

// DefaultMaxLive is how long a lock lives after its last lock or renewal
// when nothing else is configured: Java's
// rocketmq.broker.rebalance.lockMaxLiveTime default (60000 ms).
const DefaultMaxLive = 60 * time.Second

// entry is one held queue: its holder and when it last locked it.
type entry struct {
	clientID   string
	lastMillis int64 // broker clock, Unix ms
}

// Table is the rebalance lock table of every consumer group, keyed by
// group and by message queue (topic, brokerName, queueId: a queue named
// under another brokerName is another lock, as MessageQueue.equals has
// it). Build it with New. All methods are safe for concurrent use and
// take one mutex, without I/O.
type Table struct {
	maxLiveMillis int64
	now           func() int64

	mu     sync.Mutex
	groups map[string]map[codec.MessageQueue]*entry // REQUIRES: mu held
}

// New returns an empty table whose locks live maxLive after their last
// renewal (DefaultMaxLive when maxLive <= 0). now is the clock in Unix
// milliseconds (the broker clock, so tests can move it).
func New(maxLive time.Duration, now func() int64) *Table {
	if maxLive <= 0 {
		maxLive = DefaultMaxLive
	}
	return &Table{maxLiveMillis: maxLive.Milliseconds(), now: now, groups: make(map[string]map[codec.MessageQueue]*entry)}
}

// MaxLive is the lock lifetime after the last renewal.
func (t *Table) MaxLive() time.Duration { return time.Duration(t.maxLiveMillis) * time.Millisecond }

// expired reports whether e's last renewal is more than maxLive before
// nowMillis (RebalanceLockManager.LockEntry.isExpired: strictly more).
func (t *Table) expired(e *entry, nowMillis int64) bool {
	return nowMillis-e.lastMillis > t.maxLiveMillis
}

// TryLockBatch locks each queue of mqs for clientID in group and returns
// the queues clientID holds afterwards, in the order of mqs, duplicates
// dropped: a queue that is free, whose lock expired, or that clientID
// already holds (renewed now) is locked; a queue live-locked by another
// client is left out. Expired entries of the group are dropped on the way.
// group and clientID must not be empty (the caller refuses them).
func (t *Table) TryLockBatch(group, clientID string, mqs []codec.MessageQueue) []codec.MessageQueue {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.groups[group]
	if g == nil {
		g = make(map[codec.MessageQueue]*entry, len(mqs))
		t.groups[group] = g
	}
	for mq, e := range g {
		if t.expired(e, now) {
			delete(g, mq)
		}
	}
	locked := make([]codec.MessageQueue, 0, len(mqs))
	seen := make(map[codec.MessageQueue]bool, len(mqs))
	for _, mq := range mqs {
		if seen[mq] {
			continue
		}
		seen[mq] = true
		e := g[mq]
		switch {
		case e == nil:
			g[mq] = &entry{clientID: clientID, lastMillis: now}
		case e.clientID == clientID:
			e.lastMillis = now
		default:
			continue
		}
		locked = append(locked, mq)
	}
	if len(g) == 0 {
		delete(t.groups, group)
	}
	return locked
}

// UnlockBatch releases each queue of mqs that clientID holds in group,
// expired or not, and returns how many it released. A queue held by
// another client, or not locked, is left as it is
// (RebalanceLockManager.unlockBatch logs those and goes on).
func (t *Table) UnlockBatch(group, clientID string, mqs []codec.MessageQueue) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.groups[group]
	n := 0
	for _, mq := range mqs {
		if e := g[mq]; e != nil && e.clientID == clientID {
			delete(g, mq)
			n++
		}
	}
	if g != nil && len(g) == 0 {
		delete(t.groups, group)
	}
	return n
}

// AllExpired reports whether group holds no live lock
// (RebalanceLockManager.isLockAllExpired): a Java broker's SEND of a
// consumer's retry message for such a group with a live lock (an orderly
// consumer) goes straight to the DLQ.
func (t *Table) AllExpired(group string) bool {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.groups[group] {
		if !t.expired(e, now) {
			return false
		}
	}
	return true
}

// Holder returns the client that holds mq in group with a live lock, and
// false when the queue is free or its lock expired (admin views, tests).
func (t *Table) Holder(group string, mq codec.MessageQueue) (string, bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.groups[group][mq]
	if e == nil || t.expired(e, now) {
		return "", false
	}
	return e.clientID, true
}
