package popstore

import (
	"errors"
	"slices"
)

// TopicsOfGroup returns the topics, sorted, on which consumerGroup has at
// least one committed consume offset (RocketMQ's
// ConsumerOffsetManager.whichTopicByConsumer). In-memory: safe on the event
// loop; cost grows with the number of stored offsets.
func (s *Store) TopicsOfGroup(group string) []string {
	seen := make(map[string]struct{})
	s.mu.RLock()
	for id := range s.offsets {
		if id.group == group {
			seen[id.topic] = struct{}{}
		}
	}
	s.mu.RUnlock()
	return sortedKeys(seen)
}

// GroupsOfTopic returns the consumer groups, sorted, that have at least one
// committed consume offset on topic (ConsumerOffsetManager.whichGroupByTopic).
// In-memory: safe on the event loop.
func (s *Store) GroupsOfTopic(topic string) []string {
	seen := make(map[string]struct{})
	s.mu.RLock()
	for id := range s.offsets {
		if id.topic == topic {
			seen[id.group] = struct{}{}
		}
	}
	s.mu.RUnlock()
	return sortedKeys(seen)
}

// StoreTimeAt returns the store timestamp in ms of the message at
// queueOffset of (topic, queueId), 0 when there is none (removed by
// retention, never written, or undecodable). Blocks on RocksDB: reader pool
// only. Errors: ErrClosed, ErrUnavailable, RocksDB errors (ErrNotFound is
// reported as 0, nil).
func (s *Store) StoreTimeAt(topic string, queueId int32, queueOffset int64) (int64, error) {
	rec, err := s.ReadMessage(topic, queueId, queueOffset)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ts, _ := StoreTimestamp(rec)
	return ts, nil
}

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
