package codec

// Message sysFlag bits, carried in SEND headers (sysFlag / f) and in stored
// records (common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java).
const (
	SysFlagCompressed          int32 = 0x1   // body is compressed (type in bits 8–10)
	SysFlagMultiTags           int32 = 0x2   // topic filter type MULTI_TAG (set by the broker)
	SysFlagTransactionMask     int32 = 0xC   // transaction type bits
	SysFlagTransactionNotType  int32 = 0x0   // not transactional
	SysFlagTransactionPrepared int32 = 0x4   // half message
	SysFlagTransactionCommit   int32 = 0x8   // committed
	SysFlagTransactionRollback int32 = 0xC   // rolled back
	SysFlagBornHostV6          int32 = 0x10  // bornHost is IPv6 (16-byte address)
	SysFlagStoreHostV6         int32 = 0x20  // storeHost is IPv6 (16-byte address)
	SysFlagNeedUnwrap          int32 = 0x40  // inner-batch record to unwrap
	SysFlagInnerBatch          int32 = 0x80  // inner-batch record
	SysFlagCompressionTypeMask int32 = 0x700 // compression type, (flag & mask) >> 8
)

// Compression types in sysFlag bits 8–10 (common/.../compression/CompressionType.java).
const (
	CompressionZLIB int32 = 3 // also what 0 means (legacy); the only type Go clients decode
	CompressionLZ4  int32 = 1
	CompressionZSTD int32 = 2
)

// TransactionType returns sysFlag's transaction bits: one of
// SysFlagTransactionNotType, ...Prepared, ...Commit, ...Rollback.
func TransactionType(sysFlag int32) int32 { return sysFlag & SysFlagTransactionMask }

// SetTransactionType returns sysFlag with its transaction bits replaced by t.
func SetTransactionType(sysFlag, t int32) int32 {
	return sysFlag&^SysFlagTransactionMask | t&SysFlagTransactionMask
}

// IsCompressed reports whether the compressed bit is set.
func IsCompressed(sysFlag int32) bool { return sysFlag&SysFlagCompressed != 0 }

// CompressionType returns the compression codec of a compressed body:
// CompressionLZ4, CompressionZSTD or CompressionZLIB (value 0 reads as
// ZLIB, as in Java). Values 4–7 are returned as they are.
func CompressionType(sysFlag int32) int32 {
	t := (sysFlag & SysFlagCompressionTypeMask) >> 8
	if t == 0 {
		return CompressionZLIB
	}
	return t
}

// bornHostLen / storeHostLen are the encoded host sizes (address + int32
// port) selected by the IPv6 bits: 8 for IPv4, 20 for IPv6.
func bornHostLen(sysFlag int32) int {
	if sysFlag&SysFlagBornHostV6 != 0 {
		return 20
	}
	return 8
}

func storeHostLen(sysFlag int32) int {
	if sysFlag&SysFlagStoreHostV6 != 0 {
		return 20
	}
	return 8
}
