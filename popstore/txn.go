package popstore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/linxGnu/grocksdb"
)

// Txn builds one WriteBatch: the mutations of every op of one group-commit
// batch (or of one op in sync mode). Its reads (GetCheckpoint,
// ConsumerOffset, MaxOffset, Topic) see the writes made earlier in the same
// Txn, then the durable database (house style 11). Nothing is visible to
// Store readers until Commit's synced write has returned.
//
// A Txn belongs to one goroutine (the batch writer, or one sync-mode
// worker). Begin, then Do once per op, then exactly one Commit or Discard.
// Mutating methods may also be called outside Do (no rollback then).
type Txn struct {
	s      *Store
	wb     *grocksdb.WriteBatch
	done   bool
	inOp   bool
	serial bool // holds s.serialMu
	undo   []func()

	phys     int64 // next physical offset; valid when serial
	physUsed bool
	queues   map[queueKey]*txnQueue
	cks      map[string]ckOverlay
	offsets  map[offsetID]offsetOverlay
	topics   map[string]*TopicMeta // nil value: deleted
	groups   map[string]*GroupMeta // nil value: deleted
	scratch  []byte
}

type txnQueue struct {
	min, next int64
	dirty     bool // state must be persisted and published
	appended  bool // tell the AppendListener
	reset     bool // queue removed by DeleteTopic earlier in this Txn
}

type ckOverlay struct {
	ck      Checkpoint
	present bool
}

type offsetOverlay struct {
	off     int64
	present bool
}

// Begin starts a Txn. Called by the batch writer; any goroutine.
func (s *Store) Begin() *Txn {
	return &Txn{s: s, wb: grocksdb.NewWriteBatch()}
}

// Do runs apply as one op: if apply returns an error (or panics, which is
// turned into an error wrapping ErrApplyPanic) every write it made is rolled
// back from the WriteBatch and from the Txn's overlay, and the error is
// returned. Ops are not nested.
func (t *Txn) Do(apply func(tx *Txn) error) (err error) {
	if t.done {
		return ErrTxnDone
	}
	if t.inOp {
		return fmt.Errorf("popstore: nested Txn.Do")
	}
	t.wb.SetSavePoint()
	t.inOp = true
	t.undo = t.undo[:0]
	defer func() {
		if r := recover(); r != nil {
			t.s.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("apply function panicked")
			err = fmt.Errorf("%w: %v", ErrApplyPanic, r)
		}
		t.inOp = false
		if err != nil {
			// Never fails: the save point set above is on the stack.
			_ = t.wb.RollbackToSavePoint()
			for i := len(t.undo) - 1; i >= 0; i-- {
				t.undo[i]()
			}
		}
		t.undo = t.undo[:0]
	}()
	return apply(t)
}

func (t *Txn) journal(f func()) {
	if t.inOp {
		t.undo = append(t.undo, f)
	}
}

func (t *Txn) check() error {
	if t.done {
		return ErrTxnDone
	}
	return nil
}

// lockSerial takes the store's serial lock for the rest of the Txn.
func (t *Txn) lockSerial() {
	if !t.serial {
		t.s.serialMu.Lock()
		t.serial = true
		t.phys = t.s.nextPhys
	}
}

// queue returns the Txn's view of a queue's extent. REQUIRES: serial.
func (t *Txn) queue(topic string, queueId int32) *txnQueue {
	k := queueKey{topic, queueId}
	if q, ok := t.queues[k]; ok {
		return q
	}
	if t.queues == nil {
		t.queues = make(map[queueKey]*txnQueue)
	}
	q := &txnQueue{}
	if st := t.s.queue(topic, queueId); st != nil {
		q.min, q.next = st.min.Load(), st.max.Load()
	}
	t.queues[k] = q
	return q
}

