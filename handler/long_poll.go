package handler

import (
	"cmp"
	"slices"
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

// parkedPoll is one suspended request (an empty POP, a PULL with the
// suspend bit, a NOTIFICATION). Exactly one of onWake / onExpire runs, once:
// onWake when an awaited queue got new messages (or a held queue lock was
// released), onExpire when the deadline passed or the registry closed.
// Both run after the poll left the registry, on the waking goroutine (the
// writer, a timer goroutine or Close), so they must not block: they only
// re-submit the request to the reader pool or reply.
type parkedPoll struct {
	keys []pollKey
	// group is the consumerGroup of a POP: POPs of one group compete for
	// messages, so wakeSome counts its wake-ups per group. "" (PULL,
	// NOTIFICATION, which take nothing from each other): always woken.
	group          string
	deadlineMillis int64  // broker clock, Unix ms
	connID         uint64 // remoting.Conn.ID of the request; 0: none
	onWake         func()
	onExpire       func()

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
// epoch bumped by every wake of it; a request snapshots the epochs of its
// topics before reading the store and parks only if none moved, so a
// message appended between the read and the park is never missed (worst
// case: one spurious re-run).
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
	conns   connPolls // parked polls by connection (released on close)
}

type pollStripe struct {
	mu sync.Mutex
	// epochs counts wakes per topic; bounded by the number of topics that
	// ever received messages. REQUIRES: mu held.
	epochs  map[string]uint64
	waiters map[pollKey]map[*parkedPoll]struct{} // REQUIRES: mu held
	// maxOffsets is the last maxOffset the append listener reported per
	// queue (appended computes how many messages arrived). REQUIRES: mu held.
	maxOffsets map[pollKey]int64
}

func newPollRegistry(max int64, now func() int64, onCount func(int64)) *pollRegistry {
	return &pollRegistry{max: max, now: now, onCount: onCount}
}

// snapshot returns the current epochs of the stripes of keys, in order, for
// a later park.
func (r *pollRegistry) snapshot(keys []pollKey) []uint64 {
	out := make([]uint64, len(keys))
	for i, k := range keys {
		s := &r.stripes[stripeOf(k.topic)]
		s.mu.Lock()
		out[i] = s.epochs[k.topic]
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
		s := &r.stripes[stripeOf(k.topic)]
		s.mu.Lock()
		if p.done.Load() {
			// Woken through an earlier key while being registered: the
			// waker owns the poll (it ran onWake and gave the slot back).
			s.mu.Unlock()
			r.detach(p, p.keys[:i])
			return parked
		}
		if s.epochs[k.topic] != seen[i] {
			s.mu.Unlock()
			r.detach(p, p.keys[:i])
			if !p.done.CompareAndSwap(false, true) {
				// A wake claimed it meanwhile and re-runs it: the caller
				// must not re-run it a second time.
				return parked
			}
			r.count.Add(-1)
			return parkChanged
		}
		if s.waiters == nil {
			s.waiters = make(map[pollKey]map[*parkedPoll]struct{})
		}
		set := s.waiters[k]
		if set == nil {
			set = make(map[*parkedPoll]struct{})
			s.waiters[k] = set
		}
		set[p] = struct{}{}
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
		r.claim(p)
	}
	// A close racing with this park: make sure the poll does not outlive it.
	if r.closed.Load() {
		r.expire(p)
	}
	if p.done.Load() {
		// Claimed (woken) while it was being registered: drop the entries
		// added after the claim's detach.
		r.detach(p, p.keys)
		if p.connID != 0 {
			r.conns.remove(p)
		}
	}
	return parked
}

// detach removes p from the stripes of keys.
func (r *pollRegistry) detach(p *parkedPoll, keys []pollKey) {
	for _, k := range keys {
		s := &r.stripes[stripeOf(k.topic)]
		s.mu.Lock()
		if set := s.waiters[k]; set != nil {
			delete(set, p)
			if len(set) == 0 {
				delete(s.waiters, k)
			}
		}
		s.mu.Unlock()
	}
}

// claim makes the caller the one that finishes p: it removes p from every
// stripe and stops its timer. It reports false when someone else already
// claimed p.
func (r *pollRegistry) claim(p *parkedPoll) bool {
	if !p.done.CompareAndSwap(false, true) {
		return false
	}
	r.detach(p, p.keys)
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
	if r.claim(p) {
		p.onExpire()
	}
}

// wake bumps the epoch of topic and wakes every request waiting for
// (topic, queueID) and for (topic, any queue); queueID anyQueue matches
// every waiter of the topic. Used where all waiters must look (tests,
// diagnostics); the hot paths use wakeSome.
func (r *pollRegistry) wake(topic string, queueID int32) { r.wakeSome(topic, queueID, "", 0) }

// appended is the store's append listener: (topic, queueID) now has
// maxOffset as its next queueOffset. It wakes as many parked requests per
// consumerGroup as messages arrived since the last call for that queue
// (all of them the first time a queue is seen, or when its offsets went
// back). Runs on the writer goroutine; never blocks beyond short mutexes.
func (r *pollRegistry) appended(topic string, queueID int32, maxOffset int64) {
	k := pollKey{topic, queueID}
	s := &r.stripes[stripeOf(topic)]
	s.mu.Lock()
	if s.maxOffsets == nil {
		s.maxOffsets = make(map[pollKey]int64)
	}
	last, ok := s.maxOffsets[k]
	s.maxOffsets[k] = maxOffset
	s.mu.Unlock()
	n := 0 // all
	if ok && maxOffset > last {
		n = int(min(maxOffset-last, 1<<20))
	}
	r.wakeSome(topic, queueID, "", n)
}

// wakeSome bumps the epoch of topic and wakes at most n requests per
// consumerGroup among those waiting for (topic, queueID) or (topic, any
// queue) and every waiting PULL and NOTIFICATION, the POPs with the
// earliest deadline first (as RocketMQ's
// PopLongPollingService orders its polls), so a woken request that finds
// nothing and parks again keeps its place. group "" matches every group;
// n <= 0 wakes all matching requests. Called by the append listener (on
// the writer), by POP when it released a contended queue lock or left
// messages behind (on a reader or the writer). The woken requests' onWake
// run inline, after the poll left the registry.
func (r *pollRegistry) wakeSome(topic string, queueID int32, group string, n int) {
	s := &r.stripes[stripeOf(topic)]
	var woken []*parkedPoll
	s.mu.Lock()
	if s.epochs == nil {
		s.epochs = make(map[string]uint64)
	}
	s.epochs[topic]++
	for k, set := range s.waiters {
		if k.topic != topic || (queueID != anyQueue && k.queueID != anyQueue && k.queueID != queueID) {
			continue
		}
		for p := range set {
			if group == "" || p.group == group {
				woken = append(woken, p)
			}
		}
	}
	woken = pickWoken(woken, n)
	// Take the chosen polls out of this stripe now, whoever ends up
	// claiming them, so no entry outlives its poll.
	for _, p := range woken {
		for _, k := range p.keys {
			if set := s.waiters[k]; set != nil && k.topic == topic {
				delete(set, p)
				if len(set) == 0 {
					delete(s.waiters, k)
				}
			}
		}
	}
	s.mu.Unlock()
	for _, p := range woken {
		if r.claim(p) {
			p.onWake()
		}
	}
}

// pickWoken drops duplicates from cands and, when n > 0, keeps the n with
// the earliest deadline (then park order) per consumerGroup, plus every
// poll without a group.
func pickWoken(cands []*parkedPoll, n int) []*parkedPoll {
	if len(cands) < 2 {
		return cands
	}
	slices.SortFunc(cands, func(a, b *parkedPoll) int {
		if c := cmp.Compare(a.deadlineMillis, b.deadlineMillis); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	cands = slices.Compact(cands)
	if n <= 0 {
		return cands
	}
	perGroup := make(map[string]int)
	out := cands[:0]
	for _, p := range cands {
		if p.group == "" || perGroup[p.group] < n {
			perGroup[p.group]++
			out = append(out, p)
		}
	}
	return out
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
