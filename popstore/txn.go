package popstore

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"sync"
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
	b      batchRep
	done   bool
	inOp   bool
	serial bool // holds s.serialMu
	undo   []func()

	phys     int64 // next physical offset; valid when serial
	physUsed bool
	// timerDelta is the change of the timer entry count (PutTimer,
	// DeleteTimer); timersUsed: persist it. Valid when serial.
	timerDelta int64
	timersUsed bool
	// half is the Txn's view of half messages (halves.go); nil until used.
	half *txnHalves
	// idx is the newest key-index entry written (indexMessage).
	idx     indexMark
	queues  map[queueKey]*txnQueue
	ckLog   []ckOverlay           // checkpoint writes in order
	ckIdx   map[CheckpointKey]int // key → last ckLog index; built on first GetCheckpoint
	ckMark  int                   // len(ckLog) when the current op started
	offsets map[offsetID]offsetOverlay
	orders  map[offsetID]orderOverlay // orderly-POP leases (order.go)
	topics  map[string]*TopicMeta     // nil value: deleted
	groups  map[string]*GroupMeta     // nil value: deleted
	gver    groupsVersion             // valid when gverSet: the group table version after this Txn
	gverSet bool
	scratch []byte
	// clogRecs are the records bound for the commit log (commitlog.go),
	// clogBytes their total length; Commit writes them before the
	// WriteBatch, from the callers' own record buffers.
	clogRecs  []clogRec
	clogBytes int
	ref       [refLen]byte
}

type txnQueue struct {
	min, next int64
	dirty     bool // state must be persisted and published
	appended  bool // tell the AppendListener
	reset     bool // queue removed by DeleteTopic earlier in this Txn
}

type ckOverlay struct {
	ck      Checkpoint // Key always set; the rest only when present
	present bool
	// delta is what the write does to the in-flight count of the key's
	// (group, topic) (inflight.go): +1 put, −1 delete, 0 for the put of
	// a ReplaceCheckpoint that keeps its key.
	delta int8
}

type offsetOverlay struct {
	off     int64
	present bool
}

// Begin starts a Txn. Called by the batch writer; any goroutine.
func (s *Store) Begin() *Txn {
	t := &Txn{s: s}
	if bufs, ok := txnBufPool.Get().(*txnBufs); ok {
		t.b = batchRep{rep: bufs.rep[:0], recs: bufs.recs[:0], sorted: bufs.sorted[:0], order: bufs.order[:0]}
		t.ckLog = bufs.ckLog[:0]
		t.clogRecs = bufs.clogRecs[:0]
	}
	return t
}

// txnBufs are a finished Txn's buffers, reused by the next Begin so the
// writer does not reallocate (and page-fault) them for every batch.
type txnBufs struct {
	rep, sorted []byte
	recs, order []recRef
	ckLog       []ckOverlay
	clogRecs    []clogRec
}

var txnBufPool sync.Pool

// maxPooledRep: larger buffers (big message batches) are left to the GC.
const maxPooledRep = 8 << 20

