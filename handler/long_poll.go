package handler

import (
	"sync"
	"sync/atomic"
	"time"
)

// pollKey is what a parked request waits for: new messages in one queue of
// a topic, or in any queue when queueID is -1 (anyQueue).
type pollKey struct {
	topic   string
	queueID int32
}

// anyQueue is the queueId of a pollKey that waits for any queue of a topic.
const anyQueue int32 = -1

// maxPollMillis caps how long one request stays parked: pollTime of POP and
// NOTIFICATION, suspendTimeoutMillis of PULL (ms). RocketMQ clients send
// 15-20 s (the proxy clamps to 20 s); a larger value is shortened to this
// cap (the request is answered as timed out then, and the client polls
// again), so a parked request cannot hold a registry slot for hours.
const maxPollMillis int64 = 60_000

// pollDeadline returns the end of a long poll that starts at startMillis
// (broker clock, Unix ms) and asks for pollMillis, capped at maxPollMillis.
func pollDeadline(startMillis, pollMillis int64) int64 {
	return startMillis + min(pollMillis, maxPollMillis)
}

// queueMax is the maxOffset (next queueOffset) a request saw for one queue
// just before it parked.
type queueMax struct {
	topic     string
	queueID   int32
	maxOffset int64
}

// parkedPoll is one suspended request (an empty POP, a PULL with the
// suspend bit, a NOTIFICATION). Exactly one of onWake / onExpire runs, once:
// onWake when an awaited queue got new messages (or a held queue lock was
// released), onExpire when the deadline passed or the registry closed.
// Both run after the poll left the registry, on the waking goroutine (the
// writer, a reader, a timer goroutine or Close), so they must not block:
// they only re-submit the request to the reader pool or reply.
type parkedPoll struct {
	keys []pollKey
	// group is the consumerGroup of a POP: POPs of one group compete for
	// messages, so wake-ups are counted per group. "" (PULL, NOTIFICATION,
	// which take nothing from each other): always woken.
	group string
	// filter is the TAG subscription of a POP (nil: every message). A
	// group with a filtered POP parked is woken by tag (see wakeMatching).
	filter *tagFilter
	// src reads the tags of pending messages for tag-aware wake-ups; nil
	// for requests without a group.
	src tagSource
	// seeds are the maxOffsets of the queues the request read before
	// parking; park records them for queues the registry does not know, so
	// the next append wakes as many requests as messages arrived.
	seeds          []queueMax
	deadlineMillis int64  // broker clock, Unix ms
	connID         uint64 // remoting.Conn.ID of the request; 0: none
	onWake         func()
	onExpire       func()
	// onDrop, if set, runs instead of either when the poll is released
	// without an answer because its connection closed (dropConn).
	onDrop func()

	seq   uint64      // park order, set by park
	done  atomic.Bool // set by whoever removes the poll first
	mu    sync.Mutex  // guards timer
	timer *time.Timer
}

// parkResult is the outcome of pollRegistry.park.
type parkResult int

const (
	// parked: the request waits; onWake or onExpire will run.
	parked parkResult = iota
	// parkFull: the registry holds its maximum; answer POLLING_FULL.
	parkFull
	// parkChanged: an awaited topic changed since the caller's snapshot, so
	// a wake-up may have been missed; re-run the request now.
	parkChanged
	// parkExpired: the deadline already passed (or the registry is closed,
	// or the request's connection closed); answer the timeout now.
	parkExpired
)

// pollRegistry holds parked long polls, bounded by max (--max-parked-polls).
// Waiters are sharded into fixed stripes by topic. Each topic carries an
// epoch that moves on every wake of it; a request snapshots the epochs of
// its topics before reading the store and parks only if none moved, so a
// message appended between the read and the park is never missed (worst
// case: one spurious re-run).
//
// Per-topic bookkeeping is bounded: waiter counts live while a topic has
// waiters; a queue's last maxOffset lives while its topic has waiters and,
// after a wake-up took the last one, until an append finds nobody waiting,
// the topic's last waiter expires or disconnects, or the stripe sweeps
// idle topics (beyond idleTopicsPerStripe); epochs of topics without
// waiters are swept the same way. So memory follows the parked requests,
// not the topics ever seen.
type pollRegistry struct {
	max     int64
	now     func() int64 // broker clock, Unix ms
	count   atomic.Int64
	parks   atomic.Uint64 // successful parks since start (tests, diagnostics)
	seq     atomic.Uint64 // park order of parkedPoll.seq
	popRuns atomic.Uint64 // POP executions since start (tests, diagnostics)
	closed  atomic.Bool
	onCount func(n int64) // gauge update; may be nil
	stripes [stripeCount]pollStripe
	conns   connPolls  // parked polls by connection (released on close)
	takers  takerTable // POP requests being served, by key (see long_poll_takers.go)
	probes  probeQueue // tag-aware wake-ups waiting for a reader
}

