package handler

import (
	"cmp"
	"slices"
	"sync"
)

// Wake-ups of parked polls. A wake-up bumps the epoch of its topic at once
// (so no request between snapshot and park misses it), then picks whom to
// wake:
//   - PULL and NOTIFICATION (no group): every waiter of the queue.
//   - POPs of a group none of whose waiters has a TAG filter: n per group,
//     earliest deadline first (as RocketMQ's PopLongPollingService orders
//     its requests), so a woken request that finds nothing and parks again
//     keeps its place.
//   - POPs of a group with a filtered waiter: tag-aware. A POP that runs
//     consumes the group's offset, skipping every message its filter
//     rejects, so waking a non-matching POP first would both delay and
//     lose the message for the matching one. RocketMQ checks the arriving
//     message against the parked request's filter before waking it
//     (notifyMessageArriving); popshim's append listener knows no tags, so
//     a reader goroutine reads the TAGS of the pending messages (up to
//     probeLimit) and wakes, per message in queue order, the
//     earliest-deadline waiter whose filter matches it. Non-matching POPs
//     stay parked. Probes for one (topic, queueId, group) coalesce while
//     queued.

// wakeReq describes one wake-up of the polls waiting for (topic, queueID).
type wakeReq struct {
	topic   string
	queueID int32  // anyQueue: every queue of topic
	group   string // "": every group
	n       int    // POPs to wake per consumerGroup; ≤ 0: all
	// from and to bound the queueOffsets of the messages behind the
	// wake-up ([from, to)) for tag-aware selection; from < 0: from the
	// group's consume offset; to < 0: up to the queue's maxOffset.
	from, to int64
	all      bool // wake every waiter, tags not considered (tests, diagnostics)
}

// merge widens w to cover o as well (coalesced probes).
func (w *wakeReq) merge(o wakeReq) {
	if w.n > 0 && o.n > 0 {
		w.n = min(w.n+o.n, 1<<20)
	} else {
		w.n = 0
	}
	if w.from < 0 || o.from < 0 {
		w.from = -1
	} else {
		w.from = min(w.from, o.from)
	}
	if w.to < 0 || o.to < 0 {
		w.to = -1
	} else {
		w.to = max(w.to, o.to)
	}
}

// pendingTag is the TAGS property of one pending message of a queue.
type pendingTag struct {
	queueID int32
	tag     string
	hasTag  bool // the message carries a TAGS property
}

// tagSource reads what tag-aware wake-ups need; the Broker implements it
// (pop_tag_probe.go) and every parked POP carries it.
type tagSource interface {
	// pendingTags returns the tags of up to limit messages of
	// (topic, queueID) not yet consumed by group, in queue order, starting
	// at max(from, consume offset) and ending before to (< 0: maxOffset);
	// truncated reports that more pending messages follow. Blocks on
	// RocksDB: reader goroutines only.
	pendingTags(group, topic string, queueID int32, from, to int64, limit int) (tags []pendingTag, truncated bool)
	// submitProbe queues job on a reader goroutine without blocking; false
	// when it cannot be queued.
	submitProbe(job func()) bool
}

// probeLimit bounds the pending messages one tag-aware wake-up inspects.
const probeLimit = 64

// matchesTag reports whether a POP with filter f would take a message with
// tag t (a nil filter takes everything; a filter needs a TAGS property).
func matchesTag(f *tagFilter, t pendingTag) bool {
	if f == nil {
		return true
	}
	if !t.hasTag {
		return false
	}
	_, hit := f.tags[t.tag]
	return hit
}

// wake bumps the epoch of topic and wakes every request waiting for
// (topic, queueID) and for (topic, any queue); queueID anyQueue matches
// every waiter of the topic. Used where all waiters must look (tests,
// diagnostics); the hot paths use wakeSome and appended.
func (r *pollRegistry) wake(topic string, queueID int32) {
	r.wakeFor(wakeReq{topic: topic, queueID: queueID, from: -1, to: -1, all: true})
}

