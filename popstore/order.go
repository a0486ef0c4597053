package popstore

import (
	"encoding/binary"
	"fmt"
)

// metaOrderPrefix starts every orderly-POP lease key in the meta column
// family: "o/" group 0x00 topic 0x00 queueId(u32 BE).
const metaOrderPrefix = "o/"

// MaxOrderOffsets is the most queue offsets one orderly lease holds: the
// acked set is a 64-bit mask, as the commitOffsetBit of RocketMQ's
// ConsumerOrderInfoManager.OrderInfo. POP returns at most 32 messages.
const MaxOrderOffsets = 64

// OrderState is the orderly-POP lease of one (consumerGroup, topic,
// queueId): what the last orderly POP of that queue returned and what was
// acked since (broker/.../offset/ConsumerOrderInfoManager.java OrderInfo).
// It is written in the same WriteBatch as the POP's reply-making write (and
// by orderly ACK / CHANGE / BATCH_ACK), so it is exactly as durable as the
// replies that depend on it. Values are immutable once stored: every change
// builds a new OrderState (new slices), so readers may keep one.
type OrderState struct {
	AttemptID     string // attemptId of the POP that took the lease; "" none
	PopTime       int64  // broker clock of that POP, Unix ms (receipt field 1)
	InvisibleTime int64  // its invisibleTime, ms
	// Offsets are the queue offsets it returned, ascending (≤ MaxOrderOffsets).
	Offsets []int64
	// VisibleAt[i] is when Offsets[i] may be popped again (Unix ms): PopTime
	// + InvisibleTime, or the deadline a CHANGE set.
	VisibleAt []int64
	// Counts[i] is how many earlier orderly POPs returned Offsets[i] (the
	// reconsumeTimes the client sees, orderCountInfo).
	Counts []int32
	// Acked has bit i set when Offsets[i] was acked.
	Acked uint64
}

// Clone returns a deep copy (slices not shared). Any goroutine.
func (o OrderState) Clone() OrderState {
	o.Offsets = append([]int64(nil), o.Offsets...)
	o.VisibleAt = append([]int64(nil), o.VisibleAt...)
	o.Counts = append([]int32(nil), o.Counts...)
	return o
}

// orderValueVersion is the first byte of an encoded OrderState.
const orderValueVersion = 1

// encodeOrderState: version(u8) popTime(i64) invisibleTime(i64) acked(u64)
// n(u16) n × [offset(i64) visibleAt(i64) count(i32)] attemptLen(u16) attempt.
func encodeOrderState(o *OrderState) []byte {
	b := make([]byte, 0, 1+8+8+8+2+len(o.Offsets)*20+2+len(o.AttemptID))
	b = append(b, orderValueVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(o.PopTime))
	b = binary.BigEndian.AppendUint64(b, uint64(o.InvisibleTime))
	b = binary.BigEndian.AppendUint64(b, o.Acked)
	b = binary.BigEndian.AppendUint16(b, uint16(len(o.Offsets)))
	for i, off := range o.Offsets {
		b = binary.BigEndian.AppendUint64(b, uint64(off))
		b = binary.BigEndian.AppendUint64(b, uint64(o.VisibleAt[i]))
		b = binary.BigEndian.AppendUint32(b, uint32(o.Counts[i]))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(o.AttemptID)))
	return append(b, o.AttemptID...)
}

func decodeOrderState(v []byte) (OrderState, error) {
	var o OrderState
	if len(v) < 27 || v[0] != orderValueVersion {
		return o, fmt.Errorf("popstore: corrupt order state (%d bytes)", len(v))
	}
	o.PopTime = int64(binary.BigEndian.Uint64(v[1:]))
	o.InvisibleTime = int64(binary.BigEndian.Uint64(v[9:]))
	o.Acked = binary.BigEndian.Uint64(v[17:])
	n := int(binary.BigEndian.Uint16(v[25:]))
	p := 27
	if n > MaxOrderOffsets || len(v) < p+n*20+2 {
		return o, fmt.Errorf("popstore: corrupt order state (%d offsets, %d bytes)", n, len(v))
	}
	o.Offsets, o.VisibleAt, o.Counts = make([]int64, n), make([]int64, n), make([]int32, n)
	for i := range n {
		o.Offsets[i] = int64(binary.BigEndian.Uint64(v[p:]))
		o.VisibleAt[i] = int64(binary.BigEndian.Uint64(v[p+8:]))
		o.Counts[i] = int32(binary.BigEndian.Uint32(v[p+16:]))
		p += 20
	}
	al := int(binary.BigEndian.Uint16(v[p:]))
	p += 2
	if len(v) != p+al {
		return o, fmt.Errorf("popstore: corrupt order state attemptId (%d bytes left, %d expected)", len(v)-p, al)
	}
	o.AttemptID = string(v[p:])
	return o, nil
}