// idleTopicsPerStripe is how many topics without waiters a stripe keeps
// epochs or maxOffsets for (beyond twice the topics with waiters) before it
// sweeps them; a sweep costs one pass over the map, so it is amortised
// over at least this many additions.
const idleTopicsPerStripe = 256

type pollStripe struct {
	mu sync.Mutex
	// clock is the last epoch value handed out; floor is the epoch of
	// every topic without an entry in epochs. Epochs only grow: a sweep
	// drops idle entries and raises floor to clock (a request whose
	// snapshot predates a sweep re-runs once). REQUIRES: mu held (all
	// fields).
	clock, floor uint64
	epochs       map[string]uint64
	waiters      map[pollKey]map[*parkedPoll]struct{}
	perTopic     map[string]int // waiter entries per topic
	// maxOffsets is the last maxOffset reported per queue of a topic
	// (appended computes how many messages arrived).
	maxOffsets map[string]map[int32]int64
}

func newPollRegistry(max int64, now func() int64, onCount func(int64)) *pollRegistry {
	return &pollRegistry{max: max, now: now, onCount: onCount}
}

func (r *pollRegistry) stripe(topic string) *pollStripe { return &r.stripes[stripeOf(topic)] }

// epochOf returns the current epoch of topic. REQUIRES: s.mu held.
func (s *pollStripe) epochOf(topic string) uint64 {
	if e, ok := s.epochs[topic]; ok {
		return e
	}
	return s.floor
}

// bump moves the epoch of topic forward, sweeping idle topics' epochs
// when there are too many. REQUIRES: s.mu held.
func (s *pollStripe) bump(topic string) {
	s.clock++
	if s.epochs == nil {
		s.epochs = make(map[string]uint64)
	}
	s.epochs[topic] = s.clock
	if len(s.epochs) > idleTopicsPerStripe+2*len(s.perTopic) {
		for t := range s.epochs {
			if s.perTopic[t] == 0 {
				delete(s.epochs, t)
			}
		}
		s.floor = s.clock
	}
}

// sweepOffsets drops the maxOffsets of topics without waiters when there
// are too many.
// REQUIRES: s.mu held.
func (s *pollStripe) sweepOffsets() {
	if len(s.maxOffsets) <= idleTopicsPerStripe+2*len(s.perTopic) {
		return
	}
	for t := range s.maxOffsets {
		if s.perTopic[t] == 0 {
			delete(s.maxOffsets, t)
		}
	}
}

// add registers p under k and records p's seeds for k's topic where the
// queue's maxOffset is unknown. REQUIRES: s.mu held.
func (s *pollStripe) add(k pollKey, p *parkedPoll) {
	if s.waiters == nil {
		s.waiters = make(map[pollKey]map[*parkedPoll]struct{})
		s.perTopic = make(map[string]int)
	}
	set := s.waiters[k]
	if set == nil {
		set = make(map[*parkedPoll]struct{})
		s.waiters[k] = set
	}
	if _, dup := set[p]; dup {
		return
	}
	set[p] = struct{}{}
	s.perTopic[k.topic]++
	for _, sd := range p.seeds {
		if sd.topic != k.topic {
			continue
		}
		if s.maxOffsets == nil {
			s.maxOffsets = make(map[string]map[int32]int64)
		}
		qs := s.maxOffsets[sd.topic]
		if qs == nil {
			qs = make(map[int32]int64)
			s.maxOffsets[sd.topic] = qs
		}
		if _, known := qs[sd.queueID]; !known {
			qs[sd.queueID] = sd.maxOffset
		}
	}
}

// remove drops p from k (no-op when absent). When the topic has no waiter
// left, its maxOffsets go too unless keepOffsets (a wake-up: the woken
// requests usually park again at once, and the next append needs them).
// REQUIRES: s.mu held.
func (s *pollStripe) remove(k pollKey, p *parkedPoll, keepOffsets bool) {
	set := s.waiters[k]
	if _, ok := set[p]; !ok {
		return
	}
	delete(set, p)
	if len(set) == 0 {
		delete(s.waiters, k)
	}
	if s.perTopic[k.topic]--; s.perTopic[k.topic] > 0 {
		return
	}
	delete(s.perTopic, k.topic)
	if keepOffsets {
		s.sweepOffsets()
	} else {
		delete(s.maxOffsets, k.topic)
	}
}

