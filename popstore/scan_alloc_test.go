package popstore_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestReadSizedByItsRecords checks that a read of small records allocates
// about what it copies after reads of 4 MiB records elsewhere in the store,
// and at most about 1 MiB right after them in the same queue: one
// store-wide running record size sized the buffer, and each read of 32
// records of 97 bytes allocated 16 MiB (ReadMessages) or 32 MiB
// (ReadMessagesInto, a buffer too large for the broker's pool, so every
// POP allocated it again) until it decayed, by 1/8 per read.
func TestReadSizedByItsRecords(t *testing.T) {
	s, _ := popstoretest.Open(t, popstore.Options{})
	commit(t, s, func(tx *popstore.Txn) error {
		for _, topic := range []string{"Big", "Mixed"} {
			for range 4 {
				if _, _, err := tx.AppendMessage(topic, 0, popstoretest.Record(topic, 0, 1000, make([]byte, 4<<20))); err != nil {
					return err
				}
			}
		}
		for _, topic := range []string{"Small", "Mixed"} {
			for range 64 {
				if _, _, err := tx.AppendMessage(topic, 0, popstoretest.Record(topic, 0, 1000, []byte("x"))); err != nil {
					return err
				}
			}
		}
		return nil
	})
	allocated := func(read func() ([][]byte, int64, error)) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		recs, _, err := read()
		runtime.ReadMemStats(&b)
		require.NoError(t, err)
		require.Len(t, recs, 32)
		return b.TotalAlloc - a.TotalAlloc
	}
	readBig := func(topic string) {
		for i := range int64(4) {
			recs, _, err := s.ReadMessages(topic, 0, i, 1, 16<<20)
			require.NoError(t, err)
			require.Len(t, recs, 1)
		}
	}
	var rb popstore.ReadBuffer
	// rb as a POP finds it in the pool: grown by reads of small records.
	_, _, err := s.ReadMessagesInto(&rb, "Small", 0, 0, 32, 16<<20)
	require.NoError(t, err)
	for round := range 3 {
		readBig("Big")
		n := allocated(func() ([][]byte, int64, error) { return s.ReadMessages("Small", 0, 0, 32, 16<<20) })
		require.Less(t, n, uint64(64<<10), "round %d: ReadMessages of 32 x 97 bytes allocated %d bytes", round, n)
		n = allocated(func() ([][]byte, int64, error) { return s.ReadMessagesInto(&rb, "Small", 0, 32, 32, 16<<20) })
		require.Less(t, n, uint64(64<<10), "round %d: ReadMessagesInto of 32 x 97 bytes allocated %d bytes", round, n)
	}
	for round := range 3 {
		readBig("Mixed")
		from := 4 + int64(round%2)*32
		n := allocated(func() ([][]byte, int64, error) { return s.ReadMessages("Mixed", 0, from, 32, 16<<20) })
		require.Less(t, n, uint64(1<<20), "round %d: ReadMessages after 4 MiB records allocated %d bytes", round, n)
		readBig("Mixed")
		n = allocated(func() ([][]byte, int64, error) { return s.ReadMessagesInto(&rb, "Mixed", 0, from, 32, 16<<20) })
		require.Less(t, n, uint64(1<<20+64<<10), "round %d: ReadMessagesInto after 4 MiB records allocated %d bytes", round, n)
		require.LessOrEqual(t, rb.Cap(), 1<<20, "round %d: read buffer grown past what a POP pools", round)
	}
}
