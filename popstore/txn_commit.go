package popstore

import (
	"encoding/binary"
	"fmt"

	"github.com/linxGnu/grocksdb"
)

// DeleteTopic removes a topic: its metadata, every message (one range
// delete), its queues' extents (so a re-created topic starts at queueOffset
// 0) and every consumer offset committed for it. Checkpoints that name it are
// left for revive, which drops them when the message is gone.
// Physical-offset index entries are left and answer ErrNotFound until
// retention removes them. Errors: ErrBadName, ErrTxnDone.
func (t *Txn) DeleteTopic(name string) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := checkName("topic", name); err != nil {
		return err
	}
	t.lockSerial()
	t.b.del(cfiMeta, []byte(metaTopicPrefix+name))
	start, limit := topicMessagesRange(name)
	t.b.delRange(cfiMessages, start, limit)
	// Every queue of the topic known to the store or to this Txn.
	qids := map[int32]bool{}
	t.s.queues.Range(func(k, _ any) bool {
		if qk := k.(queueKey); qk.topic == name {
			qids[qk.queueId] = true
		}
		return true
	})
	for k := range t.queues {
		if k.topic == name {
			qids[k.queueId] = true
		}
	}
	for qid := range qids {
		t.b.del(cfiMeta, queueMetaKey(name, qid))
		k := queueKey{name, qid}
		prev, had := t.queues[k]
		if t.queues == nil {
			t.queues = make(map[queueKey]*txnQueue)
		}
		t.queues[k] = &txnQueue{reset: true}
		t.journal(func() {
			if had {
				t.queues[k] = prev
			} else {
				delete(t.queues, k)
			}
		})
	}
	var ids []offsetID
	t.s.mu.RLock()
	for id := range t.s.offsets {
		if id.topic == name {
			ids = append(ids, id)
		}
	}
	t.s.mu.RUnlock()
	for id := range t.offsets {
		if id.topic == name {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		t.b.del(cfiOffsets, offsetKey(id.group, id.topic, id.queueId))
		t.setOffset(id, offsetOverlay{})
	}
	t.deleteTopicOrders(name)
	t.setTopic(name, nil)
	return nil
}

// TrimQueue removes the messages of (topic, queueId) below newMinOffset with
// one range delete and raises MinOffset to it (retention). newMinOffset is
// clamped to the queue's MaxOffset; a value ≤ MinOffset does nothing.
func (t *Txn) TrimQueue(topic string, queueId int32, newMinOffset int64) error {
	if err := t.check(); err != nil {
		return err
	}
	t.lockSerial()
	q := t.queue(topic, queueId)
	if newMinOffset > q.next {
		newMinOffset = q.next
	}
	if newMinOffset <= q.min {
		return nil
	}
	t.b.delRange(cfiMessages, messageKey(nil, topic, queueId, q.min), messageKey(nil, topic, queueId, newMinOffset))
	prev := *q
	t.journal(func() { *q = prev })
	q.min = newMinOffset
	q.dirty = true
	return nil
}

// TrimPhysicalIndex removes the physical-offset index entries below
// physicalOffset (retention: every message before it is gone).
func (t *Txn) TrimPhysicalIndex(physicalOffset int64) error {
	if err := t.check(); err != nil {
		return err
	}
	if physicalOffset <= 0 {
		return nil
	}
	t.b.delRange(cfiMessages, physKey(0), physKey(physicalOffset))
	return nil
}

