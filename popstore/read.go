package popstore

import (
	"errors"
	"fmt"
	"sort"

	"github.com/linxGnu/grocksdb"
)

// getCF returns a copy of the value at key, or ErrNotFound.
// REQUIRES: readGuard held.
func (s *Store) getCF(cf *grocksdb.ColumnFamilyHandle, key []byte) ([]byte, error) {
	v, err := s.db.GetCF(s.ro, cf, key)
	if err != nil {
		return nil, fmt.Errorf("popstore: get: %w", err)
	}
	defer v.Free()
	if !v.Exists() {
		return nil, ErrNotFound
	}
	return append([]byte(nil), v.Data()...), nil
}

func (s *Store) queue(topic string, queueId int32) *queueState {
	if v, ok := s.queues.Load(queueKey{topic, queueId}); ok {
		return v.(*queueState)
	}
	return nil
}

// MaxOffset returns the next queueOffset that will be assigned in
// (topic, queueId): one past the last durable message, 0 for an unknown
// queue. In-memory and lock-free: safe on the gnet event loop.
func (s *Store) MaxOffset(topic string, queueId int32) int64 {
	if q := s.queue(topic, queueId); q != nil {
		return q.max.Load()
	}
	return 0
}

// MinOffset returns the smallest queueOffset still stored in
// (topic, queueId) (raised by retention), 0 for an unknown queue. Equal to
// MaxOffset when the queue is empty. In-memory: safe on the event loop.
func (s *Store) MinOffset(topic string, queueId int32) int64 {
	if q := s.queue(topic, queueId); q != nil {
		return q.min.Load()
	}
	return 0
}

// ReadMessages returns copies of the stored-message records of
// (topic, queueId) from fromOffset on, at most maxCount of them and at most
// maxBytes bytes in total (but always the first one found, however large).
// A fromOffset below MinOffset starts at MinOffset. Only durable messages are
// returned (bounded by MaxOffset). nextOffset is one past the last record
// returned, or, when none is, fromOffset clamped to [MinOffset, MaxOffset].
// Each record carries its own QUEUEOFFSET at byte 20. Blocks on RocksDB:
// call from a reader goroutine, never the event loop or the writer.
// Errors: ErrClosed, RocksDB read errors.
func (s *Store) ReadMessages(topic string, queueId int32, fromOffset int64, maxCount, maxBytes int) (records [][]byte, nextOffset int64, err error) {
	return s.ReadMessagesInto(nil, topic, queueId, fromOffset, maxCount, maxBytes)
}

// ReadMessagesInto is ReadMessages that copies the records into rb's
// memory instead of new memory when rb is not nil: the records (and the
// returned slice of them) are then valid until the next call with rb, which
// reuses that memory. A nil rb is ReadMessages. One goroutine at a time may
// use an rb. Errors: as ReadMessages.
func (s *Store) ReadMessagesInto(rb *ReadBuffer, topic string, queueId int32, fromOffset int64, maxCount, maxBytes int) (records [][]byte, nextOffset int64, err error) {
	if !s.readGuard() {
		return nil, fromOffset, s.guardErr()
	}
	defer s.readDone()
	q := s.queue(topic, queueId)
	if q == nil {
		return nil, 0, nil
	}
	min, max := q.min.Load(), q.max.Load()
	if fromOffset < min {
		fromOffset = min
	}
	if fromOffset >= max || maxCount <= 0 {
		if fromOffset > max {
			fromOffset = max
		}
		return nil, fromOffset, nil
	}
	return s.readRange(rb, q, topic, queueId, fromOffset, max, maxCount, maxBytes)
}

// readOne returns the record at queueOffset, or ErrNotFound.
// REQUIRES: readGuard held.
func (s *Store) readOne(topic string, queueId int32, queueOffset int64) ([]byte, error) {
	return s.getRecord(messageKey(nil, topic, queueId, queueOffset))
}

// ReadMessage returns a copy of the record at queueOffset of
// (topic, queueId). Errors: ErrNotFound, ErrClosed, RocksDB errors. Blocks on
// RocksDB: not on the event loop.
func (s *Store) ReadMessage(topic string, queueId int32, queueOffset int64) ([]byte, error) {
	if !s.readGuard() {
		return nil, s.guardErr()
	}
	defer s.readDone()
	if q := s.queue(topic, queueId); q == nil || queueOffset >= q.max.Load() {
		return nil, ErrNotFound
	}
	return s.readOne(topic, queueId, queueOffset)
}

// MessageByPhysicalOffset returns a copy of the record whose PHYSICALOFFSET
// is phys (the number inside an offsetMsgId, used by VIEW_MESSAGE_BY_ID).
// Errors: ErrNotFound (never assigned, or removed, also when its topic was
// deleted and created again), ErrClosed, RocksDB errors. Blocks on
// RocksDB: not on the event loop.
func (s *Store) MessageByPhysicalOffset(phys int64) ([]byte, error) {
	if !s.readGuard() {
		return nil, s.guardErr()
	}
	defer s.readDone()
	return s.indexedRecord("", phys)
}

// SearchOffsetByTimestamp returns the smallest queueOffset in
// (topic, queueId) whose STORETIMESTAMP is ≥ tsMillis (binary search over
// stored records, which are in store-time order); MinOffset when every
// message is newer, MaxOffset when every message is older or the queue is
// empty. Blocks on RocksDB: not on the event loop.
func (s *Store) SearchOffsetByTimestamp(topic string, queueId int32, tsMillis int64) (int64, error) {
	if !s.readGuard() {
		return 0, s.guardErr()
	}
	defer s.readDone()
	q := s.queue(topic, queueId)
	if q == nil {
		return 0, nil
	}
	return s.searchTime(topic, queueId, q.min.Load(), q.max.Load(), tsMillis)
}

