package popstore_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/popstore/popstoretest"
)

// TestScanRangeMatchesIterator checks ReadMessages (one cgo call per
// buffer, scan.go) against a read through grocksdb's Iterator, over
// records in table files, blob files and the memtable, of sizes from a few
// bytes to beyond the blob threshold, for many (from, maxCount, maxBytes)
// and buffer-size guesses: too small (every record refills the buffer),
// about right, and far too large; each read also through ReadMessagesInto
// with one ReadBuffer reused across all of them. Once with every record in
// RocksDB, once with records of 500 bytes and more in the commit log, so
// that one scan meets both values and references.
func TestScanRangeMatchesIterator(t *testing.T) {
	for _, clogMin := range []int{-1, 500} {
		t.Run(fmt.Sprintf("commitLogMinBytes=%d", clogMin), func(t *testing.T) { scanMatchesIterator(t, clogMin) })
	}
}

func scanMatchesIterator(t *testing.T, clogMin int) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir(), CommitLogMinBytes: clogMin, CommitLogBatchMinBytes: -1})
	require.NoError(t, err)
	defer s.Close()
	sizes := []int{3, 700, 40, 2000, 1, 90, 512, 5000, 16, 300}
	add := func(from, n int) {
		commit(t, s, func(tx *popstore.Txn) error {
			for i := from; i < from+n; i++ {
				body := bytes.Repeat([]byte{byte('a' + i%26)}, sizes[i%len(sizes)])
				for q := int32(0); q < 2; q++ {
					if _, _, err := tx.AppendMessage("T", q, popstoretest.Record("T", q, 1000, body)); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	add(0, 25)
	require.NoError(t, s.FlushMemtables(true)) // table and blob files
	add(25, 15)                                // memtable
	var rb popstore.ReadBuffer
	for _, avg := range []int64{1, 0, 400, 1 << 20} {
		for _, from := range []int64{0, 7, 24, 25, 39, 40, 100} {
			for _, maxCount := range []int{1, 2, 5, 40} {
				// Budgets that end exactly at a record boundary, and one byte short.
				all, _, err := s.ReadMessagesByIterator("T", 1, from, maxCount, 1<<30)
				require.NoError(t, err)
				budgets := []int{-5, 0, 1, 100, 2500, 6000, 1 << 20}
				sum := 0
				for _, r := range all {
					sum += len(r)
					budgets = append(budgets, sum, sum-1)
				}
				for _, maxBytes := range budgets {
					s.SetRecordAvg("T", 1, avg)
					name := fmt.Sprintf("avg=%d from=%d count=%d bytes=%d", avg, from, maxCount, maxBytes)
					want, wantNext, err := s.ReadMessagesByIterator("T", 1, from, maxCount, maxBytes)
					require.NoError(t, err, name)
					got, gotNext, err := s.ReadMessages("T", 1, from, maxCount, maxBytes)
					require.NoError(t, err, name)
					require.Equal(t, wantNext, gotNext, name)
					require.Equal(t, len(want), len(got), name)
					for i := range want {
						require.True(t, bytes.Equal(want[i], got[i]), "%s: record %d", name, i)
						require.Equal(t, len(got[i]), cap(got[i]), "%s: record %d capacity not clipped", name, i)
					}
					// The same through one reused buffer (rb spans every case).
					s.SetRecordAvg("T", 1, avg)
					got, gotNext, err = s.ReadMessagesInto(&rb, "T", 1, from, maxCount, maxBytes)
					require.NoError(t, err, name)
					require.Equal(t, wantNext, gotNext, name)
					require.Equal(t, len(want), len(got), name)
					for i := range want {
						require.True(t, bytes.Equal(want[i], got[i]), "%s: reused buffer, record %d", name, i)
						require.Equal(t, len(got[i]), cap(got[i]), "%s: reused buffer, record %d capacity not clipped", name, i)
					}
				}
			}
		}
	}
}

// TestScanRangeOwned checks that the records ReadMessages returns are the
// caller's: appending to one does not reach the next, and later writes do
// not change them.
func TestScanRangeOwned(t *testing.T) {
	s, err := popstore.Open(popstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	appendN(t, s, "T", 0, 0, 3, 1000)
	recs, next, err := s.ReadMessages("T", 0, 0, 3, 1<<20)
	require.NoError(t, err)
	require.Equal(t, int64(3), next)
	second := bytes.Clone(recs[1])
	_ = append(recs[0], 0xFF, 0xFF, 0xFF, 0xFF)
	appendN(t, s, "T", 0, 3, 3, 1000)
	require.Equal(t, second, recs[1])
	require.Equal(t, "m1", string(popstoretest.Body(recs[1])))
}
