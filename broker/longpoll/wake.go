package longpoll

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
//     probeLimit; with an SQL92 waiter in the group, their whole
//     properties) and wakes, per message in queue order, the
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
	props    bool // a waiter has an SQL92 filter: probes read properties
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
	w.props = w.props || o.props
}

// PendingTag is the TAGS property of one pending message of a queue and,
// when the probe asked for them, its properties.
type PendingTag struct {
	QueueID  int32  // the queue of the message
	Tag      string // its TAGS property ("" when HasTag is false)
	HasTag   bool   // the message carries a TAGS property
	Props    string // its properties string (codec layout) when HasProps
	HasProps bool   // Props was read (the probe asked withProps)
}

// TagSource reads what tag-aware wake-ups need; broker.Service implements it
// (broker/tag_probe.go) and every parked POP carries it.
type TagSource interface {
	// PendingTags returns the tags (withProps: and the properties) of up
	// to limit messages of (topic, queueID) not yet consumed by group, in
	// queue order, starting at max(from, consume offset) and ending before
	// to (< 0: maxOffset); truncated reports that more pending messages
	// follow. Blocks on RocksDB: reader goroutines only.
	PendingTags(group, topic string, queueID int32, from, to int64, limit int, withProps bool) (tags []PendingTag, truncated bool)
	// SubmitProbe queues job on a reader goroutine without blocking; false
	// when it cannot be queued.
	SubmitProbe(job func()) bool
}

// probeLimit bounds the pending messages one tag-aware wake-up inspects.
const probeLimit = 64

// Wake bumps the epoch of topic and wakes every request waiting for
// (topic, queueID) and for (topic, any queue); queueID anyQueue matches
// every waiter of the topic. Used where all waiters must look (tests,
// diagnostics); the hot paths use wakeSome and appended.
func (r *Registry) Wake(topic string, queueID int32) {
	r.wakeFor(wakeReq{topic: topic, queueID: queueID, from: -1, to: -1, all: true})
}

