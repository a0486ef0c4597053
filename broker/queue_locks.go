package broker

import (
	"hash/maphash"
	"sync"
)

// stripeCount is the number of stripes per-queue state is sharded into
// (try-locks, parked polls). Fixed, so memory does not grow with the number
// of queues ever seen: a stripe only holds entries that are live right now.
const stripeCount = 64

// stripeSeed hashes names onto stripes; one seed per process.
var stripeSeed = maphash.MakeSeed()

// stripeOf returns the stripe index of a name (a topic, or a lock key).
func stripeOf(name string) int {
	return int(maphash.String(stripeSeed, name) % stripeCount)
}

// queueLockKey names one (consumerGroup, topic, queueId) a POP reads from.
// topic is the topic actually read (normal or retry topic).
type queueLockKey struct {
	group   string
	topic   string
	queueID int32
}

// queueLocks is the per-(group, topic, queueId) non-blocking try-lock of the
// POP path (RocketMQ's PopMessageProcessor.QueueLockManager, narrowed to one
// queue). A POP holds a queue's lock from the moment it reads the consumer
// offset until the writer made its checkpoints and the offset advance
// durable, so a second POP of the same queue can never read the old offset.
//
// A POP that finds the lock taken does not wait: it skips the queue and
// records contention on the entry; the holder's unlock then reports that,
// so the caller can wake parked polls for the topic (nobody misses the
// messages the skipped POP would have seen).
//
// Entries exist only while held, so the stripes stay small. All methods are
// safe for concurrent use and never block beyond a short mutex.
type queueLocks struct {
	stripes [stripeCount]lockStripe
}

type lockStripe struct {
	mu   sync.Mutex
	held map[queueLockKey]*lockEntry // REQUIRES: mu held
}

type lockEntry struct {
	contended bool // another POP skipped this queue while it was held
}

// tryLock takes the lock of k and reports success. On failure the entry is
// marked contended.
func (l *queueLocks) tryLock(k queueLockKey) bool {
	s := &l.stripes[stripeOf(k.topic)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.held[k]; ok {
		e.contended = true
		return false
	}
	if s.held == nil {
		s.held = make(map[queueLockKey]*lockEntry)
	}
	s.held[k] = &lockEntry{}
	return true
}

// unlock releases k and reports whether another POP skipped the queue while
// it was held. Unlocking a key that is not held is a no-op returning false.
func (l *queueLocks) unlock(k queueLockKey) (contended bool) {
	s := &l.stripes[stripeOf(k.topic)]
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.held[k]
	if !ok {
		return false
	}
	delete(s.held, k)
	return e.contended
}

// heldCount returns how many locks are held now (tests: every path must
// release what it took).
func (l *queueLocks) heldCount() int {
	n := 0
	for i := range l.stripes {
		s := &l.stripes[i]
		s.mu.Lock()
		n += len(s.held)
		s.mu.Unlock()
	}
	return n
}
