package popstore

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// Half messages (transactional messages waiting for END_TRANSACTION, see
// broker/transaction) live in the messages column family under two
// prefixes of their own, next to the timers:
//
//	0x00 'H' physicalOffset(u64 BE)                 → half value (below)
//	0x00 'h' dueMillis(u64 BE) physicalOffset(u64 BE) → empty: the check index
//
// The physical offset is allocated from the same counter as message
// appends, so the half's offsetMsgId (store host + physical offset) is
// unique and END_TRANSACTION, whose commitLogOffset the client decodes
// from it, finds the half with one point read. No message key and no
// physical-offset index entry ('P') names a half: POP, PULL, offsets,
// VIEW_MESSAGE_BY_ID and the key index never see it. The due index
// orders halves by the time the check-back loop next looks at them, so
// its pass is a range scan, like the timers'.
//
// The value is: state(u8) | seq(u64) | dueMillis(u64) | checks(u32)
// | groupLen(u16) | producerGroup | stored-message record. state is 1 for
// a half waiting for its decision and 2 for a discarded one: moved to
// TRANS_CHECK_MAX_TIME_TOPIC by the check-back loop but kept, as Java's
// commit log keeps it, so that a late END_TRANSACTION still finds it;
// its dueMillis is then when it expires. seq is the
// tranStateTableOffset (a per-broker counter, meta "s/halfseq", written in
// the same WriteBatch), also written into the record's QUEUEOFFSET; the
// record's PHYSICALOFFSET is the key's. The number of halves is kept in
// meta "s/halves" the same way, so both survive a crash with the halves
// they describe. Discarded halves are not counted.
var (
	halfPrefix    = []byte{0x00, 'H'}
	halfDuePrefix = []byte{0x00, 'h'}
)

// Meta keys of the half-message counters (i64 each).
const (
	metaHalfSeqKey = "s/halfseq" // next tranStateTableOffset
	metaHalvesKey  = "s/halves"  // number of half messages
)

// The first byte of a half value: its state.
const (
	halfStateWaiting   = 1
	halfStateDiscarded = 2
)

// halfHeaderLen is the fixed part of a half value before the group bytes.
const halfHeaderLen = 1 + 8 + 8 + 4 + 2

// Half is one stored half message.
type Half struct {
	// PhysicalOffset is the commitLogOffset allocated by PutHalf: the key,
	// and with the store host the offsetMsgId of the SEND reply.
	PhysicalOffset int64
	// Seq is the tranStateTableOffset allocated by PutHalf (0, 1, 2, …
	// per broker): the SEND reply's queueOffset.
	Seq int64
	// DueMillis is when the check-back loop next looks at the half (broker
	// clock, Unix ms): its next check, or for a Discarded half its expiry.
	DueMillis int64
	// Discarded is set by DiscardHalf: the half was moved to
	// TRANS_CHECK_MAX_TIME_TOPIC and is kept only for a late
	// END_TRANSACTION until DueMillis. It is never checked again and not
	// counted by PendingHalves.
	Discarded bool
	// Checks counts the CHECK_TRANSACTION_STATE rounds made so far.
	Checks int32
	// ProducerGroup is the group END_TRANSACTION must name (PGROUP).
	ProducerGroup string
	// Record is the stored-message record as given to PutHalf, with
	// QUEUEOFFSET = Seq and PHYSICALOFFSET = PhysicalOffset. Owned by the
	// caller when returned by a read.
	Record []byte
}

// HalfDue names one entry of the due index: where a ScanHalves resumes.
type HalfDue struct {
	DueMillis      int64 // broker clock, Unix ms
	PhysicalOffset int64
}

// After returns the smallest due-index key ordered after k.
func (k HalfDue) After() HalfDue {
	return HalfDue{DueMillis: k.DueMillis, PhysicalOffset: k.PhysicalOffset + 1}
}

// Due returns the due-index key of h.
func (h *Half) Due() HalfDue {
	return HalfDue{DueMillis: h.DueMillis, PhysicalOffset: h.PhysicalOffset}
}

