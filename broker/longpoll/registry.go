package longpoll

import (
	"sync"
	"sync/atomic"
	"time"
)

// Key is what a parked request waits for: new messages in one queue of
// a topic, or in any queue when queueID is -1 (anyQueue).
type Key struct {
	Topic   string
	QueueID int32
}

// AnyQueue is the queueId of a pollKey that waits for any queue of a topic.
const AnyQueue int32 = -1

// MaxPollMillis caps how long one request stays parked: pollTime of POP and
// NOTIFICATION, suspendTimeoutMillis of PULL (ms). RocketMQ clients send
// 15-20 s (the proxy clamps to 20 s); a larger value is shortened to this
// cap (the request is answered as timed out then, and the client polls
// again), so a parked request cannot hold a registry slot for hours.
const MaxPollMillis int64 = 60_000

// StartMillis returns the instant a POP or NOTIFICATION long poll counts
// from (broker clock, Unix ms): the request's bornTime (client clock), or
// nowMillis when bornTime is absent or 0 (as RocketMQ 5.5.1) or lies in the
// future. A client clock ahead of the broker's therefore never parks a
// request longer than its pollTime (capped at MaxPollMillis); RocketMQ
// counts from a future bornTime and parks for the skew too. A bornTime in
// the past is kept, so a request whose poll has already ended is still
// answered POLLING_TIMEOUT at once (PopMessageRequestHeader.isTimeoutTooMuch).
func StartMillis(nowMillis, bornMillis int64) int64 {
	if bornMillis <= 0 || bornMillis > nowMillis {
		return nowMillis
	}
	return bornMillis
}

// Deadline returns the end of a long poll that starts at startMillis
// (broker clock, Unix ms) and asks for pollMillis, capped at maxPollMillis.
func Deadline(startMillis, pollMillis int64) int64 {
	return startMillis + min(pollMillis, MaxPollMillis)
}

// QueueMax is the maxOffset (next queueOffset) a request saw for one queue
// just before it parked.
type QueueMax struct {
	Topic     string
	QueueID   int32
	MaxOffset int64
}

// Poll is one suspended request (an empty POP, a PULL with the
// suspend bit, a NOTIFICATION). Exactly one of OnWake / OnExpire runs, once:
// OnWake when an awaited queue got new messages (or a held queue lock was
// released), OnExpire when the deadline passed or the registry closed.
// Both run after the poll left the registry, on the waking goroutine (the
// writer, a reader, a timer goroutine or Close), so they must not block:
// they only re-submit the request to the reader pool or reply.
//
// The caller fills the exported fields before Park and must not change
// them afterwards.
type Poll struct {
	// Keys are the queues the request waits for.
	Keys []Key
	// Group is the consumerGroup of a POP: POPs of one group compete for
	// messages, so wake-ups are counted per group. "" (PULL, NOTIFICATION,
	// which take nothing from each other): always woken.
	Group string
	// Filter is the TAG or SQL92 subscription of a POP (nil: every
	// message). A group with a filtered POP parked is woken by the tags or
	// properties of the pending messages (see wakeMatching).
	Filter *Filter
	// Src reads the tags of pending messages for tag-aware wake-ups; nil
	// for requests without a group.
	Src TagSource
	// Seeds are the maxOffsets of the queues the request read before
	// parking; park records them for queues the registry does not know, so
	// the next append wakes as many requests as messages arrived.
	Seeds          []QueueMax
	DeadlineMillis int64  // broker clock, Unix ms
	ConnID         uint64 // remoting.Conn.ID of the request; 0: none
	OnWake         func() // messages arrived: re-run the request (must not block)
	OnExpire       func() // deadline passed or registry closed: answer the timeout (must not block)
	// OnDrop, if set, runs instead of either when the poll is released
	// without an answer because its connection closed (dropConn).
	OnDrop func()

	waitOnly bool        // set by Wait: waits for time only, not counted as parked
	seq      uint64      // park order, set by park
	done     atomic.Bool // set by whoever removes the poll first
	mu       sync.Mutex  // guards timer
	timer    *time.Timer
}

// ParkResult is the outcome of pollRegistry.park.
type ParkResult int

const (
	// parked: the request waits; onWake or onExpire will run.
	Parked ParkResult = iota
	// parkFull: the registry holds its maximum; answer POLLING_FULL.
	ParkFull
	// parkChanged: an awaited topic changed since the caller's snapshot, so
	// a wake-up may have been missed; re-run the request now.
	ParkChanged
	// parkExpired: the deadline already passed (or the registry is closed,
	// or the request's connection closed); answer the timeout now.
	ParkExpired
)

// Registry holds parked long polls, bounded by max (--max-parked-polls).
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
type Registry struct {
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
	takers  takerTable // POP requests being served, by key (see takers.go)
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
	waiters      map[Key]map[*Poll]struct{}
	perTopic     map[string]int // waiter entries per topic
	// maxOffsets is the last maxOffset reported per queue of a topic
	// (appended computes how many messages arrived).
	maxOffsets map[string]map[int32]int64
}

