package popstore

import "sync"

// GroupTopicQueue names one queue of a (consumerGroup, topic) pair.
type GroupTopicQueue struct {
	Group, Topic string
	QueueId      int32
}

// inflightCounts is the number of durable checkpoints (messages popped and
// not yet acknowledged, revived or expired) per (consumerGroup, topic,
// queueId), kept in memory so that a metrics scrape or GET_CONSUME_STATS
// does not scan the pop family. Java keeps the same figure in memory too
// (PopInflightMessageCounter,
// broker/.../processor/PopInflightMessageCounter.java). Seeded by an
// exact scan when the store opens or reopens (loadState); afterwards
// every committed Txn adds its checkpoint puts and subtracts its deletes
// (publish). An ACK is a blind delete, so acknowledging a checkpoint that
// was already gone (a second ACK of one receipt handle, an ACK after
// revive) subtracts one that was not there: a count that would fall to
// zero or below is dropped, so such drift never makes a figure negative
// and ends when the queue has nothing in flight.
type inflightCounts struct {
	mu sync.Mutex
	m  map[GroupTopicQueue]int64
}

// reset replaces the counts (loadState's scan). REQUIRES: no Txn is
// publishing (Open, or Reopen holding serialMu and closeMu).
func (c *inflightCounts) reset(m map[GroupTopicQueue]int64) {
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
		c.m = make(map[GroupTopicQueue]int64)
	}
	var (
		cur GroupTopicQueue
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
	// Consecutive writes mostly name one queue (a POP's checkpoints, a
	// batch of one consumer's ACKs): sum runs before touching the map.
	for i := range log {
		v := &log[i]
		if v.delta == 0 {
			continue
		}
		k := &v.ck.Key
		if !set || k.QueueId != cur.QueueId || k.Group != cur.Group || k.Topic != cur.Topic {
			flush()
			cur, sum, set = GroupTopicQueue{k.Group, k.Topic, k.QueueId}, 0, true
		}
		sum += int64(v.delta)
	}
	flush()
}

// InflightOf returns the in-memory count of durable checkpoints of one
// queue (see inflightCounts for its drift). Any goroutine; O(1).
func (s *Store) InflightOf(group, topic string, queueId int32) int64 {
	c := &s.inflight
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[GroupTopicQueue{group, topic, queueId}]
}

// InflightCheckpoints returns a copy of the in-memory count of durable
// checkpoints per (consumerGroup, topic read) — what CountCheckpoints
// would count, except after a blind ACK of a checkpoint already gone
// (inflightCounts) — or nil and false when more than maxPairs pairs have
// checkpoints in flight. In memory, any goroutine; cost proportional to
// the number of queues with checkpoints in flight.
func (s *Store) InflightCheckpoints(maxPairs int) (map[GroupTopic]int64, bool) {
	c := &s.inflight
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[GroupTopic]int64)
	for k, n := range c.m {
		p := GroupTopic{k.Group, k.Topic}
		if _, ok := out[p]; !ok && len(out) >= maxPairs {
			return nil, false
		}
		out[p] += n
	}
	return out, true
}