// appended is the store's append listener: (topic, queueID) now has
// maxOffset as its next queueOffset. It wakes as many parked requests per
// consumerGroup as messages arrived since the last call for that queue
// (all of them when the queue is unknown or its offsets went back), by tag
// for groups with filtered POPs. Runs on the writer goroutine; never blocks
// beyond short mutexes.
func (r *pollRegistry) appended(topic string, queueID int32, maxOffset int64) {
	s := r.stripe(topic)
	s.mu.Lock()
	if s.perTopic[topic] == 0 {
		// Nobody waits: nothing to wake and nothing to remember.
		delete(s.maxOffsets, topic)
		s.bump(topic)
		s.mu.Unlock()
		return
	}
	if s.maxOffsets == nil {
		s.maxOffsets = make(map[string]map[int32]int64)
	}
	qs := s.maxOffsets[topic]
	if qs == nil {
		qs = make(map[int32]int64)
		s.maxOffsets[topic] = qs
	}
	last, known := qs[queueID]
	qs[queueID] = maxOffset
	s.mu.Unlock()
	req := wakeReq{topic: topic, queueID: queueID, from: -1, to: maxOffset}
	switch {
	case !known || maxOffset < last: // n = 0: all
	case maxOffset == last:
		req.n = 1
	default:
		req.n = int(min(maxOffset-last, 1<<20))
		req.from = last
	}
	r.wakeFor(req)
}

// wakeSome bumps the epoch of topic and wakes at most n POPs per
// consumerGroup among those waiting for (topic, queueID) or (topic, any
// queue), and every waiting PULL and NOTIFICATION. group "" matches every
// group; n <= 0 wakes all matching requests. Groups with a filtered POP
// parked are woken by the tags of their pending messages (see the top of
// this file). Called by POP when it released a contended queue lock or
// left messages behind (on a reader or the writer). The woken requests'
// onWake run inline (tag-aware ones on a reader), after the poll left the
// registry.
func (r *pollRegistry) wakeSome(topic string, queueID int32, group string, n int) {
	r.wakeFor(wakeReq{topic: topic, queueID: queueID, group: group, n: n, from: -1, to: -1})
}

// wakeFor bumps the epoch of req.topic, wakes the chosen waiters of groups
// without a filtered POP parked now, and queues a tag-aware probe for each
// group with one (see the top of this file).
func (r *pollRegistry) wakeFor(req wakeReq) {
	s := r.stripe(req.topic)
	var tagGroups map[string]tagSource
	s.mu.Lock()
	s.bump(req.topic)
	cands := s.candidates(req)
	if !req.all {
		for _, c := range cands {
			if c.p.group != "" && c.p.filter != nil && c.p.src != nil {
				if tagGroups == nil {
					tagGroups = make(map[string]tagSource)
				}
				tagGroups[c.p.group] = c.p.src
			}
		}
	}
	direct := make([]*parkedPoll, 0, len(cands))
	for _, c := range cands {
		if _, byTag := tagGroups[c.p.group]; !byTag {
			direct = append(direct, c.p)
		}
	}
	direct = pickWoken(direct, req.n)
	s.take(direct, req.topic)
	s.mu.Unlock()
	r.finish(direct)
	for g, src := range tagGroups {
		sub := req
		sub.group = g
		r.probes.start(r, src, sub)
	}
}

// waiterRef is a parked poll with the queueId of its key for the topic.
type waiterRef struct {
	p       *parkedPoll
	queueID int32
}

// candidates lists the polls of req.group ("" every group) waiting for
// req.topic on req.queueID, the topic's any-queue key, or (req.queueID
// anyQueue) any queue, earliest deadline first. REQUIRES: s.mu held.
func (s *pollStripe) candidates(req wakeReq) []waiterRef {
	var out []waiterRef
	add := func(k pollKey, set map[*parkedPoll]struct{}) {
		for p := range set {
			if req.group == "" || p.group == req.group {
				out = append(out, waiterRef{p, k.queueID})
			}
		}
	}
	if req.queueID != anyQueue {
		for _, k := range [2]pollKey{{req.topic, req.queueID}, {req.topic, anyQueue}} {
			add(k, s.waiters[k])
		}
	} else {
		for k, set := range s.waiters {
			if k.topic == req.topic {
				add(k, set)
			}
		}
	}
	slices.SortFunc(out, func(a, b waiterRef) int { return earlier(a.p, b.p) })
	return out
}