// Appended is the store's append listener: (topic, queueID) now has
// maxOffset as its next queueOffset. It wakes as many parked requests per
// consumerGroup as messages arrived since the last call for that queue
// (all of them when the queue is unknown or its offsets went back), by tag
// for groups with filtered POPs. Runs on the writer goroutine; never blocks
// beyond short mutexes.
func (r *Registry) Appended(topic string, queueID int32, maxOffset int64) {
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

// WakeSome bumps the epoch of topic and wakes at most n POPs per
// consumerGroup among those waiting for (topic, queueID) or (topic, any
// queue), and every waiting PULL and NOTIFICATION. group "" matches every
// group; n <= 0 wakes all matching requests. Groups with a filtered POP
// Parked are woken by the tags of their pending messages (see the top of
// this file). Called by POP when it released a contended queue lock or
// left messages behind (on a reader or the writer). The woken requests'
// onWake run inline (tag-aware ones on a reader), after the poll left the
// registry.
func (r *Registry) WakeSome(topic string, queueID int32, group string, n int) {
	r.wakeFor(wakeReq{topic: topic, queueID: queueID, group: group, n: n, from: -1, to: -1})
}

// wakeFor bumps the epoch of req.topic, wakes the chosen waiters of groups
// without a filtered POP parked now, and queues a tag-aware probe for each
// group with one (see the top of this file).
func (r *Registry) wakeFor(req wakeReq) {
	s := r.stripe(req.topic)
	var tagGroups map[string]TagSource
	var sqlGroups map[string]bool
	s.mu.Lock()
	s.bump(req.topic)
	cands := s.candidates(req)
	if !req.all {
		for _, c := range cands {
			if c.p.Group != "" && c.p.Filter != nil && c.p.Src != nil {
				if tagGroups == nil {
					tagGroups = make(map[string]TagSource)
				}
				tagGroups[c.p.Group] = c.p.Src
				if c.p.Filter.IsSQL() {
					if sqlGroups == nil {
						sqlGroups = make(map[string]bool)
					}
					sqlGroups[c.p.Group] = true
				}
			}
		}
	}
	direct := make([]*Poll, 0, len(cands))
	for _, c := range cands {
		if _, byTag := tagGroups[c.p.Group]; !byTag {
			direct = append(direct, c.p)
		}
	}
	direct = pickWoken(direct, req.n)
	s.take(direct, req.topic)
	s.mu.Unlock()
	r.finish(direct)
	for g, src := range tagGroups {
		sub := req
		sub.group, sub.props = g, sqlGroups[g]
		r.probes.start(r, src, sub)
	}
}

// waiterRef is a parked poll with the queueId of its key for the topic.
type waiterRef struct {
	p       *Poll
	queueID int32
}

// candidates lists the polls of req.group ("" every group) waiting for
// req.topic on req.queueID, the topic's any-queue key, or (req.queueID
// AnyQueue) any queue, earliest deadline first. REQUIRES: s.mu held.
func (s *pollStripe) candidates(req wakeReq) []waiterRef {
	var out []waiterRef
	add := func(k Key, set map[*Poll]struct{}) {
		for p := range set {
			if req.group == "" || p.Group == req.group {
				out = append(out, waiterRef{p, k.QueueID})
			}
		}
	}
	if req.queueID != AnyQueue {
		for _, k := range [2]Key{{req.topic, req.queueID}, {req.topic, AnyQueue}} {
			add(k, s.waiters[k])
		}
	} else {
		for k, set := range s.waiters {
			if k.Topic == req.topic {
				add(k, set)
			}
		}
	}
	slices.SortFunc(out, func(a, b waiterRef) int { return earlier(a.p, b.p) })
	return out
}

// earlier orders polls by deadline, then park order.
func earlier(a, b *Poll) int {
	if c := cmp.Compare(a.DeadlineMillis, b.DeadlineMillis); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// take removes polls from the keys of topic in this stripe now, whoever
// ends up claiming them, so no entry outlives its poll. REQUIRES: s.mu held.
func (s *pollStripe) take(polls []*Poll, topic string) {
	for _, p := range polls {
		for _, k := range p.Keys {
			if k.Topic == topic {
				s.remove(k, p, true)
			}
		}
	}
}

// finish claims each poll and runs its onWake.
func (r *Registry) finish(polls []*Poll) {
	for _, p := range polls {
		if r.claim(p, true) {
			p.OnWake()
		}
	}
}

// pickWoken drops duplicates from cands (sorted by earlier) and, when
// n > 0, keeps the first n per consumerGroup, plus every poll without a
// group.
func pickWoken(cands []*Poll, n int) []*Poll {
	cands = slices.Compact(cands)
	if n <= 0 {
		return cands
	}
	perGroup := make(map[string]int)
	out := cands[:0]
	for _, p := range cands {
		if p.Group == "" || perGroup[p.Group] < n {
			perGroup[p.Group]++
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
// Wake-up of the same key merges into the queued one.
type probeQueue struct {
	mu      sync.Mutex
	pending map[probeKey]*wakeReq // REQUIRES: mu held
}

// start queues req (one group) for a tag-aware wake-up on a reader. When no
// reader can take it, the group is woken without looking at tags.
func (q *probeQueue) start(r *Registry, src TagSource, req wakeReq) {
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
	if src.SubmitProbe(func() { r.probe(src, k) }) {
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

// probe runs on a reader: it reads the pending tags (or properties) of the
// queued wake-up of k and wakes the matching polls.
func (r *Registry) probe(src TagSource, k probeKey) {
	req, ok := r.probes.take(k)
	if !ok {
		return
	}
	tags, truncated := src.PendingTags(req.group, req.topic, req.queueID, req.from, req.to, probeLimit, req.props)
	r.wakeMatching(req, tags, truncated)
}

// wakeDirect wakes req.n polls of req.group, earliest deadline first,
// without looking at tags (no reader could run the probe).
func (r *Registry) wakeDirect(req wakeReq) {
	s := r.stripe(req.topic)
	s.mu.Lock()
	cands := s.candidates(req)
	polls := make([]*Poll, len(cands))
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
func (r *Registry) wakeMatching(req wakeReq, tags []PendingTag, truncated bool) {
	s := r.stripe(req.topic)
	s.mu.Lock()
	cands := s.candidates(req)
	var picked []*Poll
	for _, t := range tags {
		if req.n > 0 && len(picked) >= req.n {
			break
		}
		for i, c := range cands {
			if c.p == nil || (c.queueID != AnyQueue && c.queueID != t.QueueID) || !c.p.Filter.matchesPending(t) {
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
