package popstore

import (
	"encoding/binary"
	"fmt"

	"github.com/linxGnu/grocksdb"
)

// Timer entries (delay-level and timer messages waiting for their time)
// live in the messages column family under their own prefix:
//
//	0x00 'T' dueMillis(u64 BE) physicalOffset(u64 BE) → stored-message record
//
// so a scan in key order is a scan by due time, like the checkpoint scan of
// revive. The physical offset is allocated from the same counter as message
// appends (it is the entry's offsetMsgId) and makes keys unique. The count
// of entries is kept in meta "s/timers", written in the same WriteBatch as
// the entries it counts.
var timerPrefix = []byte{0x00, 'T'}

// metaTimersKey holds the number of timer entries (i64).
const metaTimersKey = "s/timers"

// TimerKey names one timer entry.
type TimerKey struct {
	// DueMillis is when the message is due (broker clock, Unix ms).
	DueMillis int64
	// PhysicalOffset is the offset allocated to the entry by PutTimer.
	PhysicalOffset int64
}

// Timer is one durable timer entry as ScanTimers returns it.
type Timer struct {
	Key TimerKey
	// Record is the stored-message record (a copy owned by the caller) with
	// the topic and queue it is delivered to; its PHYSICALOFFSET is
	// Key.PhysicalOffset.
	Record []byte
}

func timerKey(due, phys int64) []byte {
	k := make([]byte, 0, len(timerPrefix)+16)
	k = append(k, timerPrefix...)
	k = binary.BigEndian.AppendUint64(k, uint64(max(due, 0)))
	return binary.BigEndian.AppendUint64(k, uint64(phys))
}

// PutTimer stores record as a timer entry due at dueMillis. It allocates a
// physical offset (as AppendMessage does, so offsetMsgIds stay unique),
// writes it into record in place at byte 28 (QUEUEOFFSET is left as
// given) and returns it. record must be a stored-message record whose
// QUEUEID equals queueId, the queue it is delivered to. Nothing is
// appended to any queue. Errors: ErrBadRecord, ErrTxnDone.
func (t *Txn) PutTimer(dueMillis int64, queueId int32, record []byte) (physicalOffset int64, err error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if err := checkRecord(record, queueId); err != nil {
		return 0, err
	}
	t.lockSerial()
	physicalOffset = t.phys
	binary.BigEndian.PutUint64(record[recPhysOffset:], uint64(physicalOffset))
	tk := timerKey(dueMillis, physicalOffset)
	t.b.put(cfiMessages, tk, record)
	t.b.put(cfiMessages, physKey(physicalOffset), tk)
	prevPhys, prevUsed, prevDelta := t.phys, t.physUsed, t.timerDelta
	t.journal(func() { t.phys, t.physUsed, t.timerDelta = prevPhys, prevUsed, prevDelta })
	t.phys += int64(len(record))
	t.physUsed = true
	t.timerDelta++
	t.timersUsed = true
	return physicalOffset, nil
}

// DeleteTimer removes a timer entry (a cancelled or dropped one) and its
// physical-offset index entry. The caller must know it is present
// (the single delivery loop deletes only entries its scan returned and
// waits for each write before scanning again): the pending count is
// decremented unconditionally. Errors: ErrTxnDone.
func (t *Txn) DeleteTimer(k TimerKey) error {
	if err := t.check(); err != nil {
		return err
	}
	t.lockSerial()
	t.b.del(cfiMessages, physKey(k.PhysicalOffset))
	t.deleteTimer(k)
	return nil
}

// DeliverTimer appends record (the delivered form of the timer entry k) to
// (topic, queueId) as AppendMessage does, removes the entry, and points
// the entry's physical offset at the delivered message, so the offsetMsgId
// its SEND answered still finds the message (VIEW_MESSAGE_BY_ID), as a
// Java broker still finds the SCHEDULE_TOPIC_XXXX record there. Returns
// the delivered message's queueOffset and physicalOffset. Errors: those
// of AppendMessage (then nothing is removed), ErrTxnDone.
func (t *Txn) DeliverTimer(k TimerKey, topic string, queueId int32, record []byte) (queueOffset, physicalOffset int64, err error) {
	if queueOffset, physicalOffset, err = t.AppendMessage(topic, queueId, record); err != nil {
		return 0, 0, err
	}
	alias := messageKey(nil, topic, queueId, queueOffset)
	alias = binary.BigEndian.AppendUint64(alias, uint64(physicalOffset))
	t.b.put(cfiMessages, physKey(k.PhysicalOffset), alias)
	t.deleteTimer(k)
	return queueOffset, physicalOffset, nil
}

