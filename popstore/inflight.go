package popstore

import "sync"

// inflightCounts is the number of durable checkpoints (messages popped and
// not yet acknowledged, revived or expired) per (consumerGroup, topic),
// kept in memory so that a metrics scrape does not scan the pop family.
// Java keeps the same figure in memory too (PopInflightMessageCounter,
// broker/.../processor/PopInflightMessageCounter.java). Seeded by an
// exact scan when the store opens or reopens (loadState); afterwards
// every committed Txn adds its checkpoint puts and subtracts its deletes
// (publish). An ACK is a blind delete, so acknowledging a checkpoint that
// was already gone (a second ACK of one receipt handle, an ACK after
// revive) subtracts one that was not there: a count that would fall to
// zero or below is dropped, so such drift never makes a figure negative
// and ends when the pair has nothing in flight.
type inflightCounts struct {
	mu sync.Mutex
	m  map[GroupTopic]int64
}

// reset replaces the counts (loadState's scan). REQUIRES: no Txn is
// publishing (Open, or Reopen holding serialMu and closeMu).
func (c *inflightCounts) reset(m map[GroupTopic]int64) {
	c.mu.Lock()
	c.m = m
	c.mu.Unlock()
}

// apply adds the checkpoint writes of one committed Txn. Committing
// goroutine (publish); one lock per Txn.
func (c *inflightCounts) apply(log []ckOverlay) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[GroupTopic]int64)
	}
	var (
		cur GroupTopic
		sum int64
		set bool
	)
	flush := func() {
		if !set || sum == 0 {
			return
		}
		if n := c.m[cur] + sum; n > 0 {
			c.m[cur] = n
		} else {
			delete(c.m, cur)
		}
	}
	// Consecutive writes mostly name one pair (a POP's checkpoints, a
	// batch of one consumer's ACKs): sum runs before touching the map.
	for i := range log {
		v := &log[i]
		if v.delta == 0 {
			continue
		}
		if !set || v.ck.Key.Group != cur.Group || v.ck.Key.Topic != cur.Topic {
			flush()
			cur, sum, set = GroupTopic{v.ck.Key.Group, v.ck.Key.Topic}, 0, true
		}
		sum += int64(v.delta)
	}
	flush()
}

// InflightCheckpoints returns a copy of the in-memory count of durable
// checkpoints per (consumerGroup, topic read) — what CountCheckpoints
// would count, except after a blind ACK of a checkpoint already gone
// (inflightCounts) — or nil and false when more than maxPairs pairs have
// checkpoints in flight. In memory, any goroutine; cost proportional to
// the number of pairs.
func (s *Store) InflightCheckpoints(maxPairs int) (map[GroupTopic]int64, bool) {
	c := &s.inflight
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > maxPairs {
		return nil, false
	}
	out := make(map[GroupTopic]int64, len(c.m))
	for k, n := range c.m {
		out[k] = n
	}
	return out, true
}
