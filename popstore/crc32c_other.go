//go:build !(linux && amd64)

package popstore

// CRC32CStats reports whether RocksDB's CRC32C runs on the CPU's CRC32
// instruction and how many times RocksDB has called it: off this platform
// popshim does not replace librocksdb's rocksdb::crc32c::Extend
// (crc32c_linux_amd64.go), so always false, 0. Any goroutine.
func CRC32CStats() (hardware bool, calls uint64) { return false, 0 }
