package popstore

import (
	"encoding/binary"
	"fmt"
	"math"
)

// CheckpointKey names one in-flight POP delivery: one queueOffset of one
// (consumerGroup, topic, queueId), due to become visible again at
// VisibleAtMillis. Encoded as in RocketMQ's POP KV store
// (broker/.../pop/PopConsumerRecord.java, getKeyBytes):
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

// AppendTo appends the key encoding of k to dst and returns the result.
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

// Bytes returns a fresh key encoding of k.
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

// DecodeCheckpointKey parses a key. It copies the strings, so b may be
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
	// PhysicalOffset is the physical offset (Txn.AppendMessage's
	// physicalOffset, bytes) of the delivered message, so revive can tell
	// that the queue offset now holds another message (a deleted and
	// re-created topic, docs/SCENARIOS.md REV-07). NoPhysicalOffset when
	// unknown. Note that the zero value names physical offset 0: writers
	// must set the field.
	PhysicalOffset int64
	// AttemptId is the POP request's attemptId, empty for records written by
	// CHANGE or revive.
	AttemptId string
}

// NoPhysicalOffset is Checkpoint.PhysicalOffset when the delivered
// message's physical offset is unknown (records of format version 1).
const NoPhysicalOffset int64 = -1

// Checkpoint value format versions (the first byte of every value).
const (
	checkpointValueV1 = 1 // fixed-width, before PhysicalOffset; decoded only
	checkpointValueV2 = 2 // current
)

// Flag bits of a version 2 value; other bits are invalid.
const (
	ckFlagSuspend  = 1 << 0
	ckFlagPhysical = 1 << 1
	ckFlagsKnown   = ckFlagSuspend | ckFlagPhysical
)

// appendValue encodes the non-key fields (format version 2):
//
//	version u8 (2) | flags u8 (bit0 suspend, bit1 physicalOffset present) |
//	retryFlag u8 | popTime varint | invisibleTime varint |
//	reviveQid varint | attemptTimes varint |
//	[physicalOffset uvarint, when bit1] | attemptIdLen uvarint | attemptId
//
// varint is encoding/binary's zig-zag signed varint, uvarint the unsigned
// one (both little-endian base-128). A typical record is about 20 bytes.
func (c *Checkpoint) appendValue(dst []byte) []byte {
	var flags byte
	if c.Suspend {
		flags |= ckFlagSuspend
	}
	if c.PhysicalOffset >= 0 {
		flags |= ckFlagPhysical
	}
	dst = append(dst, checkpointValueV2, flags, c.RetryFlag)
	dst = binary.AppendVarint(dst, c.PopTimeMillis)
	dst = binary.AppendVarint(dst, c.InvisibleTimeMillis)
	dst = binary.AppendVarint(dst, int64(c.ReviveQid))
	dst = binary.AppendVarint(dst, int64(c.AttemptTimes))
	if c.PhysicalOffset >= 0 {
		dst = binary.AppendUvarint(dst, uint64(c.PhysicalOffset))
	}
	dst = binary.AppendUvarint(dst, uint64(len(c.AttemptId)))
	return append(dst, c.AttemptId...)
}

// decodeValue fills the non-key fields from v (copied). Errors wrap
// ErrBadRecord: unknown version or flag bits, truncated or overlong
// varints, values out of range, a length that does not match, trailing
// bytes.
func (c *Checkpoint) decodeValue(v []byte) error {
	if len(v) == 0 {
		return fmt.Errorf("%w: empty checkpoint value", ErrBadRecord)
	}
	switch v[0] {
	case checkpointValueV2:
		return c.decodeV2(v)
	case checkpointValueV1:
		return c.decodeV1(v)
	}
	return fmt.Errorf("%w: checkpoint value version %d", ErrBadRecord, v[0])
}

// valueReader consumes a version 2 value; the first error sticks.
type valueReader struct {
	b   []byte
	err error
}

func (r *valueReader) varint(name string, lo, hi int64) int64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Varint(r.b)
	if n <= 0 || x < lo || x > hi {
		r.err = fmt.Errorf("%w: checkpoint %s: bad varint", ErrBadRecord, name)
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *valueReader) uvarint(name string, hi uint64) uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 || x > hi {
		r.err = fmt.Errorf("%w: checkpoint %s: bad uvarint", ErrBadRecord, name)
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (c *Checkpoint) decodeV2(v []byte) error {
	if len(v) < 3 {
		return fmt.Errorf("%w: checkpoint value of %d bytes", ErrBadRecord, len(v))
	}
	flags := v[1]
	if flags&^ckFlagsKnown != 0 {
		return fmt.Errorf("%w: checkpoint flags %#x", ErrBadRecord, flags)
	}
	r := valueReader{b: v[3:]}
	c.RetryFlag = v[2]
	c.Suspend = flags&ckFlagSuspend != 0
	c.PopTimeMillis = r.varint("popTime", math.MinInt64, math.MaxInt64)
	c.InvisibleTimeMillis = r.varint("invisibleTime", math.MinInt64, math.MaxInt64)
	c.ReviveQid = int32(r.varint("reviveQid", math.MinInt32, math.MaxInt32))
	c.AttemptTimes = int32(r.varint("attemptTimes", math.MinInt32, math.MaxInt32))
	c.PhysicalOffset = NoPhysicalOffset
	if flags&ckFlagPhysical != 0 {
		c.PhysicalOffset = int64(r.uvarint("physicalOffset", math.MaxInt64))
	}
	n := r.uvarint("attemptId length", uint64(len(v)))
	if r.err != nil {
		return r.err
	}
	if uint64(len(r.b)) != n {
		return fmt.Errorf("%w: checkpoint attemptId of %d bytes, %d left", ErrBadRecord, n, len(r.b))
	}
	c.AttemptId = string(r.b)
	return nil
}

// decodeV1 reads the fixed-width version 1 layout (data directories written
// before PhysicalOffset existed): version u8 | popTime i64 | invisibleTime
// i64 | reviveQid i32 | retryFlag u8 | attemptTimes i32 | flags u8 |
// attemptIdLen u16 | attemptId, big-endian. PhysicalOffset is unknown.
func (c *Checkpoint) decodeV1(v []byte) error {
	if len(v) < 29 || len(v) != 29+int(binary.BigEndian.Uint16(v[27:])) {
		return fmt.Errorf("%w: version 1 checkpoint value of %d bytes", ErrBadRecord, len(v))
	}
	c.PopTimeMillis = int64(binary.BigEndian.Uint64(v[1:]))
	c.InvisibleTimeMillis = int64(binary.BigEndian.Uint64(v[9:]))
	c.ReviveQid = int32(binary.BigEndian.Uint32(v[17:]))
	c.RetryFlag = v[21]
	c.AttemptTimes = int32(binary.BigEndian.Uint32(v[22:]))
	c.Suspend = v[26]&1 != 0
	c.PhysicalOffset = NoPhysicalOffset
	c.AttemptId = string(v[29:])
	return nil
}