// Commit persists the WriteBatch with one synced write (WAL on, sync=true,
// through the store's WriteHook), after writing and fdatasyncing the
// records bound for the commit log (commitlog.go), then publishes its effects: queue extents
// (MaxOffset/MinOffset), consumer offsets, metadata, and calls the
// AppendListener for every queue appended to. A Txn with no writes commits
// without any I/O. On error nothing is published and the Txn is finished;
// whether the WAL holds the batch is unknown unless the error wraps
// ErrWriteRejected. Call on the goroutine that built the Txn.
// Errors: the write error, ErrClosed, ErrTxnDone.
func (t *Txn) Commit() error {
	if err := t.check(); err != nil {
		return err
	}
	t.done = true
	defer t.release()
	for k, q := range t.queues {
		if q.dirty {
			v := make([]byte, 0, 16)
			v = binary.BigEndian.AppendUint64(v, uint64(q.min))
			v = binary.BigEndian.AppendUint64(v, uint64(q.next))
			t.b.put(cfiMeta, queueMetaKey(k.topic, k.queueId), v)
		}
	}
	if t.physUsed {
		t.b.put(cfiMeta, []byte(metaPhysKey), putInt64(t.phys))
	}
	if t.timersUsed {
		t.b.put(cfiMeta, []byte(metaTimersKey), putInt64(t.s.timers.Load()+t.timerDelta))
	}
	t.persistHalves()
	if t.b.count() == 0 {
		return nil
	}
	if !t.s.readGuard() {
		return t.s.guardErr()
	}
	if len(t.clogRecs) > 0 && t.clogBytes < t.s.clogBatchMin && len(t.clogRecs) < t.s.clogBatchMinRecs {
		// Too few bytes and records to pay for a second fsync: the
		// records stay in the WAL, as inline values.
		t.b.inlineRecords(t.clogRecs)
		t.indexInlined()
	} else if len(t.clogRecs) > 0 {
		// The records are durable before anything references them. A
		// failure here is a write failure like the WAL's (the writer stops
		// and reopens the store): the disk is usually full.
		ends, err := t.s.clog.write(t.clogRecs, t.s.clogEnds)
		if err != nil {
			t.s.writeFailed.Store(true)
			t.s.readDone()
			return err
		}
		t.s.clogEnds = ends
		for _, e := range ends {
			t.b.put(cfiMeta, clogEndKey(e.start), putInt64(e.end))
		}
	}
	wb := grocksdb.WriteBatchFrom(t.b.encode(&t.s.cfIDs))
	err := t.s.write(wb)
	wb.Destroy()
	t.s.readDone()
	if err != nil {
		return fmt.Errorf("popstore: synced write: %w", err)
	}
	t.publish()
	return nil
}

// indexInlined adds the physical-offset index entries AppendMessage left
// out for the records of a batch that stays inline (all but the first: no
// commit log holds them to find them by).
func (t *Txn) indexInlined() {
	for _, r := range t.clogRecs[1:] {
		t.scratch = append(t.scratch[:0], t.b.key(r.rec)...)
		t.b.put(cfiMessages, physKey(r.phys), t.scratch)
	}
}

// Count returns the number of entries in the WriteBatch so far.
func (t *Txn) Count() int {
	if t.done {
		return 0
	}
	return t.b.count()
}

// Discard drops the Txn without writing. Safe after Commit (no-op).
func (t *Txn) Discard() {
	if t.done {
		return
	}
	t.done = true
	t.release()
}

func (t *Txn) release() {
	if t.serial {
		t.serial = false
		t.s.serialMu.Unlock()
	}
	t.recycle()
}

// publish applies the committed Txn to the in-memory state.
// REQUIRES: serial still held when t.serial (release runs after).
func (t *Txn) publish() {
	s := t.s
	for k, q := range t.queues {
		if q.reset {
			s.queues.Delete(k)
		}
		if q.dirty {
			v, _ := s.queues.LoadOrStore(k, &queueState{})
			st := v.(*queueState)
			st.min.Store(q.min)
			st.max.Store(q.next)
		}
	}
	if t.physUsed {
		s.nextPhys = t.phys
		s.committedPhys.Store(t.phys)
	}
	if t.timersUsed {
		s.timers.Add(t.timerDelta)
	}
	t.publishHalves()
	if t.idx.set {
		s.lastIndexed.Store(&t.idx)
	}
	if len(t.ckLog) > 0 {
		s.inflight.apply(t.ckLog)
	}
	if len(t.offsets)+len(t.orders)+len(t.topics)+len(t.groups) > 0 {
		s.mu.Lock()
		for id, o := range t.orders {
			if o.present {
				s.orders[id] = o.st
			} else {
				delete(s.orders, id)
			}
		}
		for id, o := range t.offsets {
			if o.present {
				s.offsets[id] = o.off
			} else {
				delete(s.offsets, id)
			}
		}
		for name, m := range t.topics {
			if m == nil {
				delete(s.topics, name)
			} else {
				s.topics[name] = *m
			}
		}
		for name, g := range t.groups {
			if g == nil {
				delete(s.groups, name)
			} else {
				s.groups[name] = *g
			}
		}
		if t.gverSet {
			s.groupsVer = t.gver
		}
		s.mu.Unlock()
	}
	if fn := s.onApp.Load(); fn != nil {
		for k, q := range t.queues {
			if q.appended {
				(*fn)(k.topic, k.queueId, q.next)
			}
		}
	}
}