// NewRegistry returns an empty registry that holds at most max parked
// requests (--max-parked-polls; beyond it Park answers ParkFull). now is the
// broker clock (Unix ms) deadlines are measured on; onCount, if not nil,
// receives the parked count after every change (the gauge), on the
// goroutine that changed it. No goroutine runs until a request parks (its
// deadline timer).
func NewRegistry(max int64, now func() int64, onCount func(int64)) *Registry {
	return &Registry{max: max, now: now, onCount: onCount}
}

func (r *Registry) stripe(topic string) *pollStripe { return &r.stripes[stripeOf(topic)] }

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
func (s *pollStripe) add(k Key, p *Poll) {
	if s.waiters == nil {
		s.waiters = make(map[Key]map[*Poll]struct{})
		s.perTopic = make(map[string]int)
	}
	set := s.waiters[k]
	if set == nil {
		set = make(map[*Poll]struct{})
		s.waiters[k] = set
	}
	if _, dup := set[p]; dup {
		return
	}
	set[p] = struct{}{}
	s.perTopic[k.Topic]++
	for _, sd := range p.Seeds {
		if sd.Topic != k.Topic {
			continue
		}
		if s.maxOffsets == nil {
			s.maxOffsets = make(map[string]map[int32]int64)
		}
		qs := s.maxOffsets[sd.Topic]
		if qs == nil {
			qs = make(map[int32]int64)
			s.maxOffsets[sd.Topic] = qs
		}
		if _, known := qs[sd.QueueID]; !known {
			qs[sd.QueueID] = sd.MaxOffset
		}
	}
}

// remove drops p from k (no-op when absent). When the topic has no waiter
// left, its maxOffsets go too unless keepOffsets (a wake-up: the woken
// requests usually park again at once, and the next append needs them).
// REQUIRES: s.mu held.
func (s *pollStripe) remove(k Key, p *Poll, keepOffsets bool) {
	set := s.waiters[k]
	if _, ok := set[p]; !ok {
		return
	}
	delete(set, p)
	if len(set) == 0 {
		delete(s.waiters, k)
	}
	if s.perTopic[k.Topic]--; s.perTopic[k.Topic] > 0 {
		return
	}
	delete(s.perTopic, k.Topic)
	if keepOffsets {
		s.sweepOffsets()
	} else {
		delete(s.maxOffsets, k.Topic)
	}
}

// Snapshot returns the current epochs of the topics of keys, in order, for
// a later park.
func (r *Registry) Snapshot(keys []Key) []uint64 {
	out := make([]uint64, len(keys))
	for i, k := range keys {
		s := r.stripe(k.Topic)
		s.mu.Lock()
		out[i] = s.epochOf(k.Topic)
		s.mu.Unlock()
	}
	return out
}

// Park registers p under its keys unless the registry is full, closed, the
// deadline passed, p's connection closed, or an epoch differs from seen (as
// returned by snapshot for the same keys). Safe from any goroutine; never
// blocks.
func (r *Registry) Park(p *Poll, seen []uint64) ParkResult {
	if r.closed.Load() || (p.ConnID != 0 && r.conns.isClosed(p.ConnID)) {
		return ParkExpired
	}
	wait := p.DeadlineMillis - r.now()
	if wait <= 0 {
		return ParkExpired
	}
	if n := r.count.Add(1); n > r.max {
		r.count.Add(-1)
		return ParkFull
	}
	p.seq = r.seq.Add(1)
	for i, k := range p.Keys {
		s := r.stripe(k.Topic)
		s.mu.Lock()
		if p.done.Load() {
			// Woken through an earlier key while being registered: the
			// waker owns the poll (it ran onWake and gave the slot back).
			s.mu.Unlock()
			r.detach(p, p.Keys[:i], true)
			return Parked
		}
		if s.epochOf(k.Topic) != seen[i] {
			s.mu.Unlock()
			r.detach(p, p.Keys[:i], true)
			if !p.done.CompareAndSwap(false, true) {
				// A wake claimed it meanwhile and re-runs it: the caller
				// must not re-run it a second time.
				return Parked
			}
			r.count.Add(-1)
			return ParkChanged
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
	if p.ConnID != 0 && !r.conns.add(p) {
		// The connection closed while the poll was being parked: release it
		// without an answer (see connPolls).
		if r.claim(p, false) && p.OnDrop != nil {
			p.OnDrop()
		}
	}
	// A close racing with this park: make sure the poll does not outlive it.
	if r.closed.Load() {
		r.expire(p)
	}
	if p.done.Load() {
		// Claimed (woken) while it was being registered: drop the entries
		// added after the claim's detach.
		r.detach(p, p.Keys, true)
		if p.ConnID != 0 {
			r.conns.remove(p)
		}
	}
	return Parked
}

// ParkedCount returns how many requests are parked now.
func (r *Registry) ParkedCount() int64 { return r.count.Load() }

func (r *Registry) gauge() {
	if r.onCount != nil {
		r.onCount(r.count.Load())
	}
}

// Close expires every parked request (their onExpire runs on the calling
// goroutine) and makes later parks answer parkExpired.
func (r *Registry) Close() {
	r.closed.Store(true)
	var all []*Poll
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