// searchTime binary-searches [lo, hi) for the first record with store time
// ≥ ts. A missing record (removed concurrently) counts as older.
// REQUIRES: readGuard held.
func (s *Store) searchTime(topic string, queueId int32, lo, hi, ts int64) (int64, error) {
	var ferr error
	n := sort.Search(int(hi-lo), func(i int) bool {
		if ferr != nil {
			return true
		}
		rec, err := s.readOne(topic, queueId, lo+int64(i))
		if errors.Is(err, ErrNotFound) {
			return false
		}
		if err != nil {
			ferr = err
			return true
		}
		st, _ := StoreTimestamp(rec)
		return st >= ts
	})
	if ferr != nil {
		return 0, ferr
	}
	return lo + int64(n), nil
}

// ConsumerOffset returns the committed consume offset of
// (consumerGroup, topic, queueId); ok=false when none was ever set.
// In-memory copy kept in sync by commits: safe on the event loop.
func (s *Store) ConsumerOffset(group, topic string, queueId int32) (offset int64, ok bool) {
	s.mu.RLock()
	offset, ok = s.offsets[offsetID{group, topic, queueId}]
	s.mu.RUnlock()
	return offset, ok
}

// ConsumerOffsetsOf returns queueId → consume offset of every queue of topic
// that consumerGroup has committed. In-memory: safe on the event loop (cost
// grows with the number of stored offsets).
func (s *Store) ConsumerOffsetsOf(group, topic string) map[int32]int64 {
	out := make(map[int32]int64)
	s.mu.RLock()
	for id, off := range s.offsets {
		if id.group == group && id.topic == topic {
			out[id.queueId] = off
		}
	}
	s.mu.RUnlock()
	return out
}

// ScanCheckpoints returns up to limit durable checkpoints with
// fromVisibleAt ≤ VisibleAtMillis < toVisibleAt, in key order (visibility
// time first), as RocketMQ's scanExpiredRecords. Blocks on RocksDB: call from
// the revive goroutine. Errors: ErrClosed, RocksDB errors, ErrBadRecord for
// an undecodable entry.
func (s *Store) ScanCheckpoints(fromVisibleAt, toVisibleAt int64, limit int) ([]Checkpoint, error) {
	if !s.readGuard() {
		return nil, s.guardErr()
	}
	defer s.readDone()
	if limit <= 0 || toVisibleAt <= fromVisibleAt {
		return nil, nil
	}
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(putInt64(toVisibleAt))
	it := s.db.NewIteratorCF(ro, s.cfPop())
	defer it.Close()
	var out []Checkpoint
	for it.Seek(putInt64(fromVisibleAt)); it.Valid() && len(out) < limit; it.Next() {
		k, err := DecodeCheckpointKey(it.Key().Data())
		if err != nil {
			return out, err
		}
		ck := Checkpoint{Key: k}
		if err := ck.decodeValue(it.Value().Data()); err != nil {
			return out, fmt.Errorf("checkpoint %+v: %w", k, err)
		}
		out = append(out, ck)
	}
	if err := it.Err(); err != nil {
		return out, fmt.Errorf("popstore: scan checkpoints: %w", err)
	}
	return out, nil
}

// Checkpoint reads one durable checkpoint by key (outside any batch; inside
// the writer use Txn.GetCheckpoint). Blocks on RocksDB.
func (s *Store) Checkpoint(k CheckpointKey) (Checkpoint, bool, error) {
	if !s.readGuard() {
		return Checkpoint{}, false, s.guardErr()
	}
	defer s.readDone()
	return s.getCheckpoint(k)
}

// REQUIRES: readGuard held, or the caller is committing (writer).
func (s *Store) getCheckpoint(k CheckpointKey) (Checkpoint, bool, error) {
	v, err := s.getCF(s.cfPop(), k.Bytes())
	if errors.Is(err, ErrNotFound) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, err
	}
	ck := Checkpoint{Key: k}
	if err := ck.decodeValue(v); err != nil {
		return Checkpoint{}, false, err
	}
	return ck, true, nil
}

// Topics returns a copy of every topic's metadata, sorted by name.
// In-memory: safe on the event loop.
func (s *Store) Topics() []TopicMeta {
	s.mu.RLock()
	out := make([]TopicMeta, 0, len(s.topics))
	for _, m := range s.topics {
		out = append(out, m.clone())
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].TopicName < out[j].TopicName })
	return out
}

// Topic returns a copy of one topic's metadata. In-memory: safe on the event
// loop.
func (s *Store) Topic(name string) (TopicMeta, bool) {
	s.mu.RLock()
	m, ok := s.topics[name]
	s.mu.RUnlock()
	return m.clone(), ok
}

// Groups returns a copy of every consumer group's metadata, sorted by name.
// In-memory: safe on the event loop.
func (s *Store) Groups() []GroupMeta {
	s.mu.RLock()
	out := make([]GroupMeta, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g.clone())
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].GroupName < out[j].GroupName })
	return out
}

// Group returns a copy of one consumer group's metadata. In-memory: safe on
// the event loop.
func (s *Store) Group(name string) (GroupMeta, bool) {
	s.mu.RLock()
	g, ok := s.groups[name]
	s.mu.RUnlock()
	return g.clone(), ok
}

// MetaValue returns a copy of a free-form value set by Txn.PutMetaValue
// (for example the revive cursor). Errors: ErrNotFound, ErrClosed, RocksDB
// errors. Blocks on RocksDB.
func (s *Store) MetaValue(name string) ([]byte, error) {
	if !s.readGuard() {
		return nil, s.guardErr()
	}
	defer s.readDone()
	return s.getCF(s.cfMeta(), []byte(metaUserPrefix+name))
}
