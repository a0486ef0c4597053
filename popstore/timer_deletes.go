package popstore

import (
	"encoding/binary"
	"fmt"

	"github.com/linxGnu/grocksdb"
)

// Timer deletion markers (a SEND carrying TIMER_DEL_UNIQKEY, or
// RECALL_MESSAGE) live in the messages column family beside the timers:
//
//	0x00 'D' slotMillis(u64 BE) deleteKey → dueMillis(u64 BE) physicalOffset(u64 BE)
//
// slotMillis is the timer slot the marker names (broker/timer.SlotOf of
// its delivery time) and deleteKey the TIMER_DEL_UNIQKEY value
// (`<topic>+<UNIQ_KEY>`), so the markers of the slots a delivery chunk
// covers are one range scan, and the ones whose slot has passed are a
// prefix to trim. The value keeps the marker's own delivery time and the
// physical offset allocated to it (its offsetMsgId). A marker does not
// count as a pending timer.
var timerDelPrefix = []byte{0x00, 'D'}

// TimerDelete is one durable deletion marker.
type TimerDelete struct {
	SlotMillis     int64  // the slot it applies to (Unix ms, broker clock)
	Key            string // TIMER_DEL_UNIQKEY: <topic>+<UNIQ_KEY>
	DueMillis      int64  // the marker's own delivery time
	PhysicalOffset int64  // allocated by PutTimerDelete
}

func timerDelKey(slot int64, key string) []byte {
	k := make([]byte, 0, len(timerDelPrefix)+8+len(key))
	k = append(k, timerDelPrefix...)
	k = binary.BigEndian.AppendUint64(k, uint64(max(slot, 0)))
	return append(k, key...)
}

// PutTimerDelete stores a deletion marker for key in slot slotMillis,
// due at dueMillis. It allocates a physical offset (one byte of the
// counter messages use, so offsetMsgIds stay unique) and returns it. A
// marker already stored for the same slot and key is replaced. Errors:
// ErrTxnDone.
func (t *Txn) PutTimerDelete(slotMillis, dueMillis int64, key string) (physicalOffset int64, err error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	t.lockSerial()
	physicalOffset = t.phys
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(dueMillis))
	v = binary.BigEndian.AppendUint64(v, uint64(physicalOffset))
	t.b.put(cfiMessages, timerDelKey(slotMillis, key), v)
	prevPhys, prevUsed := t.phys, t.physUsed
	t.journal(func() { t.phys, t.physUsed = prevPhys, prevUsed })
	t.phys++
	t.physUsed = true
	return physicalOffset, nil
}

// DeleteTimerDelete removes the marker of (slotMillis, key); removing one
// that does not exist is harmless. Errors: ErrTxnDone.
func (t *Txn) DeleteTimerDelete(slotMillis int64, key string) error {
	if err := t.check(); err != nil {
		return err
	}
	t.b.del(cfiMessages, timerDelKey(slotMillis, key))
	return nil
}

// ScanTimerDeletes returns durable markers whose slot is in [fromSlot,
// toSlot], in key order, at most limit of them. Blocks on RocksDB: call
// from the timer goroutine. Errors: ErrClosed, RocksDB errors,
// ErrBadRecord for a malformed entry.
func (s *Store) ScanTimerDeletes(fromSlot, toSlot int64, limit int) ([]TimerDelete, error) {
	if !s.readGuard() {
		return nil, s.guardErr()
	}
	defer s.readDone()
	if limit <= 0 || toSlot < fromSlot || toSlot < 0 {
		return nil, nil
	}
	ro := grocksdb.NewDefaultReadOptions()
	defer ro.Destroy()
	ro.SetIterateUpperBound(timerDelKey(toSlot+1, ""))
	it := s.db.NewIteratorCF(ro, s.cfMessages())
	defer it.Close()
	var out []TimerDelete
	for it.Seek(timerDelKey(fromSlot, "")); it.Valid() && len(out) < limit; it.Next() {
		k, v := it.Key().Data(), it.Value().Data()
		if len(k) < len(timerDelPrefix)+8 || len(v) != 16 {
			return out, fmt.Errorf("%w: timer delete %x", ErrBadRecord, k)
		}
		out = append(out, TimerDelete{
			SlotMillis:     int64(binary.BigEndian.Uint64(k[len(timerDelPrefix):])),
			Key:            string(k[len(timerDelPrefix)+8:]),
			DueMillis:      int64(binary.BigEndian.Uint64(v)),
			PhysicalOffset: int64(binary.BigEndian.Uint64(v[8:])),
		})
	}
	if err := it.Err(); err != nil {
		return out, fmt.Errorf("popstore: scan timer deletes: %w", err)
	}
	return out, nil
}