// earlier orders polls by deadline, then park order.
func earlier(a, b *parkedPoll) int {
	if c := cmp.Compare(a.deadlineMillis, b.deadlineMillis); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// take removes polls from the keys of topic in this stripe now, whoever
// ends up claiming them, so no entry outlives its poll. REQUIRES: s.mu held.
func (s *pollStripe) take(polls []*parkedPoll, topic string) {
	for _, p := range polls {
		for _, k := range p.keys {
			if k.topic == topic {
				s.remove(k, p, true)
			}
		}
	}
}

// finish claims each poll and runs its onWake.
func (r *pollRegistry) finish(polls []*parkedPoll) {
	for _, p := range polls {
		if r.claim(p, true) {
			p.onWake()
		}
	}
}

// pickWoken drops duplicates from cands (sorted by earlier) and, when
// n > 0, keeps the first n per consumerGroup, plus every poll without a
// group.
func pickWoken(cands []*parkedPoll, n int) []*parkedPoll {
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

// probeKey identifies the queued tag-aware wake-up of one group.
type probeKey struct {
	topic   string
	queueID int32
	group   string
}

// probeQueue holds tag-aware wake-ups until a reader runs them; a second
// wake-up of the same key merges into the queued one.
type probeQueue struct {
	mu      sync.Mutex
	pending map[probeKey]*wakeReq // REQUIRES: mu held
}

// start queues req (one group) for a tag-aware wake-up on a reader. When no
// reader can take it, the group is woken without looking at tags.
func (q *probeQueue) start(r *pollRegistry, src tagSource, req wakeReq) {
	k := probeKey{req.topic, req.queueID, req.group}
	q.mu.Lock()
	if cur, ok := q.pending[k]; ok {
		cur.merge(req)
		q.mu.Unlock()
		return
	}
	if q.pending == nil {
		q.pending = make(map[probeKey]*wakeReq)
	}
	q.pending[k] = &req
	q.mu.Unlock()
	if src.submitProbe(func() { r.probe(src, k) }) {
		return
	}
	if taken, ok := q.take(k); ok {
		r.wakeDirect(taken)
	}
}

// take removes and returns the queued wake-up of k.
func (q *probeQueue) take(k probeKey) (wakeReq, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	req, ok := q.pending[k]
	if !ok {
		return wakeReq{}, false
	}
	delete(q.pending, k)
	return *req, true
}

// queued returns how many probes wait for a reader (tests).
func (q *probeQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// probe runs on a reader: it reads the pending tags of the queued wake-up
// of k and wakes the matching polls.
func (r *pollRegistry) probe(src tagSource, k probeKey) {
	req, ok := r.probes.take(k)
	if !ok {
		return
	}
	tags, truncated := src.pendingTags(req.group, req.topic, req.queueID, req.from, req.to, probeLimit)
	r.wakeMatching(req, tags, truncated)
}

// wakeDirect wakes req.n polls of req.group, earliest deadline first,
// without looking at tags (no reader could run the probe).
func (r *pollRegistry) wakeDirect(req wakeReq) {
	s := r.stripe(req.topic)
	s.mu.Lock()
	cands := s.candidates(req)
	polls := make([]*parkedPoll, len(cands))
	for i, c := range cands {
		polls[i] = c.p
	}
	polls = pickWoken(polls, req.n)
	s.take(polls, req.topic)
	s.mu.Unlock()
	r.finish(polls)
}

// wakeMatching wakes, for each pending message in order, the
// earliest-deadline parked POP of req.group on its queue whose filter
// matches it, until req.n are woken (req.n ≤ 0: one per message). If none
// matches and more messages follow than were inspected, the first waiter
// is woken anyway: the inspected messages are wanted by no parked POP, so
// it may scan past them to what follows.
func (r *pollRegistry) wakeMatching(req wakeReq, tags []pendingTag, truncated bool) {
	s := r.stripe(req.topic)
	s.mu.Lock()
	cands := s.candidates(req)
	var picked []*parkedPoll
	for _, t := range tags {
		if req.n > 0 && len(picked) >= req.n {
			break
		}
		for i, c := range cands {
			if c.p == nil || (c.queueID != anyQueue && c.queueID != t.queueID) || !matchesTag(c.p.filter, t) {
				continue
			}
			picked = append(picked, c.p)
			cands[i].p = nil
			break
		}
	}
	if len(picked) == 0 && truncated && len(cands) > 0 {
		picked = append(picked, cands[0].p)
	}
	s.take(picked, req.topic)
	s.mu.Unlock()
	r.finish(picked)
}
