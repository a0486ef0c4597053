//go:build linux && amd64

package popstore_test

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"

	"github.com/popshim/popshim/popstore"
)

// The interposed rocksdb::crc32c::Extend returns what librocksdb's own
// and Go's Castagnoli CRC return, for any length, alignment and running
// value: files written before and after it read back the same.
func TestCRC32CMatchesCastagnoli(t *testing.T) {
	require.Equal(t, uint32(0xE3069283), popstore.CRC32CExtend(0, []byte("123456789")), "the CRC-32C check value")
	tab := crc32.MakeTable(crc32.Castagnoli)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 70000)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for i := 0; i < 2000; i++ {
		off := rng.IntN(16)
		n := rng.IntN(len(buf) - off)
		if i%4 == 0 {
			n = rng.IntN(40) // short tails: the byte loop
		}
		b := buf[off : off+n]
		init := rng.Uint32()
		if i%3 == 0 {
			init = 0
		}
		got := popstore.CRC32CExtend(init, b)
		require.Equal(t, crc32.Update(init, tab, b), got, "len %d off %d init %#x", n, off, init)
		lib, ok := popstore.CRC32CLibrary(init, b)
		require.True(t, ok, "librocksdb's own Extend is found behind the interposed one")
		require.Equal(t, lib, got, "len %d off %d init %#x", n, off, init)
		if i%10 == 0 {
			require.Equal(t, got, popstore.CRC32CPortable(init, b), "the bitwise fallback, len %d", n)
		}
	}
	require.Equal(t, crc32.Update(0, tab, nil), popstore.CRC32CExtend(0, nil))
}

// RocksDB's own writes and reads (WAL records, table blocks, blob
// records) go through the interposed Extend, on the CRC32 instruction
// when the CPU has SSE4.2, and a store written with it reopens and reads
// back.
func TestRocksDBUsesInterposedCRC32C(t *testing.T) {
	hw, before := popstore.CRC32CStats()
	require.Equal(t, cpu.X86.HasSSE42, hw)
	dir := t.TempDir()
	s, err := popstore.Open(popstore.Options{Dir: dir, RetentionMillis: -1, CommitLogMinBytes: -1})
	require.NoError(t, err)
	appendBodies(t, s, "crc", 0, 3, 4096, 1)
	_, after := popstore.CRC32CStats()
	require.Greater(t, after, before, "the synced write's WAL record was checksummed by the interposed Extend")
	require.NoError(t, s.Close())
	require.Positive(t, blobFiles(t, dir), "the flush at close wrote the bodies to a blob file")
	_, closed := popstore.CRC32CStats()
	require.Greater(t, closed, after, "the flush's table blocks and blob records too")

	s, err = popstore.Open(popstore.Options{Dir: dir, RetentionMillis: -1, CommitLogMinBytes: -1})
	require.NoError(t, err)
	defer s.Close()
	requireBodies(t, s, "crc", []int{4096, 4096, 4096})
	_, read := popstore.CRC32CStats()
	require.Greater(t, read, closed, "reads check the blob records' checksums through it")
}