// deleteTimer removes the entry k and counts it off. REQUIRES: t checked,
// lockSerial held.
func (t *Txn) deleteTimer(k TimerKey) {
	t.b.del(cfiMessages, timerKey(k.DueMillis, k.PhysicalOffset))
	prevDelta := t.timerDelta
	t.journal(func() { t.timerDelta = prevDelta })
	t.timerDelta--
	t.timersUsed = true
}

// PendingTimers returns the number of durable timer entries. Lock-free;
// safe on an event loop.
func (s *Store) PendingTimers() int64 { return s.timers.Load() }

// ScanTimers returns durable timer entries at or after from (key order:
// due time, then physical offset) due at or before toDueMillis, in due
// order, at most limit of them and, past the first, at most maxBytes of
// records. from lets the caller start past the entries it has delivered,
// whose deletions RocksDB keeps as tombstones until compaction: a scan
// from the start of the range would step over all of them every time.
// Blocks on RocksDB: call from the timer goroutine. Errors: ErrClosed,
// RocksDB errors, ErrBadRecord for a malformed key.
func (s *Store) ScanTimers(from TimerKey, toDueMillis int64, limit, maxBytes int) ([]Timer, error) {
	if !s.readGuard() {
		return nil, s.guardErr()
	}
	defer s.readDone()
	if limit <= 0 || toDueMillis < 0 {
		return nil, nil
	}
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(timerKey(toDueMillis+1, 0))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	var out []Timer
	bytes := 0
	for it.Seek(timerKey(from.DueMillis, from.PhysicalOffset)); it.Valid() && len(out) < limit && (len(out) == 0 || bytes < maxBytes); it.Next() {
		k, err := parseTimerKey(it.Key().Data())
		if err != nil {
			return out, err
		}
		rec := append([]byte(nil), it.Value().Data()...)
		bytes += len(rec)
		out = append(out, Timer{Key: k, Record: rec})
	}
	if err := it.Err(); err != nil {
		return out, fmt.Errorf("popstore: scan timers: %w", err)
	}
	return out, nil
}

// NextTimerDue returns the due time of the earliest durable timer entry at
// or after from (see ScanTimers), ok=false when there is none. Blocks on
// RocksDB (one seek).
func (s *Store) NextTimerDue(from TimerKey) (dueMillis int64, ok bool, err error) {
	if !s.readGuard() {
		return 0, false, s.guardErr()
	}
	defer s.readDone()
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(prefixLimit(timerPrefix))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	it.Seek(timerKey(from.DueMillis, from.PhysicalOffset))
	if !it.Valid() {
		if err := it.Err(); err != nil {
			return 0, false, fmt.Errorf("popstore: seek timers: %w", err)
		}
		return 0, false, nil
	}
	k, err := parseTimerKey(it.Key().Data())
	if err != nil {
		return 0, false, err
	}
	return k.DueMillis, true, nil
}

func parseTimerKey(k []byte) (TimerKey, error) {
	if len(k) != len(timerPrefix)+16 || k[0] != timerPrefix[0] || k[1] != timerPrefix[1] {
		return TimerKey{}, fmt.Errorf("%w: timer key %x", ErrBadRecord, k)
	}
	return TimerKey{DueMillis: int64(binary.BigEndian.Uint64(k[2:])), PhysicalOffset: int64(binary.BigEndian.Uint64(k[10:]))}, nil
}

// After returns the smallest key ordered after k (the next physical
// offset at the same due time): where a scan resumes past k.
func (k TimerKey) After() TimerKey {
	return TimerKey{DueMillis: k.DueMillis, PhysicalOffset: k.PhysicalOffset + 1}
}