// orderKey is metaOrderPrefix group 0x00 topic 0x00 queueId(u32 BE).
func orderKey(group, topic string, queueId int32) []byte {
	k := make([]byte, 0, len(metaOrderPrefix)+len(group)+len(topic)+6)
	k = append(k, metaOrderPrefix...)
	k = append(k, group...)
	k = append(k, 0)
	return appendQueuePrefix(k, topic, queueId)
}

// parseOrderKey is the inverse of orderKey.
func parseOrderKey(k []byte) (group, topic string, queueId int32, ok bool) {
	if len(k) < len(metaOrderPrefix) {
		return "", "", 0, false
	}
	return parseOffsetKey(k[len(metaOrderPrefix):])
}

// orderOverlay is a Txn's pending write of one lease.
type orderOverlay struct {
	st      OrderState
	present bool
}

// PutOrderState stores the orderly lease of (group, topic, queueId) in the
// Txn's WriteBatch; it is published (Store.OrderState) after the synced
// write. st must hold ≤ MaxOrderOffsets offsets with VisibleAt and Counts
// of the same length; it must not be modified afterwards.
// Errors: ErrBadName, ErrTxnDone, or a malformed st.
func (t *Txn) PutOrderState(group, topic string, queueId int32, st OrderState) error {
	if err := t.check(); err != nil {
		return err
	}
	if err := checkName("group", group); err != nil {
		return err
	}
	if err := checkName("topic", topic); err != nil {
		return err
	}
	if n := len(st.Offsets); n > MaxOrderOffsets || len(st.VisibleAt) != n || len(st.Counts) != n || len(st.AttemptID) > 0xffff {
		return fmt.Errorf("popstore: malformed order state (%d offsets, %d deadlines, %d counts)", n, len(st.VisibleAt), len(st.Counts))
	}
	t.b.put(cfiMeta, orderKey(group, topic, queueId), encodeOrderState(&st))
	t.setOrder(offsetID{group, topic, queueId}, orderOverlay{st: st, present: true})
	return nil
}

// DeleteOrderState removes the orderly lease of (group, topic, queueId)
// (missing is fine). Errors: ErrTxnDone.
func (t *Txn) DeleteOrderState(group, topic string, queueId int32) error {
	if err := t.check(); err != nil {
		return err
	}
	t.b.del(cfiMeta, orderKey(group, topic, queueId))
	t.setOrder(offsetID{group, topic, queueId}, orderOverlay{})
	return nil
}

func (t *Txn) setOrder(id offsetID, v orderOverlay) { setOverlay(t, &t.orders, id, v) }

// OrderState is Store.OrderState seen through this Txn's writes.
func (t *Txn) OrderState(group, topic string, queueId int32) (OrderState, bool) {
	if v, ok := t.orders[offsetID{group, topic, queueId}]; ok {
		return v.st, v.present
	}
	return t.s.OrderState(group, topic, queueId)
}

// OrderState returns the durable orderly lease of (group, topic, queueId)
// and whether one exists. In-memory copy kept in sync by commits (loaded at
// Open): safe on the event loop. The result must not be modified.
func (s *Store) OrderState(group, topic string, queueId int32) (OrderState, bool) {
	s.mu.RLock()
	st, ok := s.orders[offsetID{group, topic, queueId}]
	s.mu.RUnlock()
	return st, ok
}

// OrderLease names one stored orderly lease (OrderStates).
type OrderLease struct {
	Group, Topic string
	QueueID      int32
	State        OrderState
}

// OrderStates returns every stored orderly lease (start-up: the broker
// schedules the wake-ups of blocked queues). In-memory; any goroutine.
func (s *Store) OrderStates() []OrderLease {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]OrderLease, 0, len(s.orders))
	for id, st := range s.orders {
		out = append(out, OrderLease{Group: id.group, Topic: id.topic, QueueID: id.queueId, State: st})
	}
	return out
}

// deleteTopicOrders drops the leases of topic name (DeleteTopic).
func (t *Txn) deleteTopicOrders(name string) {
	var ids []offsetID
	t.s.mu.RLock()
	for id := range t.s.orders {
		if id.topic == name {
			ids = append(ids, id)
		}
	}
	t.s.mu.RUnlock()
	for id := range t.orders {
		if id.topic == name {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		t.b.del(cfiMeta, orderKey(id.group, id.topic, id.queueId))
		t.setOrder(id, orderOverlay{})
	}
}