func (t *Txn) recycle() {
	if cap(t.b.rep) <= maxPooledRep && cap(t.b.sorted) <= maxPooledRep {
		clear(t.ckLog)    // drop string references
		clear(t.clogRecs) // and the callers' records
		bufs := &txnBufs{rep: t.b.rep, sorted: t.b.sorted, recs: t.b.recs, order: t.b.order, ckLog: t.ckLog, clogRecs: t.clogRecs}
		txnBufPool.Put(bufs)
	}
	t.b, t.ckLog, t.ckIdx, t.clogRecs, t.clogBytes = batchRep{}, nil, nil, nil, 0
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
	mark := t.b.mark()
	clogMark, clogBytesMark := len(t.clogRecs), t.clogBytes
	t.inOp = true
	t.undo = t.undo[:0]
	t.ckMark = len(t.ckLog)
	defer func() {
		if r := recover(); r != nil {
			t.s.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("apply function panicked")
			err = fmt.Errorf("%w: %v", ErrApplyPanic, r)
		}
		t.inOp = false
		if err != nil {
			t.b.rollback(mark)
			clear(t.clogRecs[clogMark:])
			t.clogRecs, t.clogBytes = t.clogRecs[:clogMark], clogBytesMark
			if len(t.ckLog) > t.ckMark {
				t.ckLog = t.ckLog[:t.ckMark]
				t.ckIdx = nil // rebuilt on demand
			}
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
// and stores it (in the commit log when it has at least
// Options.CommitLogMinBytes bytes, a reference in RocksDB) plus a
// physical-offset index entry (for a commit-log record only when it is the
// first of the batch or the batch stays inline) and, unless
// Options.DisableMessageIndex, its key-index entries (index.go). record must be
// a RocketMQ stored-message record whose TOTALSIZE equals len(record) and
// whose QUEUEID equals queueId; STORETIMESTAMP (used by retention and
// SearchOffsetByTimestamp) is taken as given. The offsets become visible to
// readers (MaxOffset, ReadMessages) only after Commit succeeds. A record
// bound for the commit log is written from record itself at Commit (no
// copy is taken), so the caller must not change record's bytes until
// Commit or Discard has returned.
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
	if len(record) >= t.s.clogMin {
		// Only the first record bound for the commit log gets a
		// physical-offset index entry here (the batch's marker); the others
		// are found in the commit log itself (commitLogRecord), or get
		// theirs in Commit if the batch stays inline after all.
		if len(t.clogRecs) == 0 {
			t.b.put(cfiMessages, physKey(physicalOffset), mk)
		}
		t.clogRecs = append(t.clogRecs, clogRec{phys: physicalOffset, b: record, rec: t.b.count()})
		t.clogBytes += len(record)
		t.b.put(cfiMessages, mk, putRef(&t.ref, physicalOffset, len(record)))
	} else {
		t.b.put(cfiMessages, mk, record)
		t.b.put(cfiMessages, physKey(physicalOffset), mk)
	}
	prev := *q
	prevPhys, prevUsed := t.phys, t.physUsed
	prevIdx := t.idx
	t.journal(func() { *q = prev; t.phys, t.physUsed = prevPhys, prevUsed; t.idx = prevIdx })
	if !t.s.noIndex {
		t.indexMessage(topic, record, physicalOffset)
	}
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
// Set ck.PhysicalOffset (NoPhysicalOffset when unknown). Errors:
// ErrBadName, ErrTxnDone.
func (t *Txn) PutCheckpoint(ck Checkpoint) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := ck.Key.validate(); err != nil {
		return err
	}
	t.scratch = ck.Key.AppendTo(t.scratch[:0])
	n := len(t.scratch)
	t.scratch = ck.appendValue(t.scratch)
	t.b.put(cfiPop, t.scratch[:n], t.scratch[n:])
	t.setCk(ckOverlay{ck: ck, present: true, delta: 1})
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
	t.scratch = k.AppendTo(t.scratch[:0])
	t.b.del(cfiPop, t.scratch)
	t.setCk(ckOverlay{ck: Checkpoint{Key: k}, delta: -1})
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
		t.ckLog[len(t.ckLog)-1].delta = 0 // the record replaces itself
		return nil
	}
	return t.DeleteCheckpoint(old)
}

// setCk records a checkpoint write for reads through the Txn. Rollback
// truncates the log (Do), so no undo entry is needed.
func (t *Txn) setCk(v ckOverlay) {
	t.ckLog = append(t.ckLog, v)
	if t.ckIdx != nil {
		t.ckIdx[v.ck.Key] = len(t.ckLog) - 1
	}
}

// GetCheckpoint reads the record with key k through this Txn's writes, then
// the database. Blocks on RocksDB when k was not written in this Txn.
func (t *Txn) GetCheckpoint(k CheckpointKey) (Checkpoint, bool, error) {
	if err := t.check(); err != nil {
		return Checkpoint{}, false, err
	}
	if t.ckIdx == nil && len(t.ckLog) > 0 {
		t.ckIdx = make(map[CheckpointKey]int, len(t.ckLog))
		for i, v := range t.ckLog {
			t.ckIdx[v.ck.Key] = i
		}
	}
	if i, ok := t.ckIdx[k]; ok {
		v := t.ckLog[i]
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
	t.b.put(cfiOffsets, offsetKey(group, topic, queueId), binary.BigEndian.AppendUint64(t.scratch[:0], uint64(offset)))
	t.setOffset(offsetID{group, topic, queueId}, offsetOverlay{off: offset, present: true})
	return nil
}

// DeleteConsumerOffset removes a committed consume offset (missing is fine).
func (t *Txn) DeleteConsumerOffset(group, topic string, queueId int32) error {
	if err := t.check(); err != nil {
		return err
	}
	t.b.del(cfiOffsets, offsetKey(group, topic, queueId))
	t.setOffset(offsetID{group, topic, queueId}, offsetOverlay{})
	return nil
}

func (t *Txn) setOffset(id offsetID, v offsetOverlay) { setOverlay(t, &t.offsets, id, v) }

// setOverlay records v as the Txn's view of id in *m (made on first use),
// journalled so that a failed op restores the previous entry (or its
// absence). Consumer offsets and orderly leases share it.
func setOverlay[V any](t *Txn, m *map[offsetID]V, id offsetID, v V) {
	if *m == nil {
		*m = make(map[offsetID]V)
	}
	mm := *m
	prev, had := mm[id]
	t.journal(func() {
		if had {
			mm[id] = prev
		} else {
			delete(mm, id)
		}
	})
	mm[id] = v
}

// ConsumerOffset is Store.ConsumerOffset seen through this Txn's writes.
func (t *Txn) ConsumerOffset(group, topic string, queueId int32) (int64, bool) {
	if v, ok := t.offsets[offsetID{group, topic, queueId}]; ok {
		return v.off, v.present
	}
	return t.s.ConsumerOffset(group, topic, queueId)
}