func halfKey(phys int64) []byte {
	k := make([]byte, 0, len(halfPrefix)+8)
	k = append(k, halfPrefix...)
	return binary.BigEndian.AppendUint64(k, uint64(phys))
}

func halfDueKey(due, phys int64) []byte {
	k := make([]byte, 0, len(halfDuePrefix)+16)
	k = append(k, halfDuePrefix...)
	k = binary.BigEndian.AppendUint64(k, uint64(max(due, 0)))
	return binary.BigEndian.AppendUint64(k, uint64(phys))
}

func parseHalfDueKey(k []byte) (HalfDue, error) {
	if len(k) != len(halfDuePrefix)+16 || k[0] != halfDuePrefix[0] || k[1] != halfDuePrefix[1] {
		return HalfDue{}, fmt.Errorf("%w: half due key %x", ErrBadRecord, k)
	}
	return HalfDue{DueMillis: int64(binary.BigEndian.Uint64(k[2:])), PhysicalOffset: int64(binary.BigEndian.Uint64(k[10:]))}, nil
}

// appendHalfValue encodes h (without its PhysicalOffset, which is the key).
func appendHalfValue(dst []byte, h *Half) []byte {
	state := byte(halfStateWaiting)
	if h.Discarded {
		state = halfStateDiscarded
	}
	dst = append(dst, state)
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Seq))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.DueMillis))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Checks))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(h.ProducerGroup)))
	dst = append(dst, h.ProducerGroup...)
	return append(dst, h.Record...)
}

// decodeHalfValue is the inverse of appendHalfValue; Record aliases v.
func decodeHalfValue(phys int64, v []byte) (Half, error) {
	if len(v) < halfHeaderLen || (v[0] != halfStateWaiting && v[0] != halfStateDiscarded) {
		return Half{}, fmt.Errorf("%w: half value of %d bytes", ErrBadRecord, len(v))
	}
	h := Half{PhysicalOffset: phys, Discarded: v[0] == halfStateDiscarded,
		Seq:       int64(binary.BigEndian.Uint64(v[1:])),
		DueMillis: int64(binary.BigEndian.Uint64(v[9:])),
		Checks:    int32(binary.BigEndian.Uint32(v[17:])),
	}
	n := int(binary.BigEndian.Uint16(v[21:]))
	if len(v) < halfHeaderLen+n {
		return Half{}, fmt.Errorf("%w: half value of %d bytes, group of %d", ErrBadRecord, len(v), n)
	}
	h.ProducerGroup = string(v[halfHeaderLen : halfHeaderLen+n])
	h.Record = v[halfHeaderLen+n:]
	return h, nil
}

// halfState is the store's committed half-message counters. Written by
// publish under serialMu (seq) and read lock-free (count).
type halfState struct {
	nextSeq int64 // REQUIRES: serialMu
	count   atomic.Int64
}

// txnHalves is a Txn's view of the halves it wrote: the overlay read by
// GetHalf and the counters Commit persists. Valid while serial is held.
type txnHalves struct {
	m       map[int64]halfOverlay
	nextSeq int64 // next Seq to allocate
	seqUsed bool  // nextSeq must be persisted
	delta   int64 // change of the half count
	used    bool  // delta must be persisted
}

// halfOverlay is the last write of one half in the Txn (present false:
// deleted).
type halfOverlay struct {
	h       Half
	present bool
}

// halves returns the Txn's half view, taking the serial lock (the
// counters are serial state).
func (t *Txn) halves() *txnHalves {
	t.lockSerial()
	if t.half == nil {
		t.half = &txnHalves{nextSeq: t.s.half.nextSeq}
	}
	return t.half
}

// setHalf records the Txn's view of one half, journalled for Do's
// rollback.
func (t *Txn) setHalf(hs *txnHalves, phys int64, v halfOverlay) {
	if hs.m == nil {
		hs.m = make(map[int64]halfOverlay)
	}
	prev, had := hs.m[phys]
	prevSeq, prevSeqUsed, prevDelta, prevUsed := hs.nextSeq, hs.seqUsed, hs.delta, hs.used
	t.journal(func() {
		if had {
			hs.m[phys] = prev
		} else {
			delete(hs.m, phys)
		}
		hs.nextSeq, hs.seqUsed, hs.delta, hs.used = prevSeq, prevSeqUsed, prevDelta, prevUsed
	})
	hs.m[phys] = v
}

