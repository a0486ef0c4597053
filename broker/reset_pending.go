package broker

import (
	"sync"
	"sync/atomic"
)

// pendingResets holds the queues whose consume offset an admin reset
// (ResetOffset) moved and whose PULL consumer has not been told yet: the
// server-side reset of a 5.x broker (ConsumerOffsetManager
// .resetOffsetTable with useServerSideResetOffset, true by default).
// While a queue's entry is pending, UPDATE_CONSUMER_OFFSET and a PULL's
// piggy-backed commit for it are ignored, so a running push consumer's
// periodic commit of its old position cannot undo the reset; the next
// PULL of the queue takes the entry and answers PULL_OFFSET_MOVED (21)
// with nextBeginOffset = the reset offset, after which the client commits
// that offset and pulls from it. Memory only, as Java's (a restart
// forgets pending entries; the reset offsets themselves are durable).
// The zero value is ready; any goroutine may call its methods. Every
// PULL and UPDATE_CONSUMER_OFFSET asks, and the table is almost always
// empty, so they read an atomic count first and take the mutex only when
// some reset is pending.
type pendingResets struct {
	mu sync.Mutex
	m  map[resetKey]int64
	n  atomic.Int64 // len(m), written under mu
}

// resetKey names one queue of a consumer group.
type resetKey struct {
	group, topic string
	queueID      int32
}

// assign records offset as the pending reset of the queue (replacing an
// earlier one).
func (p *pendingResets) assign(group, topic string, queueID int32, offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[resetKey]int64)
	}
	p.m[resetKey{group, topic, queueID}] = offset
	p.n.Store(int64(len(p.m)))
}

// drop removes the queue's entry if it still holds offset (a reset whose
// write failed).
func (p *pendingResets) drop(group, topic string, queueID int32, offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := resetKey{group, topic, queueID}
	if v, ok := p.m[k]; ok && v == offset {
		delete(p.m, k)
		p.n.Store(int64(len(p.m)))
	}
}

// pending reports whether the queue has an entry.
func (p *pendingResets) pending(group, topic string, queueID int32) bool {
	if p.n.Load() == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[resetKey{group, topic, queueID}]
	return ok
}

// take removes and returns the queue's entry.
func (p *pendingResets) take(group, topic string, queueID int32) (int64, bool) {
	if p.n.Load() == 0 {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	k := resetKey{group, topic, queueID}
	v, ok := p.m[k]
	if ok {
		delete(p.m, k)
		p.n.Store(int64(len(p.m)))
	}
	return v, ok
}
