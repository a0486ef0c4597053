// Package popstoretest builds fixtures for tests of popstore, batch and
// handler: minimal but valid RocketMQ stored-message records and stores in
// temporary directories. Test code only.
package popstoretest

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/popshim/popshim/popstore"
)

// MagicV1 is RocketMQ's MESSAGE_MAGIC_CODE (MessageDecoder.java), V1 layout.
const MagicV1 = 0xdaa320a7

// Record returns an IPv4 stored-message record (CommitLog layout) for
// topic/queueId with the given STORETIMESTAMP (Unix ms) and body, no
// properties. QUEUEOFFSET and PHYSICALOFFSET are zero (AppendMessage fills
// them).
func Record(topic string, queueId int32, storeTsMillis int64, body []byte) []byte {
	n := 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + len(body) + 1 + len(topic) + 2
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, uint32(n))                // TOTALSIZE
	b = binary.BigEndian.AppendUint32(b, MagicV1)                  // MAGICCODE
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(body)) // BODYCRC
	b = binary.BigEndian.AppendUint32(b, uint32(queueId))          // QUEUEID
	b = binary.BigEndian.AppendUint32(b, 0)                        // FLAG
	b = binary.BigEndian.AppendUint64(b, 0)                        // QUEUEOFFSET
	b = binary.BigEndian.AppendUint64(b, 0)                        // PHYSICALOFFSET
	b = binary.BigEndian.AppendUint32(b, 0)                        // SYSFLAG
	b = binary.BigEndian.AppendUint64(b, uint64(storeTsMillis))    // BORNTIMESTAMP
	b = append(b, 127, 0, 0, 1, 0, 0, 0x27, 0x0f)                  // BORNHOST
	b = binary.BigEndian.AppendUint64(b, uint64(storeTsMillis))    // STORETIMESTAMP
	b = append(b, 127, 0, 0, 1, 0, 0, 0x2a, 0x9f)                  // STOREHOSTADDRESS
	b = binary.BigEndian.AppendUint32(b, 0)                        // RECONSUMETIMES
	b = binary.BigEndian.AppendUint64(b, 0)                        // PREPAREDTRANSACTIONOFFSET
	b = binary.BigEndian.AppendUint32(b, uint32(len(body)))        // BODY
	b = append(b, body...)
	b = append(b, byte(len(topic))) // TOPIC
	b = append(b, topic...)
	b = binary.BigEndian.AppendUint16(b, 0) // PROPERTIES
	return b
}

// Body returns the body of a record built by Record.
func Body(rec []byte) []byte {
	const bodyLenPos = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8
	n := int(binary.BigEndian.Uint32(rec[bodyLenPos:]))
	return rec[bodyLenPos+4 : bodyLenPos+4+n]
}

// QueueOffset reads QUEUEOFFSET (bytes 20–27, big-endian), patched by
// AppendMessage.
func QueueOffset(rec []byte) int64 { return int64(binary.BigEndian.Uint64(rec[20:])) }

// PhysicalOffset reads PHYSICALOFFSET (bytes 28–35, big-endian), patched by
// AppendMessage.
func PhysicalOffset(rec []byte) int64 { return int64(binary.BigEndian.Uint64(rec[28:])) }

// Open opens a store in a fresh t.TempDir() with opts (Dir is overwritten)
// and closes it at the end of the test unless the test closed it.
func Open(t testing.TB, opts popstore.Options) (*popstore.Store, string) {
	t.Helper()
	opts.Dir = t.TempDir()
	s, err := popstore.Open(opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, opts.Dir
}