// PutHalf stores record as a new half message of producer group group,
// due for its first check at dueMillis. It allocates a physical offset (as
// AppendMessage does) and the next Seq, writes them into record in place
// (PHYSICALOFFSET, byte 28; QUEUEOFFSET, byte 20) and returns them.
// record must be a stored-message record (TOTALSIZE = its length);
// nothing is appended to any queue. Errors: ErrBadName (group empty or
// holding 0x00 or '@'), ErrBadRecord, ErrTxnDone.
func (t *Txn) PutHalf(group string, dueMillis int64, record []byte) (physicalOffset, seq int64, err error) {
	if err := t.check(); err != nil {
		return 0, 0, err
	}
	if err := checkName("group", group); err != nil {
		return 0, 0, err
	}
	if len(group) > 0xffff {
		return 0, 0, fmt.Errorf("%w: group of %d bytes", ErrBadName, len(group))
	}
	if len(record) < recMinLen {
		return 0, 0, fmt.Errorf("%w: %d bytes, need at least %d", ErrBadRecord, len(record), recMinLen)
	}
	if err := checkRecord(record, int32(binary.BigEndian.Uint32(record[recQueueId:]))); err != nil {
		return 0, 0, err
	}
	hs := t.halves()
	h := Half{PhysicalOffset: t.phys, Seq: hs.nextSeq, DueMillis: dueMillis, ProducerGroup: group, Record: record}
	patchOffsets(record, h.Seq, h.PhysicalOffset)
	prevPhys, prevUsed := t.phys, t.physUsed
	t.journal(func() { t.phys, t.physUsed = prevPhys, prevUsed })
	t.setHalf(hs, h.PhysicalOffset, halfOverlay{h: h, present: true})
	t.scratch = appendHalfValue(t.scratch[:0], &h)
	t.b.put(cfiMessages, halfKey(h.PhysicalOffset), t.scratch)
	t.b.put(cfiMessages, halfDueKey(h.DueMillis, h.PhysicalOffset), nil)
	t.phys += int64(len(record))
	t.physUsed = true
	hs.nextSeq++
	hs.seqUsed = true
	hs.delta++
	hs.used = true
	return h.PhysicalOffset, h.Seq, nil
}

// GetHalf reads the half at physicalOffset through this Txn's writes,
// then the database; ok=false when there is none (never written, already
// decided, or discarded and expired). A discarded half is returned with
// Discarded set. The returned Record must not be modified. Blocks on
// RocksDB when the half was not written in this Txn. Errors: ErrTxnDone,
// ErrBadRecord (corrupt value), RocksDB errors.
func (t *Txn) GetHalf(physicalOffset int64) (Half, bool, error) {
	if err := t.check(); err != nil {
		return Half{}, false, err
	}
	if t.half != nil {
		if v, ok := t.half.m[physicalOffset]; ok {
			return v.h, v.present, nil
		}
	}
	return t.s.Half(physicalOffset)
}

// DeleteHalf removes the half at physicalOffset, waiting or discarded,
// and its due-index entry (rollback, the second half of CommitHalf, the
// expiry of a discarded half). found=false when there is none: nothing is
// written. Errors: as GetHalf.
func (t *Txn) DeleteHalf(physicalOffset int64) (found bool, err error) {
	h, ok, err := t.GetHalf(physicalOffset)
	if err != nil || !ok {
		return false, err
	}
	hs := t.halves()
	t.setHalf(hs, physicalOffset, halfOverlay{h: Half{PhysicalOffset: physicalOffset}})
	t.b.del(cfiMessages, halfKey(physicalOffset))
	t.b.del(cfiMessages, halfDueKey(h.DueMillis, physicalOffset))
	if !h.Discarded {
		hs.delta--
		hs.used = true
	}
	return true, nil
}