// AppendMessage stores record as the next message of (topic, queueId). It
// assigns queueOffset (the queue's next offset, counting earlier appends in
// this Txn) and physicalOffset (a per-broker byte position: the previous
// physical offset plus the previous record's length, monotonic across
// restarts), writes both big-endian into record in place at bytes 20 and 28,
// and stores a copy of it plus a physical-offset index entry. record must be
// a RocketMQ stored-message record whose TOTALSIZE equals len(record) and
// whose QUEUEID equals queueId; STORETIMESTAMP (used by retention and
// SearchOffsetByTimestamp) is taken as given. The offsets become visible to
// readers (MaxOffset, ReadMessages) only after Commit succeeds.
// Errors: ErrBadName, ErrBadRecord, ErrTxnDone.
func (t *Txn) AppendMessage(topic string, queueId int32, record []byte) (queueOffset, physicalOffset int64, err error) {
	if err := t.check(); err != nil {
		return 0, 0, err
	}
	if err := checkName("topic", topic); err != nil {
		return 0, 0, err
	}
	if err := checkRecord(record, queueId); err != nil {
		return 0, 0, err
	}
	t.lockSerial()
	q := t.queue(topic, queueId)
	queueOffset, physicalOffset = q.next, t.phys
	patchOffsets(record, queueOffset, physicalOffset)
	mk := messageKey(nil, topic, queueId, queueOffset)
	t.wb.PutCF(t.s.cfMessages(), mk, record)
	t.wb.PutCF(t.s.cfMessages(), physKey(physicalOffset), mk)
	prev := *q
	prevPhys, prevUsed := t.phys, t.physUsed
	t.journal(func() { *q = prev; t.phys, t.physUsed = prevPhys, prevUsed })
	q.next++
	q.dirty, q.appended = true, true
	t.phys += int64(len(record))
	t.physUsed = true
	return queueOffset, physicalOffset, nil
}

// MaxOffset is Store.MaxOffset as seen by this Txn (counting its appends).
func (t *Txn) MaxOffset(topic string, queueId int32) int64 {
	if q, ok := t.queues[queueKey{topic, queueId}]; ok {
		return q.next
	}
	return t.s.MaxOffset(topic, queueId)
}

// PutCheckpoint writes ck under ck.Key (replacing any record with that key).
// Errors: ErrBadName, ErrTxnDone.
func (t *Txn) PutCheckpoint(ck Checkpoint) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := ck.Key.validate(); err != nil {
		return err
	}
	key := ck.Key.Bytes()
	t.scratch = ck.appendValue(t.scratch[:0])
	t.wb.PutCF(t.s.cfPop(), key, t.scratch)
	t.setCk(string(key), ckOverlay{ck: ck, present: true})
	return nil
}

// DeleteCheckpoint deletes the record with key k; deleting a missing key is
// not an error (ACK is blind, as in RocketMQ). Errors: ErrBadName,
// ErrTxnDone.
func (t *Txn) DeleteCheckpoint(k CheckpointKey) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := k.validate(); err != nil {
		return err
	}
	key := k.Bytes()
	t.wb.DeleteCF(t.s.cfPop(), key)
	t.setCk(string(key), ckOverlay{ck: Checkpoint{Key: k}})
	return nil
}

// ReplaceCheckpoint is CHANGE_INVISIBLE_TIME's write: put ck, then delete
// old, in this Txn (so in one WriteBatch). When old equals ck.Key the delete
// is skipped, so the new record survives (RocketMQ PR #10277).
// Errors: as PutCheckpoint.
func (t *Txn) ReplaceCheckpoint(old CheckpointKey, ck Checkpoint) error {
	if err := t.PutCheckpoint(ck); err != nil {
		return err
	}
	if old == ck.Key {
		return nil
	}
	return t.DeleteCheckpoint(old)
}

func (t *Txn) setCk(key string, v ckOverlay) {
	if t.cks == nil {
		t.cks = make(map[string]ckOverlay)
	}
	prev, had := t.cks[key]
	t.journal(func() {
		if had {
			t.cks[key] = prev
		} else {
			delete(t.cks, key)
		}
	})
	t.cks[key] = v
}

// GetCheckpoint reads the record with key k through this Txn's writes, then
// the database. Blocks on RocksDB when k was not written in this Txn.
func (t *Txn) GetCheckpoint(k CheckpointKey) (Checkpoint, bool, error) {
	if err := t.check(); err != nil {
		return Checkpoint{}, false, err
	}
	if v, ok := t.cks[string(k.Bytes())]; ok {
		if !v.present {
			return Checkpoint{}, false, nil
		}
		return v.ck, true, nil
	}
	return t.s.Checkpoint(k)
}

// SetConsumerOffset commits the consume offset of
// (consumerGroup, topic, queueId), in the same WriteBatch as the op's
// checkpoints. Errors: ErrBadName, ErrTxnDone.
func (t *Txn) SetConsumerOffset(group, topic string, queueId int32, offset int64) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := checkName("group", group); err != nil {
		return err
	}
	if err := checkName("topic", topic); err != nil {
		return err
	}
	t.wb.PutCF(t.s.cfOffsets(), offsetKey(group, topic, queueId), binary.BigEndian.AppendUint64(t.scratch[:0], uint64(offset)))
	t.setOffset(offsetID{group, topic, queueId}, offsetOverlay{off: offset, present: true})
	return nil
}

