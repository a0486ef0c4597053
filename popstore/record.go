package popstore

import (
	"encoding/binary"
	"fmt"
)

// Byte positions in RocketMQ's stored-message record (the commit-log
// layout written by store/.../CommitLog.java and read by
// common/.../message/MessageDecoder.java). All integers big-endian.
const (
	recTotalSize   = 0  // int32, length of the whole record
	recQueueId     = 12 // int32
	recQueueOffset = 20 // int64, patched by AppendMessage
	recPhysOffset  = 28 // int64, patched by AppendMessage
	recSysFlag     = 36 // int32
	recBornHost    = 48 // 8 bytes (IPv4+port) or 20 (IPv6+port), see sysFlag
	// sysFlagBornHostV6 is MessageSysFlag.BORNHOST_V6_FLAG.
	sysFlagBornHostV6 = 1 << 4
	// recMinLen covers the fields up to and including STORETIMESTAMP of an
	// IPv4 record.
	recMinLen = recBornHost + 8 + 8
)

// checkRecord validates the fixed header of a stored-message record.
func checkRecord(rec []byte, queueId int32) error {
	if len(rec) < recMinLen {
		return fmt.Errorf("%w: %d bytes, need at least %d", ErrBadRecord, len(rec), recMinLen)
	}
	if n := int(int32(binary.BigEndian.Uint32(rec[recTotalSize:]))); n != len(rec) {
		return fmt.Errorf("%w: TOTALSIZE %d but %d bytes", ErrBadRecord, n, len(rec))
	}
	if q := int32(binary.BigEndian.Uint32(rec[recQueueId:])); q != queueId {
		return fmt.Errorf("%w: QUEUEID %d but appended to queue %d", ErrBadRecord, q, queueId)
	}
	if storeTimestampPos(rec)+8 > len(rec) {
		return fmt.Errorf("%w: %d bytes, too short for an IPv6 born host", ErrBadRecord, len(rec))
	}
	return nil
}

// storeTimestampPos returns where STORETIMESTAMP starts in rec.
func storeTimestampPos(rec []byte) int {
	sys := binary.BigEndian.Uint32(rec[recSysFlag:])
	if sys&sysFlagBornHostV6 != 0 {
		return recBornHost + 20
	}
	return recBornHost + 8
}

// StoreTimestamp returns the STORETIMESTAMP field (Unix ms) of a stored
// record, or ok=false when the record is too short to hold it. It only reads
// rec.
func StoreTimestamp(rec []byte) (tsMillis int64, ok bool) {
	if len(rec) < recMinLen {
		return 0, false
	}
	p := storeTimestampPos(rec)
	if p+8 > len(rec) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(rec[p:])), true
}

// RecordPhysicalOffset returns the PHYSICALOFFSET field of a stored record
// (its commit-log offset in bytes, at byte 28: MessageDecoder.java's
// PHYSICALOFFSET_POSITION), or ok=false when the record is too short to
// hold it. It only reads rec; any goroutine.
func RecordPhysicalOffset(rec []byte) (phys int64, ok bool) {
	if len(rec) < recPhysOffset+8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(rec[recPhysOffset:])), true
}

// patchOffsets writes queueOffset and physicalOffset into rec in place.
func patchOffsets(rec []byte, queueOffset, phys int64) {
	binary.BigEndian.PutUint64(rec[recQueueOffset:], uint64(queueOffset))
	binary.BigEndian.PutUint64(rec[recPhysOffset:], uint64(phys))
}
