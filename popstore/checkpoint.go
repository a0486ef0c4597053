package popstore

import (
	"encoding/binary"
	"fmt"
)

// CheckpointKey names one in-flight POP delivery: one queueOffset of one
// (consumerGroup, topic, queueId), due to become visible again at
// VisibleAtMillis. Encoded as in RocketMQ's POP KV store
// (broker/.../pop/PopConsumerRecord.java, pop-kv-semantics §2.2):
//
//	visibleAt(i64 BE) group '@' topic '@' queueId(u32 BE) '@' queueOffset(u64 BE)
//
// so keys sort by visibility instant first and revive is a range scan.
// Length = 23 + len(Group) + len(Topic) bytes. queueId is stored as a full
// 32-bit value. Topic is the topic actually read: the normal topic or the
// retry topic name for retry messages.
type CheckpointKey struct {
	VisibleAtMillis int64 // popTime + invisibleTime, broker clock, Unix ms
	Group           string
	Topic           string
	QueueId         int32
	QueueOffset     int64
}

// AppendTo appends the §2.2 encoding of k to dst and returns the result.
// It does not validate names; PutCheckpoint does.
func (k CheckpointKey) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(k.VisibleAtMillis))
	dst = append(dst, k.Group...)
	dst = append(dst, '@')
	dst = append(dst, k.Topic...)
	dst = append(dst, '@')
	dst = binary.BigEndian.AppendUint32(dst, uint32(k.QueueId))
	dst = append(dst, '@')
	return binary.BigEndian.AppendUint64(dst, uint64(k.QueueOffset))
}

// Bytes returns a fresh §2.2 encoding of k.
func (k CheckpointKey) Bytes() []byte {
	return k.AppendTo(make([]byte, 0, 23+len(k.Group)+len(k.Topic)))
}

// validate reports ErrBadName for names that would make the key ambiguous.
func (k CheckpointKey) validate() error {
	if err := checkName("group", k.Group); err != nil {
		return err
	}
	return checkName("topic", k.Topic)
}

// DecodeCheckpointKey parses a §2.2 key. It copies the strings, so b may be
// reused afterwards. Errors wrap ErrBadRecord.
func DecodeCheckpointKey(b []byte) (CheckpointKey, error) {
	var k CheckpointKey
	if len(b) < 23 {
		return k, fmt.Errorf("%w: checkpoint key of %d bytes", ErrBadRecord, len(b))
	}
	k.VisibleAtMillis = int64(binary.BigEndian.Uint64(b))
	k.QueueOffset = int64(binary.BigEndian.Uint64(b[len(b)-8:]))
	if b[len(b)-9] != '@' || b[len(b)-14] != '@' {
		return k, fmt.Errorf("%w: checkpoint key separators", ErrBadRecord)
	}
	k.QueueId = int32(binary.BigEndian.Uint32(b[len(b)-13:]))
	names := b[8 : len(b)-14]
	for i, c := range names {
		if c == '@' {
			k.Group, k.Topic = string(names[:i]), string(names[i+1:])
			return k, nil
		}
	}
	return k, fmt.Errorf("%w: checkpoint key without group separator", ErrBadRecord)
}

// Checkpoint is the record of one in-flight delivery (RocketMQ's
// PopConsumerRecord). Key.VisibleAtMillis should equal PopTimeMillis +
// InvisibleTimeMillis; the store does not enforce it.
type Checkpoint struct {
	Key CheckpointKey
	// PopTimeMillis is the broker clock when the message was popped (or the
	// invisible time changed, or revive rescheduled it), Unix ms.
	PopTimeMillis int64
	// InvisibleTimeMillis is the requested invisibility, ms.
	InvisibleTimeMillis int64
	// ReviveQid is the reviveQid carried in the receipt handle (extraInfo):
	// 0 for normal pops, 999 (POP_ORDER_REVIVE_QUEUE) for FIFO.
	ReviveQid int32
	// RetryFlag: 0 normal topic, 1 retry topic v1 (%RETRY%group_topic),
	// 2 retry topic v2 (%RETRY%group+topic).
	RetryFlag uint8
	// AttemptTimes counts failed revive attempts (not redeliveries); revive
	// backs off by it and drops the record at 16.
	AttemptTimes int32
	// Suspend: the CHANGE that wrote this record asked not to bump
	// reconsumeTimes when it is revived.
	Suspend bool
	// AttemptId is the POP request's attemptId, empty for records written by
	// CHANGE or revive.
	AttemptId string
}

// checkpointValueVersion is the first byte of every encoded value.
const checkpointValueVersion = 1

// appendValue encodes the non-key fields:
//
//	version u8 | popTime i64 | invisibleTime i64 | reviveQid i32 |
//	retryFlag u8 | attemptTimes i32 | flags u8 (bit0 suspend) |
//	attemptIdLen u16 | attemptId
//
// All integers big-endian; 29 bytes + len(AttemptId).
func (c *Checkpoint) appendValue(dst []byte) []byte {
	dst = append(dst, checkpointValueVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.PopTimeMillis))
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.InvisibleTimeMillis))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.ReviveQid))
	dst = append(dst, c.RetryFlag)
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.AttemptTimes))
	var flags byte
	if c.Suspend {
		flags |= 1
	}
	dst = append(dst, flags)
	id := c.AttemptId
	if len(id) > 0xffff {
		id = id[:0xffff]
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(id)))
	return append(dst, id...)
}

// decodeValue fills the non-key fields from v (copied).
func (c *Checkpoint) decodeValue(v []byte) error {
	if len(v) < 29 || v[0] != checkpointValueVersion {
		return fmt.Errorf("%w: checkpoint value of %d bytes", ErrBadRecord, len(v))
	}
	c.PopTimeMillis = int64(binary.BigEndian.Uint64(v[1:]))
	c.InvisibleTimeMillis = int64(binary.BigEndian.Uint64(v[9:]))
	c.ReviveQid = int32(binary.BigEndian.Uint32(v[17:]))
	c.RetryFlag = v[21]
	c.AttemptTimes = int32(binary.BigEndian.Uint32(v[22:]))
	c.Suspend = v[26]&1 != 0
	n := int(binary.BigEndian.Uint16(v[27:]))
	if len(v) != 29+n {
		return fmt.Errorf("%w: checkpoint attemptId length %d in %d bytes", ErrBadRecord, n, len(v))
	}
	c.AttemptId = string(v[29:])
	return nil
}
