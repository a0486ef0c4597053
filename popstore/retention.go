package popstore

import (
	"errors"
	"sort"

	"github.com/linxGnu/grocksdb"
)

// Trim moves one queue's MinOffset up to NewMinOffset.
type Trim struct {
	Topic        string
	QueueId      int32
	NewMinOffset int64
}

// RetentionPlan is what retention will remove: every message whose
// STORETIMESTAMP is older than the cutoff, per queue, and the
// physical-offset index entries below PhysicalFloor.
type RetentionPlan struct {
	CutoffMillis  int64 // messages stored before this instant go, Unix ms
	Trims         []Trim
	PhysicalFloor int64 // smallest physical offset still referenced
}

// PlanRetention finds, for every queue, the first message stored at or
// after nowMillis − RetentionMillis (binary search on STORETIMESTAMP) and
// returns the trims needed. Reads only; the plan is applied through the
// writer with Txn.ApplyRetention (background lane), so messages appended
// meanwhile are never touched. An empty plan when retention is disabled.
// Blocks on RocksDB: call from a background goroutine.
func (s *Store) PlanRetention(nowMillis int64) (RetentionPlan, error) {
	if s.keep < 0 {
		return RetentionPlan{}, nil
	}
	return s.PlanRetentionBefore(nowMillis - s.keep)
}

// PlanRetentionBefore is PlanRetention for an explicit cutoff (Unix ms):
// every message stored before it goes, whatever RetentionMillis says (the
// writer's forced clean-up of a filling disk). Reads only; blocks on
// RocksDB: background goroutine.
func (s *Store) PlanRetentionBefore(cutoffMillis int64) (RetentionPlan, error) {
	plan := RetentionPlan{CutoffMillis: cutoffMillis, PhysicalFloor: -1}
	if !s.readGuard() {
		return plan, s.guardErr()
	}
	defer s.readDone()
	var keys []queueKey
	s.queues.Range(func(k, _ any) bool { keys = append(keys, k.(queueKey)); return true })
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].queueId < keys[j].queueId
	})
	physAtStart := s.committedPhys.Load()
	floor := physAtStart
	for _, k := range keys {
		st := s.queue(k.topic, k.queueId)
		if st == nil {
			continue
		}
		min, max := st.min.Load(), st.max.Load()
		first, err := s.searchTime(k.topic, k.queueId, min, max, plan.CutoffMillis)
		if err != nil {
			return plan, err
		}
		if first > min {
			plan.Trims = append(plan.Trims, Trim{k.topic, k.queueId, first})
		}
		if first < max {
			rec, err := s.readOne(k.topic, k.queueId, first)
			if p, ok := RecordPhysicalOffset(rec); err == nil && ok && p < floor {
				floor = p
			} else if err != nil && !errors.Is(err, ErrNotFound) {
				return plan, err
			}
		}
	}
	plan.PhysicalFloor = floor
	return plan, nil
}

// ApplyRetention adds plan's range deletes to the Txn: the trimmed queues'
// messages, the physical-offset index below the floor and, when a queue is
// trimmed, the key-index minutes before the cutoff (TrimKeyIndex).
func (t *Txn) ApplyRetention(plan RetentionPlan) error {
	for _, tr := range plan.Trims {
		if err := t.TrimQueue(tr.Topic, tr.QueueId, tr.NewMinOffset); err != nil {
			return err
		}
	}
	if len(plan.Trims) > 0 {
		if err := t.TrimKeyIndex(plan.CutoffMillis); err != nil {
			return err
		}
	}
	return t.TrimPhysicalIndex(plan.PhysicalFloor)
}

// CompactTrimmed asks RocksDB to compact the key ranges a committed plan
// deleted, so disk space comes back soon rather than at the next natural
// compaction, and removes the commit-log segments wholly below the plan's
// PhysicalFloor. Blocks (possibly for seconds): background goroutine only.
func (s *Store) CompactTrimmed(plan RetentionPlan) {
	if !s.readGuard() {
		return
	}
	defer s.readDone()
	for _, tr := range plan.Trims {
		s.db.CompactRangeCF(s.cfMessages(), grocksdb.Range{
			Start: messageKey(nil, tr.Topic, tr.QueueId, 0),
			Limit: messageKey(nil, tr.Topic, tr.QueueId, tr.NewMinOffset),
		})
	}
	if h := indexBucket(plan.CutoffMillis); len(plan.Trims) > 0 && h > 0 {
		s.db.CompactRangeCF(s.cfIndex(), grocksdb.Range{Start: keyIndexBucketStart(0), Limit: keyIndexBucketStart(h)})
	}
	if plan.PhysicalFloor > 0 {
		s.db.CompactRangeCF(s.cfMessages(), grocksdb.Range{Start: physKey(0), Limit: physKey(plan.PhysicalFloor)})
		names, err := s.clog.dropBelow(plan.PhysicalFloor)
		if err != nil {
			s.log.Warn().Err(err).Msg("commit log segment not removed")
		}
		if len(names) > 0 {
			s.log.Info().Strs("segments", names).Int64("physicalFloor", plan.PhysicalFloor).Msg("commit log segments removed by retention")
		}
	}
}

// ReleaseMappedPages unmaps the commit-log pages this process has read
// (commitLog.releaseMapped); they stay cached by the kernel. Any
// goroutine; a no-op while the store is down.
func (s *Store) ReleaseMappedPages() {
	if !s.readGuard() {
		return
	}
	defer s.readDone()
	if s.clog != nil {
		s.clog.releaseMapped()
	}
}

// OldestStoreTime returns the smallest STORETIMESTAMP (Unix ms) of the
// first message of any queue, ok=false when every queue is empty. Reads
// one record per queue; blocks on RocksDB: background goroutine.
func (s *Store) OldestStoreTime() (oldest int64, ok bool, err error) {
	if !s.readGuard() {
		return 0, false, s.guardErr()
	}
	defer s.readDone()
	var keys []queueKey
	s.queues.Range(func(k, _ any) bool { keys = append(keys, k.(queueKey)); return true })
	for _, k := range keys {
		st := s.queue(k.topic, k.queueId)
		if st == nil || st.min.Load() >= st.max.Load() {
			continue
		}
		rec, err := s.readOne(k.topic, k.queueId, st.min.Load())
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, false, err
		}
		if ts, tok := StoreTimestamp(rec); tok && (!ok || ts < oldest) {
			oldest, ok = ts, true
		}
	}
	return oldest, ok, nil
}