// DiscardHalf marks the waiting half at physicalOffset discarded (the
// check-back loop moved a copy to TRANS_CHECK_MAX_TIME_TOPIC) and keeps it
// until expireMillis (broker clock, Unix ms), when the loop's scan finds
// it due and deletes it; until then END_TRANSACTION still commits or rolls
// it back. It leaves PendingHalves. found=false when there is no waiting
// half there: nothing is written. Errors: as GetHalf.
func (t *Txn) DiscardHalf(physicalOffset, expireMillis int64) (found bool, err error) {
	h, ok, err := t.GetHalf(physicalOffset)
	if err != nil || !ok || h.Discarded {
		return false, err
	}
	old := h.DueMillis
	h.Discarded, h.DueMillis = true, expireMillis
	hs := t.rewriteHalf(&h, old)
	hs.delta--
	hs.used = true
	return true, nil
}

// rewriteHalf writes h (changed from a half whose due time was oldDue)
// over the stored one and moves its due-index entry when the due time
// changed; it returns the Txn's half view.
func (t *Txn) rewriteHalf(h *Half, oldDue int64) *txnHalves {
	hs := t.halves()
	t.setHalf(hs, h.PhysicalOffset, halfOverlay{h: *h, present: true})
	t.scratch = appendHalfValue(t.scratch[:0], h)
	t.b.put(cfiMessages, halfKey(h.PhysicalOffset), t.scratch)
	if oldDue != h.DueMillis {
		t.b.del(cfiMessages, halfDueKey(oldDue, h.PhysicalOffset))
		t.b.put(cfiMessages, halfDueKey(h.DueMillis, h.PhysicalOffset), nil)
	}
	return hs
}

// CommitHalf appends record to (topic, queueId) as AppendMessage does and
// removes the half at halfPhysicalOffset with its due-index entry, in this
// Txn (so in one WriteBatch): END_TRANSACTION's commit, and the move of a
// half past its check limit. found=false when there is no such half:
// nothing is written. record is the message to deliver (the caller
// converts the half's record); its QUEUEID must be queueId. Errors: as
// AppendMessage and GetHalf.
func (t *Txn) CommitHalf(halfPhysicalOffset int64, topic string, queueId int32, record []byte) (queueOffset, physicalOffset int64, found bool, err error) {
	if _, ok, err := t.GetHalf(halfPhysicalOffset); err != nil || !ok {
		return 0, 0, false, err
	}
	if queueOffset, physicalOffset, err = t.AppendMessage(topic, queueId, record); err != nil {
		return 0, 0, true, err
	}
	if _, err := t.DeleteHalf(halfPhysicalOffset); err != nil {
		return 0, 0, true, err
	}
	return queueOffset, physicalOffset, true, nil
}

// UpdateHalfCheck records one more check round of the half at
// physicalOffset: its check count becomes checks and its due time
// dueMillis (the due-index entry moves). found=false when there is no
// waiting half there: nothing is written. Errors: as GetHalf.
func (t *Txn) UpdateHalfCheck(physicalOffset int64, checks int32, dueMillis int64) (found bool, err error) {
	h, ok, err := t.GetHalf(physicalOffset)
	if err != nil || !ok || h.Discarded {
		return false, err
	}
	old := h.DueMillis
	h.Checks, h.DueMillis = checks, dueMillis
	t.rewriteHalf(&h, old)
	return true, nil
}

// persistHalves adds the half counters changed by this Txn to its batch
// (Commit). REQUIRES: serial when t.half != nil.
func (t *Txn) persistHalves() {
	if t.half == nil {
		return
	}
	if t.half.seqUsed {
		t.b.put(cfiMeta, []byte(metaHalfSeqKey), putInt64(t.half.nextSeq))
	}
	if t.half.used {
		t.b.put(cfiMeta, []byte(metaHalvesKey), putInt64(t.s.half.count.Load()+t.half.delta))
	}
}

// publishHalves makes the committed counters the store's.
// REQUIRES: serial when t.half != nil.
func (t *Txn) publishHalves() {
	if t.half == nil {
		return
	}
	if t.half.seqUsed {
		t.s.half.nextSeq = t.half.nextSeq
	}
	if t.half.used {
		t.s.half.count.Add(t.half.delta)
	}
}
