package popstore

import (
	"fmt"

	"github.com/linxGnu/grocksdb"
)

// GroupTopic names one (consumerGroup, topic) pair.
type GroupTopic struct {
	Group, Topic string
}

// QueueOffset is one committed consume offset of a GroupTopic.
type QueueOffset struct {
	QueueId int32
	Offset  int64
}

// ConsumerOffsetsByGroupTopic returns every committed consume offset,
// grouped by (consumerGroup, topic), or nil and false when more than
// maxPairs pairs exist (the caller skips its work rather than let the cost
// grow with the table). In-memory: safe on any goroutine; one pass over
// the offsets under the read lock.
func (s *Store) ConsumerOffsetsByGroupTopic(maxPairs int) (map[GroupTopic][]QueueOffset, bool) {
	out := make(map[GroupTopic][]QueueOffset)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for id, off := range s.offsets {
		k := GroupTopic{id.group, id.topic}
		if _, ok := out[k]; !ok && len(out) >= maxPairs {
			return nil, false
		}
		out[k] = append(out[k], QueueOffset{id.queueId, off})
	}
	return out, true
}

// CountCheckpoints counts the durable checkpoints (in-flight POP
// deliveries) per (consumerGroup, topic read) with a key-only scan of the
// pop family. It stops and returns complete=false after limit
// checkpoints, so its cost is bounded; the scan also steps over the
// tombstones of acknowledged checkpoints, which after an ACK burst can be
// millions. Scrapes use InflightCheckpoints (in memory) instead; this is
// the exact figure tests compare it with. Blocks on RocksDB: never call it
// on an event loop. Errors: ErrClosed, RocksDB errors, ErrBadRecord for
// an undecodable key.
func (s *Store) CountCheckpoints(limit int) (counts map[GroupTopic]int64, complete bool, err error) {
	if !s.readGuard() {
		return nil, false, s.guardErr()
	}
	defer s.readDone()
	queues, complete, err := s.countCheckpoints(limit)
	counts = make(map[GroupTopic]int64)
	for k, n := range queues {
		counts[GroupTopic{k.Group, k.Topic}] += n
	}
	return counts, complete, err
}

// countCheckpoints is CountCheckpoints per queue and without the read
// guard (loadState runs with closeMu held).
func (s *Store) countCheckpoints(limit int) (counts map[GroupTopicQueue]int64, complete bool, err error) {
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	it := s.db.NewIteratorCF(ro, s.cfPop())
	defer it.Close()
	counts = make(map[GroupTopicQueue]int64)
	n := 0
	for it.SeekToFirst(); it.Valid(); it.Next() {
		if n >= limit {
			return counts, false, nil
		}
		k, err := DecodeCheckpointKey(it.Key().Data())
		if err != nil {
			return counts, false, err
		}
		counts[GroupTopicQueue{k.Group, k.Topic, k.QueueId}]++
		n++
	}
	if err := it.Err(); err != nil {
		return counts, false, fmt.Errorf("popstore: count checkpoints: %w", err)
	}
	return counts, true, nil
}