// DeleteConsumerOffset removes a committed consume offset (missing is fine).
func (t *Txn) DeleteConsumerOffset(group, topic string, queueId int32) error {
	if err := t.check(); err != nil {
		return err
	}
	t.wb.DeleteCF(t.s.cfOffsets(), offsetKey(group, topic, queueId))
	t.setOffset(offsetID{group, topic, queueId}, offsetOverlay{})
	return nil
}

func (t *Txn) setOffset(id offsetID, v offsetOverlay) {
	if t.offsets == nil {
		t.offsets = make(map[offsetID]offsetOverlay)
	}
	prev, had := t.offsets[id]
	t.journal(func() {
		if had {
			t.offsets[id] = prev
		} else {
			delete(t.offsets, id)
		}
	})
	t.offsets[id] = v
}

// ConsumerOffset is Store.ConsumerOffset seen through this Txn's writes.
func (t *Txn) ConsumerOffset(group, topic string, queueId int32) (int64, bool) {
	if v, ok := t.offsets[offsetID{group, topic, queueId}]; ok {
		return v.off, v.present
	}
	return t.s.ConsumerOffset(group, topic, queueId)
}

// PutMetaValue stores a small free-form value under name in the meta column
// family (for example the revive cursor). Read it back with Store.MetaValue.
func (t *Txn) PutMetaValue(name string, value []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	t.wb.PutCF(t.s.cfMeta(), []byte(metaUserPrefix+name), value)
	return nil
}

// PutTopic creates or replaces a topic's metadata. Errors: ErrBadName,
// ErrTxnDone.
func (t *Txn) PutTopic(m TopicMeta) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := checkName("topic", m.TopicName); err != nil {
		return err
	}
	v, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("popstore: encode topic: %w", err)
	}
	t.lockSerial()
	t.wb.PutCF(t.s.cfMeta(), []byte(metaTopicPrefix+m.TopicName), v)
	m = m.clone()
	t.setTopic(m.TopicName, &m)
	return nil
}

func (t *Txn) setTopic(name string, m *TopicMeta) {
	if t.topics == nil {
		t.topics = make(map[string]*TopicMeta)
	}
	prev, had := t.topics[name]
	t.journal(func() {
		if had {
			t.topics[name] = prev
		} else {
			delete(t.topics, name)
		}
	})
	t.topics[name] = m
}

// Topic is Store.Topic seen through this Txn's writes.
func (t *Txn) Topic(name string) (TopicMeta, bool) {
	if m, ok := t.topics[name]; ok {
		if m == nil {
			return TopicMeta{}, false
		}
		return m.clone(), true
	}
	return t.s.Topic(name)
}

// PutGroup creates or replaces a consumer group's metadata. Errors:
// ErrBadName, ErrTxnDone.
func (t *Txn) PutGroup(g GroupMeta) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := checkName("group", g.GroupName); err != nil {
		return err
	}
	v, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("popstore: encode group: %w", err)
	}
	t.lockSerial()
	t.wb.PutCF(t.s.cfMeta(), []byte(metaGroupPrefix+g.GroupName), v)
	g = g.clone()
	t.setGroup(g.GroupName, &g)
	return nil
}

// DeleteGroup removes a consumer group's metadata (its consumer offsets
// stay). Deleting a missing group is not an error.
func (t *Txn) DeleteGroup(name string) error {
	if err := t.check(); err != nil {
		return err
	}
	t.lockSerial()
	t.wb.DeleteCF(t.s.cfMeta(), []byte(metaGroupPrefix+name))
	t.setGroup(name, nil)
	return nil
}

func (t *Txn) setGroup(name string, g *GroupMeta) {
	if t.groups == nil {
		t.groups = make(map[string]*GroupMeta)
	}
	prev, had := t.groups[name]
	t.journal(func() {
		if had {
			t.groups[name] = prev
		} else {
			delete(t.groups, name)
		}
	})
	t.groups[name] = g
}

// Group is Store.Group seen through this Txn's writes.
func (t *Txn) Group(name string) (GroupMeta, bool) {
	if g, ok := t.groups[name]; ok {
		if g == nil {
			return GroupMeta{}, false
		}
		return g.clone(), true
	}
	return t.s.Group(name)
}