// snapshot returns the current epochs of the topics of keys, in order, for
// a later park.
func (r *pollRegistry) snapshot(keys []pollKey) []uint64 {
	out := make([]uint64, len(keys))
	for i, k := range keys {
		s := r.stripe(k.topic)
		s.mu.Lock()
		out[i] = s.epochOf(k.topic)
		s.mu.Unlock()
	}
	return out
}

// park registers p under its keys unless the registry is full, closed, the
// deadline passed, p's connection closed, or an epoch differs from seen (as
// returned by snapshot for the same keys). Safe from any goroutine; never
// blocks.
func (r *pollRegistry) park(p *parkedPoll, seen []uint64) parkResult {
	if r.closed.Load() || (p.connID != 0 && r.conns.isClosed(p.connID)) {
		return parkExpired
	}
	wait := p.deadlineMillis - r.now()
	if wait <= 0 {
		return parkExpired
	}
	if n := r.count.Add(1); n > r.max {
		r.count.Add(-1)
		return parkFull
	}
	p.seq = r.seq.Add(1)
	for i, k := range p.keys {
		s := r.stripe(k.topic)
		s.mu.Lock()
		if p.done.Load() {
			// Woken through an earlier key while being registered: the
			// waker owns the poll (it ran onWake and gave the slot back).
			s.mu.Unlock()
			r.detach(p, p.keys[:i], true)
			return parked
		}
		if s.epochOf(k.topic) != seen[i] {
			s.mu.Unlock()
			r.detach(p, p.keys[:i], true)
			if !p.done.CompareAndSwap(false, true) {
				// A wake claimed it meanwhile and re-runs it: the caller
				// must not re-run it a second time.
				return parked
			}
			r.count.Add(-1)
			return parkChanged
		}
		s.add(k, p)
		s.mu.Unlock()
	}
	r.parks.Add(1)
	r.gauge()
	p.mu.Lock()
	if !p.done.Load() {
		p.timer = time.AfterFunc(time.Duration(wait)*time.Millisecond, func() { r.expire(p) })
	}
	p.mu.Unlock()
	if p.connID != 0 && !r.conns.add(p) {
		// The connection closed while the poll was being parked: release it
		// without an answer (see connPolls).
		if r.claim(p, false) && p.onDrop != nil {
			p.onDrop()
		}
	}
	// A close racing with this park: make sure the poll does not outlive it.
	if r.closed.Load() {
		r.expire(p)
	}
	if p.done.Load() {
		// Claimed (woken) while it was being registered: drop the entries
		// added after the claim's detach.
		r.detach(p, p.keys, true)
		if p.connID != 0 {
			r.conns.remove(p)
		}
	}
	return parked
}

// detach removes p from the stripes of keys (see pollStripe.remove for
// keepOffsets).
func (r *pollRegistry) detach(p *parkedPoll, keys []pollKey, keepOffsets bool) {
	for _, k := range keys {
		s := r.stripe(k.topic)
		s.mu.Lock()
		s.remove(k, p, keepOffsets)
		s.mu.Unlock()
	}
}

// claim makes the caller the one that finishes p: it removes p from every
// stripe and stops its timer. It reports false when someone else already
// claimed p. woken: p leaves because messages arrived (keeps the per-queue
// maxOffsets of its topics, see pollStripe.remove).
func (r *pollRegistry) claim(p *parkedPoll, woken bool) bool {
	if !p.done.CompareAndSwap(false, true) {
		return false
	}
	r.detach(p, p.keys, woken)
	if p.connID != 0 {
		r.conns.remove(p)
	}
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	r.count.Add(-1)
	r.gauge()
	return true
}

func (r *pollRegistry) expire(p *parkedPoll) {
	if r.claim(p, false) {
		p.onExpire()
	}
}

// parkedCount returns how many requests are parked now.
func (r *pollRegistry) parkedCount() int64 { return r.count.Load() }

func (r *pollRegistry) gauge() {
	if r.onCount != nil {
		r.onCount(r.count.Load())
	}
}

// close expires every parked request (their onExpire runs on the calling
// goroutine) and makes later parks answer parkExpired.
func (r *pollRegistry) close() {
	r.closed.Store(true)
	var all []*parkedPoll
	for i := range r.stripes {
		s := &r.stripes[i]
		s.mu.Lock()
		for _, set := range s.waiters {
			for p := range set {
				all = append(all, p)
			}
		}
		s.mu.Unlock()
	}
	for _, p := range all {
		r.expire(p)
	}
}
